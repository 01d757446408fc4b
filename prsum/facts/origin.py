"""Which earlier PR wrote the lines a PR removes or rewrites.

A reviewer of a fix asks where the broken lines came from: a PR merged two days before (a
follow-up; the bug may never have reached a release) or one from years ago (a latent bug,
long shipped). `git blame` at the PR's base answers it, and the answer is history, true by
construction: the PR that last changed most of the lines this one removes, with its title and
how long before this one it was merged. Nothing is said where no single PR holds most of them.

Git is reached only through the callables passed in (prsum.history reads the repository).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

from prsum.digest import changed_lines
from prsum.types import FileDiff, Origin, PullRequest

# The commit that last changed each of the given lines of a file at the PR's base; None for
# a line of a boundary commit (a shallow clone's, or the root); fewer where git cannot tell.
Blame = Callable[[str, Sequence[int]], Sequence[str | None]]
# The PR that brought a commit into the base's first-parent line, if one can be told.
Landing = Callable[[str], PullRequest | None]

# Past these, nothing is said: every removed line must be blamed for "the lines" to hold, and
# blame walks each file's history, so its cost grows with each file.
_MAX_FILES = 8
_MAX_LINES = 400
# The patch's own header names where its removed lines are numbered (`git diff -M -C`).
_SOURCE = re.compile(r"^(rename|copy) from (.+)$", re.MULTILINE)


def line_origin(
    pr: PullRequest, diffs: Sequence[FileDiff], blame: Blame, landing: Landing
) -> Origin | None:
    """The earlier PR that last changed more than half of the non-blank lines `pr` removes, or
    None. Every one of those lines is blamed, in every file, or nothing is said: a sample, or
    lock files left aside, made "the lines it removes" false (judged so on a dependency bump
    whose lock file lost lines that other PRs wrote)."""
    if pr.reverts:  # its card names what it undoes already
        return None
    removed: list[tuple[str, list[int]]] = []
    for diff in diffs:
        numbers = changed_lines(diff.patch)[0]
        if not numbers:
            continue
        source = _SOURCE.search(diff.patch.split("\n@@", 1)[0])
        if source and source.group(1) == "copy":
            continue  # a copy's "removed" lines are the source's, which stays as it was
        if source and source.group(2).startswith('"'):
            return None  # a name git had to quote: not blamed, so "the lines" would not hold
        removed.append((source.group(2) if source else diff.path, numbers))
    if not removed or len(removed) > _MAX_FILES:
        return None
    if sum(len(numbers) for _, numbers in removed) > _MAX_LINES:
        return None
    commits: list[str | None] = []
    for path, numbers in removed:
        found = blame(path, numbers)
        if len(found) != len(numbers):
            return None  # git could not tell (in time): the count would be of some lines only
        commits.extend(found)
    sha, count = Counter(commits).most_common(1)[0]
    if sha is None or count * 2 <= len(commits):
        return None
    earlier = landing(sha)
    if earlier is None:
        return None
    return Origin(
        label=earlier.label,
        title=earlier.title,
        days=days_between(earlier.merged_at, pr.merged_at),
        whole=count == len(commits),
    )


def days_between(earlier: str, later: str) -> int:
    """Days from one ISO time to another, to the nearest (a reader who compares the two dates
    counts so; 4 days and 23 hours said as 4 was judged wrong), and 0 only for less than a
    whole day."""
    elapsed = datetime.fromisoformat(later) - datetime.fromisoformat(earlier)
    days = elapsed.total_seconds() / 86400
    return 0 if days < 1 else round(days)
