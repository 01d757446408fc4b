"""Reconstruct merged PRs from a local clone's history (the only gitpython import).

The first-parent line of a branch is the sequence of things that landed on it: merge commits
(the PR's diff is against the first parent), squash commits ending in `(#N)`, consecutive
commits of one rebase-merged PR, and direct commits. Everything is read from one streaming
`git log` call; patches are read per PR, only when a card needs them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import git

from prsum.errors import RepositoryError, RevisionError
from prsum.types import Discovery, FileChange, FileDiff, OtherCommit, PrKind, PullRequest

_FIELD = "\x1f"
_RECORD = "\x1e"
_LOG_FORMAT = _RECORD + _FIELD.join(["%H", "%P", "%an", "%ae", "%cI", "%B"])

_GITHUB_MERGE = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_NUMBER_SUFFIX = re.compile(r"\s*\(#(\d+)\)\s*$")
_CO_AUTHOR = re.compile(r"^Co-authored-by:\s*(.+?)\s*<([^>]*)>\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class _Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    date: str
    message: str
    files: tuple[FileChange, ...]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()


@dataclass(frozen=True)
class _Classified:
    kind: Literal["merge", "squash", "direct", "bot", "sync"]
    number: int | None
    title: str


def classify(parent_count: int, message: str, author: str, email: str) -> _Classified:
    """Decide what one first-parent commit is, from its parents and message alone."""
    lines = [line.strip() for line in message.strip().splitlines()]
    subject = lines[0] if lines else ""
    if parent_count > 1:
        github = _GITHUB_MERGE.match(subject)
        if github:
            body = [line for line in lines[1:] if line]
            return _Classified("merge", int(github.group(1)), body[0] if body else github.group(2))
        suffix = _NUMBER_SUFFIX.search(subject)
        if suffix:
            return _Classified("merge", int(suffix.group(1)), subject[: suffix.start()].strip())
        # A merge that names no PR brings another branch's line in: a branch sync.
        return _Classified("sync", None, subject)
    suffix = _NUMBER_SUFFIX.search(subject)
    if suffix:
        return _Classified("squash", int(suffix.group(1)), subject[: suffix.start()].strip())
    if author.endswith("[bot]") or "[bot]@" in email:
        return _Classified("bot", None, subject)
    return _Classified("direct", None, subject)


def authors_of(author: str, message: str) -> tuple[str, ...]:
    """The commit author, then every `Co-authored-by` trailer, each name once."""
    names = [author, *(match.group(1) for match in _CO_AUTHOR.finditer(message))]
    return tuple(dict.fromkeys(name for name in names if name))


def _parse_changes(tokens: list[str]) -> tuple[FileChange, ...]:
    """Parse the NUL-separated `--raw --numstat -z` section of one commit."""
    statuses: dict[str, tuple[str, str | None]] = {}
    counts: dict[str, tuple[int, int, bool]] = {}
    order: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip("\n")
        if not token:
            index += 1
            continue
        if token.startswith(":"):
            letter = token.split()[-1][:1]
            if letter in "RC":
                old, new = tokens[index + 1], tokens[index + 2]
                index += 3
            else:
                old, new = None, tokens[index + 1]
                index += 2
            status = {"A": "A", "D": "D", "R": "R", "C": "A"}.get(letter, "M")
            statuses[new] = (status, old)
            order.append(new)
            continue
        added_text, deleted_text, path = token.split("\t", 2)
        if not path:  # a rename: the two paths follow as their own tokens
            path = tokens[index + 2]
            index += 3
        else:
            index += 1
        binary = added_text == "-"
        counts[path] = (
            0 if binary else int(added_text),
            0 if binary else int(deleted_text),
            binary,
        )
    changes = []
    for path in order:
        status, old = statuses[path]
        added, deleted, binary = counts.get(path, (0, 0, False))
        changes.append(
            FileChange(path, status, added, deleted, old, binary)  # type: ignore[arg-type]
        )
    return tuple(changes)


class History:
    """A local git clone, read through gitpython."""

    def __init__(self, path: Path) -> None:
        try:
            self._repo = git.Repo(path, search_parent_directories=False)
        except git.NoSuchPathError:
            raise RepositoryError(f"{path} does not exist: pass --repo with a git clone") from None
        except git.InvalidGitRepositoryError:
            raise RepositoryError(
                f"{path} is not a git repository: pass --repo with a git clone"
            ) from None
        self.path = path

    def resolve(self, rev: str) -> str:
        """The full sha of a commit-ish, or a RevisionError naming it."""
        try:
            return str(self._repo.git.rev_parse("--verify", "--quiet", f"{rev}^{{commit}}"))
        except git.GitCommandError:
            raise RevisionError(
                f"unknown revision {rev!r} in {self.path}: check the name with `git log --oneline`"
            ) from None

    def _stream_commits(self, log_args: list[str]) -> Iterator[_Commit]:
        process = self._repo.git.log(
            "--first-parent",
            "--diff-merges=first-parent",
            "-M",
            "--raw",
            "--numstat",
            "-z",
            f"--format={_LOG_FORMAT}",
            *log_args,
            as_process=True,
        )
        # Split on bytes, decode per record: a chunk boundary may fall inside a UTF-8 character.
        buffer = b""
        stream = process.stdout
        try:
            while chunk := stream.read(1 << 16):
                buffer += chunk
                *records, buffer = buffer.split(_RECORD.encode())
                for record in records:
                    if record:
                        yield self._parse_record(record.decode("utf-8", errors="replace"))
            if buffer:
                yield self._parse_record(buffer.decode("utf-8", errors="replace"))
            process.wait()
        except git.GitCommandError as exc:
            message = (exc.stderr or str(exc)).strip().splitlines()
            raise RepositoryError(
                f"git log failed in {self.path}: {message[-1] if message else exc}"
            ) from None

    @staticmethod
    def _parse_record(record: str) -> _Commit:
        header, _, changes = record.partition("\0")
        sha, parents, author, email, date, message = header.split(_FIELD, 5)
        return _Commit(
            sha=sha,
            parents=tuple(parents.split()),
            author=author,
            email=email,
            date=date,
            message=message.strip(),
            files=_parse_changes(changes.split("\0")),
        )

    def iter_range(
        self, range_spec: str, include_bots: bool = False
    ) -> Iterator[PullRequest | OtherCommit]:
        """Walk the first-parent line of `A..B` (or of everything reachable from `B`), newest first.

        PRs and direct commits come out as PullRequest; branch syncs and (unless
        `include_bots`) bots' direct commits as OtherCommit.
        """
        if "..." in range_spec or range_spec.count("..") > 1:
            raise RevisionError(f"cannot read range {range_spec!r}: use A..B, or a single revision")
        start, dots, end = range_spec.partition("..")
        end_sha = self.resolve(end or "HEAD") if dots else self.resolve(range_spec)
        args = [f"{self.resolve(start or 'HEAD')}..{end_sha}"] if dots else [end_sha]
        pending: list[_Commit] = []
        for commit in self._stream_commits(args):
            kind = _classify_commit(commit)
            if pending and (
                kind.kind != "squash" or kind.number != _classify_commit(pending[0]).number
            ):
                yield _to_pr(pending)
                pending = []
            if kind.kind == "squash":
                pending.append(commit)
            elif kind.kind == "sync" or (kind.kind == "bot" and not include_bots):
                yield OtherCommit(commit.sha, kind.kind, commit.subject, commit.author, commit.date)
            else:
                yield _to_pr([commit])
        if pending:
            yield _to_pr(pending)

    def discover(self, range_spec: str, include_bots: bool = False) -> Discovery:
        """Everything on the first-parent line of a range, sorted into PRs and other commits."""
        entries: list[PullRequest] = []
        others: dict[str, list[OtherCommit]] = {"bot": [], "sync": []}
        for item in self.iter_range(range_spec, include_bots):
            if isinstance(item, PullRequest):
                entries.append(item)
            else:
                others[item.kind].append(item)
        if not entries and not any(others.values()):
            raise RevisionError(
                f"range {range_spec!r} selects no commits: is it reversed, or are both ends the same?"
            )
        return Discovery(range_spec, tuple(entries), tuple(others["bot"]), tuple(others["sync"]))

    def find_pr(self, rev: str) -> PullRequest:
        """One PR by `#N` (searched along HEAD's first-parent line) or by a commit-ish."""
        if rev.startswith("#") and rev[1:].isdigit():
            number = int(rev[1:])
            for item in self.iter_range("HEAD"):
                if isinstance(item, PullRequest) and item.number == number:
                    return item
            raise RevisionError(f"no PR #{number} on the first-parent line of HEAD in {self.path}")
        sha = self.resolve(rev)
        commit = next(self._stream_commits(["-1", sha]))
        # A bot commit or a branch sync asked for by name is still worth a card.
        return _to_pr([commit], kind_if_not_pr="merge" if len(commit.parents) > 1 else "direct")

    def diff(self, pr: PullRequest) -> tuple[FileDiff, ...]:
        """The PR's patch against its base (the first parent), split per file."""
        common = ["-M", "-C", "--no-color", "--no-ext-diff", "--full-index"]
        if pr.base_sha:
            text = self._repo.git.diff(*common, pr.base_sha, pr.sha, stdout_as_string=False)
        else:
            text = self._repo.git.show(
                *common, "--format=", "--root", pr.sha, stdout_as_string=False
            )
        return split_patch(text.decode("utf-8", errors="replace"), pr.files)


def _classify_commit(commit: _Commit) -> _Classified:
    return classify(len(commit.parents), commit.message, commit.author, commit.email)


def _to_pr(commits: list[_Commit], kind_if_not_pr: PrKind = "direct") -> PullRequest:
    """One PR from its first-parent commits, newest first (several only for a rebase merge)."""
    newest, oldest = commits[0], commits[-1]
    classified = _classify_commit(newest)
    kind: PrKind
    if len(commits) > 1:
        kind = "rebase"
    elif classified.kind in ("merge", "squash", "direct"):
        kind = classified.kind
    else:
        kind = kind_if_not_pr
    authors: tuple[str, ...] = ()
    for commit in reversed(commits):
        authors += authors_of(commit.author, commit.message)
    return PullRequest(
        number=classified.number,
        kind=kind,
        sha=newest.sha,
        base_sha=oldest.parents[0] if oldest.parents else None,
        title=classified.title,
        message="\n\n".join(commit.message for commit in reversed(commits)),
        authors=tuple(dict.fromkeys(authors)),
        merged_at=newest.date,
        files=newest.files if len(commits) == 1 else _merge_file_lists(commits),
    )


def _merge_file_lists(commits: list[_Commit]) -> tuple[FileChange, ...]:
    """Sum the per-commit file lists of a rebase-merged PR into one list."""
    merged: dict[str, FileChange] = {}
    for commit in reversed(commits):
        for change in commit.files:
            before = merged.get(change.path)
            if before is None:
                merged[change.path] = change
            else:
                merged[change.path] = FileChange(
                    change.path,
                    before.status,
                    before.added + change.added,
                    before.deleted + change.deleted,
                    before.old_path,
                    before.binary or change.binary,
                )
    return tuple(merged.values())


_DIFF_HEADER = re.compile(r"^diff --git ", re.MULTILINE)


def split_patch(text: str, files: tuple[FileChange, ...]) -> tuple[FileDiff, ...]:
    """Split a unified diff into per-file patches, named by the PR's file list where possible."""
    blocks = [block for block in _DIFF_HEADER.split(text) if block.strip()]
    known = [change.path for change in files]
    diffs = []
    for position, block in enumerate(blocks):
        path = _path_of_block(block)
        if path is None and position < len(known):
            path = known[position]
        diffs.append(FileDiff(path or f"file-{position}", "diff --git " + block))
    return tuple(diffs)


def _path_of_block(block: str) -> str | None:
    candidate = None
    for line in block.splitlines():
        for prefix in ("+++ b/", "rename to ", "copy to "):
            if line.startswith(prefix):
                return _unquote(line[len(prefix) :])
        if line.startswith("--- a/"):
            candidate = _unquote(line[len("--- a/") :])
        elif line.startswith("+++ /dev/null"):
            return candidate
        elif line.startswith("@@"):
            break
    header = block.splitlines()[0] if block else ""
    match = re.match(r"a/(.+) b/(.+)$", header)
    return _unquote(match.group(2)) if match else None


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of unusual file names."""
    path = path.rstrip("\t")
    if not (path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", errors="backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", errors="replace").decode("utf-8", errors="replace")
