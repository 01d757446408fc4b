"""What a release ships: the changes merged since the project's version last changed.

A release's diff is a version number and a changelog heading; what a reader of it wants is
what it releases. `git blame` at the PR's base tells which change last set the version lines
the release rewrites (the previous release, most often); the base's first-parent line since
that change holds what this one ships. Both are history, true by construction. The card
names the few changes with the most source lines, as a place to start, and says so.

Git is reached only through the callables passed in (prsum.history reads the repository).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from prsum.facts.categories import OWN_VERSION, VERSION_FILE
from prsum.facts.origin import Blame, Landing, days_between
from prsum.facts.stats import version_change
from prsum.filekinds import file_kind
from prsum.history.messages import is_sync_subject
from prsum.types import Category, FileDiff, OtherCommit, PullRequest, Release, Shipped

# The PRs, direct commits, bots' commits and syncs on the first-parent line of `A..B`, newest
# first; None where git cannot tell, where A is not on B's first-parent line, or where the line
# is longer than is worth reading for one card.
Span = Callable[[str, str], Sequence[PullRequest | OtherCommit] | None]
# A commit's patch of one file against its first parent; None where it has none.
Patch = Callable[[str, str], str | None]

_NAMED = 3  # changes named, most source lines first
_HUNK = re.compile(r"^@@ -(\d+)")


def release_contents(
    pr: PullRequest,
    diffs: Sequence[FileDiff],
    category: Category,
    blame: Blame,
    landing: Landing,
    span: Span,
    patch: Patch,
) -> Release | None:
    """What release `pr` ships: the changes on its base's first-parent line since the one that
    last set every version line it rewrites, or None: not a release; the version lines were
    last touched by different changes, or by one that did not change the version (a file
    reformatted: "since the version last changed" would name it falsely), or by none history
    can tell. A branch synced in is counted as a merge of its own: the line does not show its
    changes one by one."""
    if category != "release" or not pr.base_sha:
        return None
    setters: set[str | None] = set()
    paths = []
    for diff in diffs:
        numbers = list(_version_lines(diff.path, diff.patch))
        if numbers:
            found = blame(diff.path, numbers)
            if len(found) != len(numbers):
                return None
            setters.update(found)
            paths.append(diff.path)
    setter = setters.pop() if len(setters) == 1 else None
    if setter is None or not all(_sets_version(path, patch(setter, path)) for path in paths):
        return None
    previous = landing(setter)
    changes = span(previous.sha, pr.base_sha) if previous else None
    if previous is None or not changes:
        return None
    # The rest of a rebase-merged change whose commit set the version is that change.
    changes = [c for c in changes if isinstance(c, OtherCommit) or c.label != previous.label]
    if not changes:
        return None
    merged = [change for change in changes if isinstance(change, PullRequest)]
    prs = sum(1 for change in merged if change.number is not None)
    syncs = sum(1 for c in changes if isinstance(c, OtherCommit) and c.kind == "sync")
    by_size = sorted(
        (c for c in merged if _source_lines(c) and _its_own(c)),
        key=_source_lines,
        reverse=True,  # a stable sort: among equals, the newest first
    )
    return Release(
        label=previous.label,
        title=previous.title,
        days=days_between(previous.merged_at, pr.merged_at),
        prs=prs,
        direct=len(changes) - prs - syncs,
        syncs=syncs,
        largest=tuple(Shipped(change.label, change.title) for change in by_size[:_NAMED]),
    )


def _version_lines(path: str, patch: str) -> Iterator[int]:
    """The numbers (at the base) of the project's own version lines a file's patch removes:
    a manifest's `version = …`, `__version__ = …`, a VERSION file's lines."""
    if file_kind(path) in ("docs", "lock", "test"):
        return
    whole_file = bool(VERSION_FILE.search(path))
    number = 0
    for line in patch.splitlines():
        if start := _HUNK.match(line):
            number = int(start.group(1))
        elif not number or line.startswith(("\\", "+")):
            continue
        elif line.startswith("-"):
            text = line[1:]
            if text.strip() and (whole_file or OWN_VERSION.match(text)):
                yield number
            number += 1
        else:
            number += 1


def _sets_version(path: str, patch: str | None) -> bool:
    """Whether a patch rewrites a version line of `path` with another version (not only
    reformats it, moves it or adds the file)."""
    if not patch:
        return False
    lines = patch.splitlines()
    removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    whole_file = bool(VERSION_FILE.search(path))
    return any(
        version_change(old, new)
        for old in removed
        if whole_file or OWN_VERSION.match(old)
        for new in added
        if whole_file or OWN_VERSION.match(new)
    )


def _its_own(change: PullRequest) -> bool:
    """Whether a change is one a reader would read for what the release ships: not a PR that
    syncs a branch in ("Merge stable into main": that branch's changes), not a revert, not a
    change reverted since (#5199 and its revert both named, on hono's 4.13.2)."""
    return not (
        is_sync_subject(change.title)
        or change.kind == "revert"
        or any(related.relation == "reverted_by" for related in change.related)
    )


def _source_lines(change: PullRequest) -> int:
    return sum(f.added + f.deleted for f in change.files if file_kind(f.path) == "source")
