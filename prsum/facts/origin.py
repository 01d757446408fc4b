"""Which earlier PR wrote the lines a PR removes or rewrites.

A reviewer of a fix asks where the broken lines came from: a PR merged two days before (a
follow-up; the bug may never have reached a release) or one from years ago (a latent bug,
long shipped). `git blame` at the PR's base answers it, and the answer is history, true by
construction: the PR that last changed most of the lines this one removes, with its title and
how long before this one it was merged. Nothing is said where no single PR holds most of them.

Git is reached only through the callables passed in (prsum.history reads the repository).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import date, datetime

from prsum.digest import changed_lines
from prsum.filekinds import file_kind, is_generated
from prsum.types import FileChange, FileDiff, Origin, PullRequest

# The commit that last changed each of the given lines of a file at the PR's base; None for
# a line a shallow clone cannot trace.
Blame = Callable[[str, Sequence[int]], Sequence[str | None]]
# The PR that brought a commit into the base's first-parent line, if one can be told.
Landing = Callable[[str], PullRequest | None]

_MAX_FILES = 5  # the files that remove most lines: where the PR's rewriting is
_MAX_LINES = 400  # lines blamed a PR: blame walks history, so its cost grows with each file's


def line_origin(
    pr: PullRequest, diffs: Sequence[FileDiff], blame: Blame, landing: Landing
) -> Origin | None:
    """The earlier PR that last changed more than half of the non-blank lines `pr` removes from
    its product, tests and docs (generated, vendored and lock files aside), or None."""
    if pr.reverts:  # its card names what it undoes already
        return None
    changes = {change.path: change for change in pr.files}
    removed = [
        (diff.path, numbers)
        for diff in diffs
        if (change := changes.get(diff.path)) is not None
        and _blamed_kind(change)
        and (numbers := changed_lines(diff.patch)[0])
    ]
    removed.sort(key=lambda item: -len(item[1]))
    commits: list[str | None] = []
    for path, numbers in removed[:_MAX_FILES]:
        if len(commits) >= _MAX_LINES:
            break
        old_path = changes[path].old_path or path
        commits.extend(blame(old_path, numbers[: _MAX_LINES - len(commits)]))
    if not commits:
        return None
    sha, count = Counter(commits).most_common(1)[0]
    if sha is None or count * 2 <= len(commits):
        return None
    earlier = landing(sha)
    if earlier is None:
        return None
    return Origin(
        label=earlier.label,
        title=earlier.title,
        days=max(0, (_day(pr.merged_at) - _day(earlier.merged_at)).days),
        whole=count == len(commits),
    )


def _blamed_kind(change: FileChange) -> bool:
    """Whether the lines a file loses were written by the project's people: not generated,
    vendored or a lock file."""
    return file_kind(change.path) not in ("lock", "vendored") and not is_generated(change.path)


def _day(iso: str) -> date:
    """The calendar day of a commit date, as `git log` shows it (in the committer's zone)."""
    return datetime.fromisoformat(iso).date()
