"""The verdict rubric: what a reader must understand, measured by facts, gives a prior verdict
and a reading time.

The verdict follows the code a reader has to take in, not the title's word:

| facts                                                          | prior |
| -------------------------------------------------------------- | ----- |
| mechanical: whitespace, typos, comments, renames, generated    | skip  |
| dependency bump, release, revert                               | skip  |
| docs only                                                      | skip  |
| breaking change to the API (marker, removed definition, default) | deep  |
| attention >= 75 (below)                                        | deep  |
| any other change to the product's code                         | skim  |
| a raised toolchain minimum: the code follows the toolchain     | skim  |
| CI: >= 10 new pipeline lines; tests or build config: >= 8 lines | skim  |
| anything else (small CI, config, test touch-ups)               | skip  |

Attention is what the product code asks of a reader: its changed logic lines (not comments,
formatting, version or spelling edits; lines of files the PR adds count a third, since a new
module reads on its own), 10 per further file the logic spreads to (up to 3), and 15 per kind of
hard code it touches (concurrency, ownership and memory, resource lifecycle; up to 2).

The model may then move the verdict one step only where the facts leave it open: attention
within a few points of the deep threshold, a CI or config change near the skim threshold, or a
change to tests alone under twice it.
Changed product code is never `skip`.
"""

from __future__ import annotations

import math

from prsum.types import Facts, Verdict

DEEP_ATTENTION = 75
_NEW_MODULE_SHARE = 3  # lines of an added file count 1/3
_PER_FILE = 10
_MAX_EXTRA_FILES = 3
_PER_HARD_KIND = 15
_MAX_HARD_KINDS = 2
_CI_SKIM_LINES = 10
_SIDE_SKIM_LINES = 8  # tests only, or build/tool configuration
# Within this many attention points below the threshold, or above it, the model may break
# the tie.
_TIE_BELOW = 6
_TIE_ABOVE = 3
_ORDER: tuple[Verdict, ...] = ("skip", "skim", "deep")
_ALWAYS_SKIP = {"deps", "release", "revert"}


def attention(facts: Facts) -> int:
    """How much the product code asks of a reader (see the module's table)."""
    woven = facts.logic_lines - facts.new_module_lines
    spread = _PER_FILE * min(_MAX_EXTRA_FILES, max(0, facts.logic_files - 1))
    hard = _PER_HARD_KIND * min(_MAX_HARD_KINDS, len(facts.tricky))
    return woven + facts.new_module_lines // _NEW_MODULE_SHARE + spread + hard


def _side_lines(facts: Facts) -> int:
    """Lines outside the product code that still deserve a look: CI pipelines added, tests
    changed (when only tests changed), build configuration."""
    return max(facts.ci_lines, facts.config_lines, facts.test_lines if not facts.logic_lines else 0)


def _side_skims(facts: Facts) -> bool:
    if facts.ci_lines >= _CI_SKIM_LINES:
        return True
    if facts.category == "ci":
        return False
    return max(facts.config_lines, facts.test_lines) >= _SIDE_SKIM_LINES


def prior_verdict(facts: Facts) -> Verdict:
    """The rubric's verdict before the model has a say."""
    if facts.mechanical or facts.category in _ALWAYS_SKIP or facts.docs_only:
        return "skip"
    if facts.category == "docs" and not facts.logic_lines:
        return "skip"
    if facts.breaking.is_breaking and facts.breaking_scope != "environment":
        return "deep"
    if facts.logic_lines:
        if facts.breaking.is_breaking:  # a raised minimum: the code follows the toolchain
            return "skim"
        return "deep" if attention(facts) >= DEEP_ATTENTION else "skim"
    if facts.breaking.is_breaking:
        return "skim"
    return "skim" if _side_skims(facts) else "skip"


def allowed_verdicts(facts: Facts) -> tuple[Verdict, ...]:
    """The verdicts the model may choose from: the prior, and a neighbour only where the facts
    leave the call open (near a threshold). A small model's label preference is weak evidence,
    so it only breaks ties the facts leave open."""
    prior = prior_verdict(facts)
    if facts.mechanical or facts.category in _ALWAYS_SKIP or facts.breaking.is_breaking:
        return (prior,)
    if facts.logic_lines:
        score = attention(facts)
        if DEEP_ATTENTION - _TIE_BELOW <= score < DEEP_ATTENTION + _TIE_ABOVE:
            return ("skim", "deep") if prior == "skim" else ("deep", "skim")
        return (prior,)
    if facts.category == "docs" or facts.docs_only:
        return (prior,)
    side = _side_lines(facts)
    threshold = _CI_SKIM_LINES if facts.category == "ci" else _SIDE_SKIM_LINES
    # Tests alone are open from their first line: a small test change may still be the point.
    low = 1 if facts.category == "test" else threshold // 2
    if low <= side < threshold * 2:
        return ("skip", "skim") if prior == "skip" else ("skim", "skip")
    return (prior,)


def reading_minutes(verdict: Verdict, facts: Facts) -> int:
    """Reading time implied by the verdict, growing with what there is to take in."""
    if verdict == "skip":
        return 0
    if verdict == "skim":
        if not facts.logic_lines:
            return max(2, min(8, 2 + _side_lines(facts) // 10))
        return max(2, min(8, 3 + attention(facts) // 15))
    return max(10, min(35, 10 + round(2 * math.sqrt(max(0, attention(facts) - DEEP_ATTENTION)))))
