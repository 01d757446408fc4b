"""The verdict rubric: measured facts give a prior verdict and reading time.

The model may then move the verdict one step (deep <-> skim <-> skip), never two, and not at
all where the facts settle it: a breaking change is always `deep`, a dependency bump or a
release commit always `skip`, and a behaviour change far from the deep threshold (under half
of it, or over twice it) keeps its prior.

| facts                                             | prior |
| ------------------------------------------------- | ----- |
| breaking change                                   | deep  |
| deps, release, ci, docs-only                      | skip  |
| feature/fix/perf/refactor/revert, >= 80 source lines  | deep  |
| feature/fix/perf/refactor/revert, some source lines   | skim  |
| anything else with source lines                   | skim  |
| no source lines (tests, config, chore)            | skip  |

Source changes outside the mechanical categories (docs, test, ci, deps, release) are never `skip`.
"""

from __future__ import annotations

from prsum.types import Facts, Verdict

DEEP_SOURCE_LINES = 80
_ORDER: tuple[Verdict, ...] = ("skip", "skim", "deep")
_BEHAVIOUR = {"feature", "fix", "perf", "refactor", "revert"}
# Categories whose changes are mechanical even when they touch source files.
_MECHANICAL = {"docs", "test", "ci", "deps", "release"}


def prior_verdict(facts: Facts) -> Verdict:
    """The rubric's verdict before the model has a say."""
    if facts.breaking.is_breaking:
        return "deep"
    if facts.category in ("deps", "release", "ci") or facts.docs_only:
        return "skip"
    if facts.source_lines_changed == 0:
        return "skip"
    if facts.category in _BEHAVIOUR and facts.source_lines_changed >= DEEP_SOURCE_LINES:
        return "deep"
    return "skim"


def allowed_verdicts(facts: Facts) -> tuple[Verdict, ...]:
    """The verdicts the model may choose from: the prior and, unless facts settle it, its neighbours.

    Facts settle it for breaking changes, bumps and releases, and for source changes far from
    the deep threshold (under half or over twice it): a small model's label preference is
    weak evidence, so it only breaks ties the facts leave open.
    """
    prior = prior_verdict(facts)
    if facts.breaking.is_breaking or facts.category in ("deps", "release"):
        return (prior,)
    lines = facts.source_lines_changed
    if facts.category not in _MECHANICAL and (
        lines >= 2 * DEEP_SOURCE_LINES or 0 < lines < DEEP_SOURCE_LINES // 2
    ):
        return (prior,)
    index = _ORDER.index(prior)
    neighbours = _ORDER[max(0, index - 1) : index + 2]
    if facts.category not in _MECHANICAL and facts.source_lines_changed > 0:
        # "No need to read the code" is for mechanical changes, not for changed behaviour.
        return tuple(verdict for verdict in neighbours if verdict != "skip")
    return neighbours


def reading_minutes(verdict: Verdict, facts: Facts) -> int:
    """Reading time implied by the verdict, growing with the source lines to read."""
    if verdict == "skip":
        return 0
    lines = facts.source_lines_changed + (facts.lines_added + facts.lines_deleted) // 10
    if verdict == "skim":
        return max(2, min(10, 2 + lines // 40))
    return max(10, min(60, 5 + lines // 15))
