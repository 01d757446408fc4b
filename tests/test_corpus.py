"""The committed card corpus (training/corpus) passes its checker: every card, and the totals."""

from __future__ import annotations

from pathlib import Path

import pytest

from prsum.grounding import Evidence
from training import check
from training.build import DATA_DIR, visible_card

CLONES = DATA_DIR / "clones"  # made by `python -m training.build` where the clones are


def test_every_card_and_the_corpus_totals_hold(capsys: pytest.CaptureFixture[str]) -> None:
    assert check.main([]) == 0, capsys.readouterr().out


def test_every_cited_name_occurs_in_its_pr(capsys: pytest.CaptureFixture[str]) -> None:
    if not CLONES.is_dir() or not any(CLONES.iterdir()):
        pytest.skip(
            "no clones of the corpus's repositories here (python -m training.build makes them)"
        )
    assert check.main(["--partial", "--clones", str(CLONES)]) == 0, capsys.readouterr().out


def test_the_checker_catches_what_the_brief_forbids(tmp_path: Path) -> None:
    good = check.CORPUS_DIR / "pallets__flask.jsonl"
    line = good.read_text(encoding="utf-8").splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                line.replace('"pallets/flask"', '"pallets/click"'),  # a measuring repository
                line.replace('"verdict": "', '"verdict": "maybe-'),
                line,
                line,  # the same PR again (three lines of it with the one above)
            ]
        ),
        encoding="utf-8",
    )
    report = check.Report()
    check.read_corpus([bad], report)
    for record in report.records:
        check.check_record(record, report)
    check.check_corpus(report, None)
    text = "\n".join(report.problems)
    assert "measures prsum" in text and "verdict" in text and "has 3 cards" in text


def test_held_out_cards_are_well_formed(capsys: pytest.CaptureFixture[str]) -> None:
    held_out = sorted((check.CORPUS_DIR.parent / "held-out").glob("*.jsonl"))
    assert held_out
    assert check.main([*map(str, held_out), "--partial"]) == 0, capsys.readouterr().out


def test_a_training_answer_keeps_only_what_its_prompt_shows() -> None:
    card = {
        "headline": "The cache gets a size limit",
        "verdict": "deep",
        "minutes": 10,
        "summary": (
            "`Put` now calls `evictOldest`. It also rewrites `compact`. Read the test. "
            "It keeps 64 entries. Twelve tests cover it in 3 files."
        ),
        "focus": [
            {"path": "store/cache.go", "symbol": "compact", "why": "the eviction order"},
            {"path": "store/cache.go", "symbol": "Put", "why": "calls `compact` first"},
        ],
        "lessons": ["One helper keeps every write path under the limit."],
        "follow_ups": ["Benchmark `compact`."],
    }
    shown = Evidence(
        "func (c *Cache) Put() { c.evictOldest() } // at most 64, 1.3", frozenset(), ()
    )
    target = visible_card(card, "en", shown)
    assert target is not None
    # a number the prompt does not show (3, none of 1.3) goes like an unseen name
    assert target["summary"] == "`Put` now calls `evictOldest`. Read the test. It keeps 64 entries."
    assert target["focus"] == [
        {"path": "store/cache.go", "symbol": None, "why": "the eviction order"}
    ]
    assert target["lessons"] == card["lessons"] and target["follow_ups"] == []
    nothing = Evidence("func other() {}", frozenset(), ())
    assert visible_card({**card, "summary": "`Put` calls `compact`."}, "en", nothing) is None
