"""The verdict rubric, table-driven: facts in, prior verdict, allowed moves and minutes out."""

from __future__ import annotations

from typing import Any

import pytest

from prsum.rubric import DEEP_ATTENTION, allowed_verdicts, attention, prior_verdict, reading_minutes
from prsum.types import Breaking, Facts


def facts(category: str = "feature", logic: int = 0, **fields: Any) -> Facts:
    breaking = fields.pop("breaking", "")
    values: dict[str, Any] = dict(
        category=category,
        breaking=Breaking(bool(breaking), "why" if breaking else ""),
        breaking_scope=breaking,
        tests_touched=False,
        docs_only=False,
        generated_or_vendored=(),
        todos_added=(),
        new_options=(),
        files_changed=1,
        lines_added=logic,
        lines_deleted=0,
        source_lines_changed=logic,
        logic_lines=logic,
        logic_files=1 if logic else 0,
    )
    values.update(fields)
    return Facts(**values)


@pytest.mark.parametrize(
    ("case", "prior", "allowed"),
    [
        # Mechanical changes are skip whatever their size.
        (facts("chore", 0, mechanical="whitespace", source_lines_changed=900), "skip", ("skip",)),
        (facts("fix", 0, mechanical="typo", source_lines_changed=2), "skip", ("skip",)),
        (facts("docs", 0, mechanical="comments", source_lines_changed=40), "skip", ("skip",)),
        (facts("refactor", 0, mechanical="rename", files_changed=30), "skip", ("skip",)),
        (facts("deps", 0, lines_added=400), "skip", ("skip",)),
        (facts("release", 0), "skip", ("skip",)),
        (facts("revert", 200, logic_files=4), "skip", ("skip",)),
        (facts("docs", 0, docs_only=True, lines_added=900), "skip", ("skip",)),
        # A breaking API change is deep; a raised toolchain minimum is not a reason to read code.
        (facts("feature", 30, breaking="api"), "deep", ("deep",)),
        (facts("chore", 200, logic_files=10, breaking="environment"), "skim", ("skim",)),
        # Product code: attention decides; never skip.
        (facts("fix", 2), "skim", ("skim",)),
        (facts("chore", 30), "skim", ("skim",)),
        (facts("feature", 500), "deep", ("deep",)),
        (facts("feature", 40, logic_files=4), "skim", ("skim", "deep")),  # 70: near 75, a tie
        (facts("feature", 46, logic_files=4), "deep", ("deep", "skim")),  # 76
        (facts("feature", 45, logic_files=4), "deep", ("deep", "skim")),  # 75
        (facts("fix", 48, tricky=("concurrency", "ownership")), "deep", ("deep",)),
        (facts("fix", 48, tricky=("concurrency",)), "skim", ("skim",)),
        # A new module reads on its own: its lines count a third.
        (facts("feature", 120, new_module_lines=100, logic_files=2), "skim", ("skim",)),
        # Outside the product code: CI pipelines, tests only, build configuration.
        (facts("ci", 0, ci_lines=51), "skim", ("skim",)),
        (facts("ci", 0, ci_lines=12), "skim", ("skim", "skip")),
        (facts("ci", 0, ci_lines=1), "skip", ("skip",)),
        (facts("test", 0, test_lines=26), "skim", ("skim",)),
        (facts("test", 0, test_lines=3), "skip", ("skip", "skim")),  # tests alone: open
        (facts("test", 0, test_lines=40), "skim", ("skim",)),
        (facts("chore", 0, config_lines=9), "skim", ("skim", "skip")),
        (facts("chore", 0, config_lines=5), "skip", ("skip", "skim")),
    ],
)
def test_prior_and_allowed_moves(case: Facts, prior: str, allowed: tuple[str, ...]) -> None:
    assert prior_verdict(case) == prior
    assert allowed_verdicts(case) == allowed


def test_attention_weighs_size_spread_and_hard_code() -> None:
    assert attention(facts("fix", 40)) == 40
    assert attention(facts("fix", 40, logic_files=3)) == 60  # 10 per further file
    assert attention(facts("fix", 40, logic_files=9)) == 70  # up to 3 further files
    assert attention(facts("fix", 40, tricky=("concurrency", "ownership", "lifecycle"))) == 70
    assert attention(facts("feature", 90, new_module_lines=90)) == 30
    assert attention(facts("feature", DEEP_ATTENTION)) == DEEP_ATTENTION


@pytest.mark.parametrize(
    ("verdict", "case", "expected"),
    [
        ("skip", facts("fix", 500), 0),
        ("skim", facts("fix", 2), 3),
        ("skim", facts("fix", 45), 6),
        ("skim", facts("fix", 10_000), 8),
        ("skim", facts("ci", 0, ci_lines=51), 7),
        ("skim", facts("test", 0, test_lines=14), 3),
        ("deep", facts("fix", 75), 10),
        ("deep", facts("fix", 130, logic_files=2), 26),
        ("deep", facts("feature", 50_000), 35),
    ],
)
def test_minutes_grow_with_what_there_is_to_read(verdict: str, case: Facts, expected: int) -> None:
    assert reading_minutes(verdict, case) == expected  # type: ignore[arg-type]
