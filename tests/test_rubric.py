"""The verdict rubric, table-driven: facts in, prior verdict, allowed moves and minutes out."""

from __future__ import annotations

import pytest

from prsum.rubric import allowed_verdicts, prior_verdict, reading_minutes
from prsum.types import Breaking, Facts


def facts(
    category: str = "feature",
    source: int = 0,
    breaking: bool = False,
    docs_only: bool = False,
    total: int | None = None,
) -> Facts:
    total = source if total is None else total
    return Facts(
        category=category,  # type: ignore[arg-type]
        breaking=Breaking(breaking, "marked" if breaking else ""),
        tests_touched=False,
        docs_only=docs_only,
        generated_or_vendored=(),
        todos_added=(),
        new_options=(),
        files_changed=1,
        lines_added=total,
        lines_deleted=0,
        source_lines_changed=source,
    )


@pytest.mark.parametrize(
    ("case", "prior", "allowed"),
    [
        (facts("feature", 30, breaking=True), "deep", ("deep",)),
        (facts("deps", 0, total=400), "skip", ("skip",)),
        (facts("release", 2), "skip", ("skip",)),
        (facts("ci", 0, total=60), "skip", ("skip", "skim")),
        (facts("docs", 0, docs_only=True, total=900), "skip", ("skip", "skim")),
        (facts("test", 0, total=120), "skip", ("skip", "skim")),
        (facts("feature", 500), "deep", ("deep",)),  # far over the threshold: settled
        (facts("fix", 100), "deep", ("skim", "deep")),  # near it: the model may break the tie
        (facts("refactor", 60), "skim", ("skim", "deep")),
        (facts("fix", 12), "skim", ("skim",)),  # far under it: settled
        (facts("chore", 30), "skim", ("skim",)),  # source changes are never skip
        (facts("chore", 60), "skim", ("skim", "deep")),
    ],
)
def test_prior_and_allowed_moves(case: Facts, prior: str, allowed: tuple[str, ...]) -> None:
    assert prior_verdict(case) == prior
    assert allowed_verdicts(case) == allowed


@pytest.mark.parametrize(
    ("verdict", "source", "expected"),
    [
        ("skip", 500, 0),
        ("skim", 0, 2),
        ("skim", 100, 4),
        ("skim", 10_000, 10),
        ("deep", 80, 10),
        ("deep", 400, 34),
        ("deep", 50_000, 60),
    ],
)
def test_minutes_grow_with_the_code_to_read(verdict: str, source: int, expected: int) -> None:
    assert reading_minutes(verdict, facts("feature", source)) == expected  # type: ignore[arg-type]
