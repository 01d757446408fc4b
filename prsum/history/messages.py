"""What a commit message says about how a change landed: pure text parsing, no git.

Recognised, in the order they are tried for a commit with several parents:
GitHub (`Merge pull request #N from owner/branch`, title on the body's first line),
GitLab (`See merge request group/project!N`), Bitbucket (`Merged in branch (pull request #N)`),
a subject ending in `(#N)` (GitHub's merge-commit and squash titles). A merge that names no PR
is a branch sync when its subject says so (git's own `Merge branch 'x'`, `Merge remote-tracking
branch …`, `Merge tag …`, `Merge X into Y`, or a `Sync`/`Back-merge` subject); any other merge
(an edited message such as "Add sponsors to README") is a change in its own right, carded like a
direct commit. A single-parent commit is a squash PR when its subject ends in `(#N)` or a
Gerrit `Reviewed-on: …/N` trailer names its change, else a direct commit (a bot's, when its
author ends in `[bot]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

CommitKind = Literal["merge", "squash", "direct", "bot", "sync"]

_GITHUB_MERGE = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_GITLAB_MERGE = re.compile(r"^See merge request (\S+)!(\d+)\s*$", re.MULTILINE)
_BITBUCKET_MERGE = re.compile(r"^Merged in (\S+) \(pull request #(\d+)\)")
_NUMBER_SUFFIX = re.compile(r"\s*\(#(\d+)\)\s*$")
_GERRIT_REVIEWED_ON = re.compile(r"^Reviewed-on:\s*\S*?(\d+)/?\s*$", re.MULTILINE)
_TRAILER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s+(.+?)\s*$")
_PERSON = re.compile(r"^(.+?)\s*<([^>]*)>$")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})", re.IGNORECASE)
_CHERRY_PICKED = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,64})\)", re.IGNORECASE)
_REVERT_SUBJECT = re.compile(r'^Revert "(.+)"')
# What a branch sync's subject looks like: git's generated merge messages and their usual edits.
_SYNC_SUBJECT = re.compile(
    r"^(Merge\b|Merged\b|(Sync|Synchronize|Back-?merge|Backport|Forward-?port)\b.*\b(into|from|with)\b)",
    re.IGNORECASE,
)
# Keys of the lines tools and conventions append to a body without a hyphen (`Fixes: 1a2b…`).
_TOOL_KEY = re.compile(
    r"^(?:Fixes|Closes|Resolves|Refs?|Bug|Cc|Link|Test|Issue|Change-Id|Merged-by):\s", re.IGNORECASE
)
# Body lines that are boilerplate, not a PR title.
_NOT_A_TITLE = re.compile(
    r"^(See merge request|Approved-by|Closes|Fixes|Resolves|\* )", re.IGNORECASE
)
TRAILER_KEYS = frozenset(
    {
        "co-authored-by",
        "signed-off-by",
        "reviewed-by",
        "reviewed-on",
        "change-id",
        "acked-by",
        "tested-by",
    }
)


@dataclass(frozen=True)
class Classified:
    """How one first-parent commit landed, read from its parents and message."""

    kind: CommitKind
    number: int | None
    title: str


def _is_trailer(line: str) -> bool:
    """A `Key: value` trailer line; `fix: …` and `docs(x): …` are conventional-commit titles, not
    trailers: a trailer's key is a known one or hyphenated (`Signed-off-by`, `Change-Id`)."""
    match = _TRAILER.match(line)
    return match is not None and (match.group(1).lower() in TRAILER_KEYS or "-" in match.group(1))


def written_by_tools(line: str) -> bool:
    """Whether a line of a message's body is one that git, a forge or a review tool writes (a
    trailer, `Fixes: <sha> (…)` or `Bug: 123` as the kernel and Gerrit write them, `See merge
    request …`, `This reverts commit …`, `(cherry picked from commit …)`), not prose."""
    text = line.strip()
    return (
        _is_trailer(text)
        or bool(_TOOL_KEY.match(text))
        or bool(_GITLAB_MERGE.match(text))
        or bool(_REVERTS.match(text))
        or bool(_CHERRY_PICKED.match(text))
    )


def _first_body_line(lines: list[str]) -> str | None:
    for line in lines[1:]:
        if line and not _NOT_A_TITLE.match(line) and not _is_trailer(line):
            return line
    return None


def is_sync_subject(subject: str) -> bool:
    """Whether a merge's subject says it brings a branch in (rather than describing a change)."""
    return bool(_SYNC_SUBJECT.match(subject.strip()))


def is_bot(author: str, email: str) -> bool:
    return author.endswith("[bot]") or "[bot]@" in email


def classify(parent_count: int, message: str, author: str, email: str) -> Classified:
    """Decide what one first-parent commit is, from its parents and message alone."""
    lines = [line.strip() for line in message.strip().splitlines()]
    subject = lines[0] if lines else ""
    suffix = _NUMBER_SUFFIX.search(subject)
    if parent_count > 1:
        github = _GITHUB_MERGE.match(subject)
        if github:
            return Classified(
                "merge", int(github.group(1)), _first_body_line(lines) or github.group(2)
            )
        bitbucket = _BITBUCKET_MERGE.match(subject)
        if bitbucket:
            return Classified(
                "merge", int(bitbucket.group(2)), _first_body_line(lines) or bitbucket.group(1)
            )
        gitlab = _GITLAB_MERGE.search(message)
        if gitlab:
            return Classified("merge", int(gitlab.group(2)), _first_body_line(lines) or subject)
        if suffix:
            return Classified("merge", int(suffix.group(1)), subject[: suffix.start()].strip())
        # A merge that names no PR and says it merges a branch is a branch sync; one whose
        # subject describes a change is that change, carded like a direct commit.
        if is_sync_subject(subject):
            return Classified("sync", None, subject)
        return Classified("bot" if is_bot(author, email) else "direct", None, subject)
    if suffix:
        return Classified("squash", int(suffix.group(1)), subject[: suffix.start()].strip())
    gerrit = _GERRIT_REVIEWED_ON.search(message)
    if gerrit:
        return Classified("squash", int(gerrit.group(1)), subject)
    return Classified("bot" if is_bot(author, email) else "direct", None, subject)


def trailers(message: str) -> tuple[tuple[str, str], ...]:
    """The known `Key: value` trailers of a message (Co-authored-by, Signed-off-by, …), in order."""
    found = []
    for line in message.splitlines():
        match = _TRAILER.match(line.strip())
        if match and match.group(1).lower() in TRAILER_KEYS:
            found.append((match.group(1), match.group(2)))
    return tuple(found)


def people_of(author: str, email: str, message: str) -> tuple[tuple[str, str], ...]:
    """(name, email) of the commit author, then of every `Co-authored-by` trailer."""
    people = [(author, email)]
    for key, value in trailers(message):
        if key.lower() == "co-authored-by":
            match = _PERSON.match(value.strip())
            people.append((match.group(1), match.group(2)) if match else (value.strip(), ""))
    return tuple(person for person in people if person[0])


def reverted_sha(message: str) -> str | None:
    """The commit a revert undoes (`This reverts commit X`), if the message says so."""
    match = _REVERTS.search(message)
    return match.group(1) if match else None


def is_revert(message: str) -> bool:
    return bool(_REVERT_SUBJECT.match(message.strip()) or _REVERTS.search(message))


def cherry_picked_from(message: str) -> str | None:
    """The original of a cherry-pick (`(cherry picked from commit X)`), if the message says so."""
    match = _CHERRY_PICKED.search(message)
    return match.group(1) if match else None
