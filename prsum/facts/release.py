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
from prsum.filekinds import file_kind
from prsum.history.messages import is_sync_subject
from prsum.types import Category, FileDiff, OtherCommit, PullRequest, Release, Shipped

# The PRs, direct commits and bots' commits on the first-parent line of `A..B`, newest first;
# None where git cannot tell, or the line is longer than is worth reading for one card.
Span = Callable[[str, str], Sequence[PullRequest | OtherCommit] | None]

_NAMED = 3  # changes named, most source lines first
_HUNK = re.compile(r"^@@ -(\d+)")


def release_contents(
    pr: PullRequest,
    diffs: Sequence[FileDiff],
    category: Category,
    blame: Blame,
    landing: Landing,
    span: Span,
) -> Release | None:
    """What release `pr` ships: the changes on its base's first-parent line since the one that
    last set every version line it rewrites, or None (not a release; the version lines were
    set by different changes, or by none history can tell). A branch synced in is counted as
    a merge of its own: the line does not show its changes one by one."""
    if category != "release" or not pr.base_sha:
        return None
    setters: set[str | None] = set()
    for diff in diffs:
        numbers = list(_version_lines(diff))
        if numbers:
            found = blame(diff.path, numbers)
            if len(found) != len(numbers):
                return None
            setters.update(found)
    if len(setters) != 1 or None in setters:
        return None
    previous = landing(setters.pop() or "")
    changes = span(previous.sha, pr.base_sha) if previous else None
    if previous is None or changes is None:
        return None
    if not changes:
        return None
    merged = [change for change in changes if isinstance(change, PullRequest)]
    prs = sum(1 for change in merged if change.number is not None)
    syncs = sum(1 for c in changes if isinstance(c, OtherCommit) and c.kind == "sync")
    by_size = sorted(
        # A PR that syncs a branch in ("Merge stable into main") brings that branch's changes,
        # not its own.
        (c for c in merged if _source_lines(c) and not is_sync_subject(c.title)),
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


def _version_lines(diff: FileDiff) -> Iterator[int]:
    """The numbers (at the base) of the project's own version lines a file's patch removes:
    a manifest's `version = …`, `__version__ = …`, a VERSION file's lines."""
    kind = file_kind(diff.path)
    if kind in ("docs", "lock", "test"):
        return
    whole_file = bool(VERSION_FILE.search(diff.path))
    number = 0
    for line in diff.patch.splitlines():
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


def _source_lines(change: PullRequest) -> int:
    return sum(f.added + f.deleted for f in change.files if file_kind(f.path) == "source")
