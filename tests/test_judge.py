"""bench/judge: the claim-level review's judgments, store and table, on made-up judgments."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

JUDGE = Path(__file__).resolve().parents[1] / "bench" / "judge"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("prsum_bench_review", JUDGE / "review.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


review = _load()


def judgment(labels: str, sign: str = "edit", verdict_ok: bool = True, insight: int = 1) -> Any:
    return {
        "claims": [
            {
                "field": "summary",
                "text": f"claim {n}",
                "label": label,
                "why": "" if label == "S" else "x",
            }
            for n, label in enumerate(labels)
        ],
        "sign": sign,
        "verdict_ok": verdict_ok,
        "insight": insight,
    }


def card(sha: str, system: str, lang: str = "en", summary: str = "text") -> dict[str, Any]:
    return {
        "system": system,
        "repo": "demo",
        "sha": sha,
        "lang": lang,
        "headline": "h",
        "verdict": "skim",
        "minutes": 2,
        "summary": summary,
        "focus": [],
        "lessons": [],
        "follow_ups": [],
    }


def test_shares_pool_claims_and_intervals_resample_prs() -> None:
    judged = [
        review.JudgedCard("a", "demo", "1", "en", review.parse_judgment(judgment("SSSF"))),
        review.JudgedCard("a", "demo", "2", "en", review.parse_judgment(judgment("SF", "no"))),
        review.JudgedCard("a", "demo", "3", "en", review.parse_judgment(judgment("UU", "yes"))),
        review.JudgedCard("a", "demo", "4", "en", None),
    ]
    row = review.system_row("a", judged)
    assert (row.cards, row.judged, row.claims) == (4, 3, 8)
    assert row.shares["F"].value == pytest.approx(2 / 8)
    assert row.shares["S"].value == pytest.approx(4 / 8)
    assert row.shares["U"].value == pytest.approx(2 / 8)
    assert row.signs["no"].value == pytest.approx(1 / 3)
    assert row.signable.value == pytest.approx(2 / 3)
    assert row.claims_per_card.value == pytest.approx(8 / 3)
    # Resampling three PRs: the false share ranges from none (only #3) to 1/2 (only #2).
    assert 0.0 <= row.shares["F"].low <= 0.25 <= row.shares["F"].high <= 0.5
    table = review.table([row])
    assert "| a | 3 of 4 | 2.7" in table and "**25 [" in table


def test_a_card_hash_changes_with_its_text_and_not_with_its_system() -> None:
    first = card("1", "small")
    assert review.card_hash(first) == review.card_hash({**first, "system": "coder"})
    assert review.card_hash(first) != review.card_hash(card("1", "small", summary="other"))
    assert review.card_hash(first) != review.card_hash(card("2", "small"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sign": "maybe"}, "sign 'maybe'"),
        ({"insight": 3}, "insight 3"),
        ({"insight": True}, "insight True"),
        ({"verdict_ok": "yes"}, "verdict_ok"),
        ({"claims": "S"}, "claims is not a list"),
        ({"claims": [{"field": "summary", "text": "x", "label": "T"}]}, "label 'T'"),
        ({"claims": [{"field": "title", "text": "x", "label": "S"}]}, "field 'title'"),
        ({"claims": [{"field": "summary", "text": " ", "label": "S"}]}, "text is empty"),
        ({"claims": [{"field": "summary", "text": "x", "label": "F", "why": ""}]}, "needs its why"),
    ],
)
def test_a_malformed_judgment_is_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(review.MalformedJudgment, match=message):
        review.parse_judgment({**judgment("S"), **change})


def test_a_judgment_missing_a_key_is_refused() -> None:
    broken = judgment("S")
    del broken["verdict_ok"]
    with pytest.raises(review.MalformedJudgment, match="missing verdict_ok"):
        review.parse_judgment(broken)


def test_a_packet_file_must_judge_exactly_its_cards() -> None:
    good = {"packet": "p01", "cards": {"c1": judgment("S"), "c2": judgment("F")}}
    assert set(review.parse_packet_judgments(good, "p01", ["c1", "c2"])) == {"c1", "c2"}
    with pytest.raises(review.MalformedJudgment, match="the packet has"):
        review.parse_packet_judgments(good, "p01", ["c1", "c2", "c3"])
    with pytest.raises(review.MalformedJudgment, match="says it is packet"):
        review.parse_packet_judgments(good, "p02", ["c1", "c2"])


def test_the_store_keeps_the_first_judgment_of_a_card_and_each_round_once(tmp_path: Path) -> None:
    store = review.JudgmentStore(tmp_path)
    digest = review.card_hash(card("1", "a"))
    first = review.parse_judgment(judgment("SF"))
    store.add(digest, first, "r1", card("1", "a"))
    store.add(digest, review.parse_judgment(judgment("S")), "r1", card("1", "a"))  # same round
    store.add(digest, review.parse_judgment(judgment("SS")), "r2", card("1", "a"))
    assert [j.round for j in store.all(digest)] == ["r1", "r2"]
    kept = store.first(digest)
    assert kept is not None and kept.count("F") == 1 and kept.round == "r1"
    stored = json.loads(next(tmp_path.rglob("*.json")).read_text(encoding="utf-8"))
    assert stored[0]["sha"] == "1" and stored[0]["claims"][1]["label"] == "F"


def test_calibration_flags_a_round_whose_reference_cards_look_false() -> None:
    fine = [review.parse_judgment(judgment("S" * 20))]
    harsh = [review.parse_judgment(judgment("SSSF"))]
    shares = review.calibration({"r1": fine, "r2": harsh})
    assert shares["r1"] == 0.0 and shares["r2"] == 0.25 > review.REFERENCE_F_LIMIT
