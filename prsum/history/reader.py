"""Reconstruct merged PRs from a local clone's history (the only gitpython import).

The first-parent line of a branch is the sequence of things that landed on it: merge commits
(the PR's diff is against the first parent), squash commits, consecutive commits of one
rebase-merged PR, and direct commits. Everything is read from one streaming `git log` call;
patches and a PR's own commits are read per PR, only when a card needs them.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path

import git

from prsum.digest import with_definitions
from prsum.errors import PrReadError, RepositoryError, RevisionError
from prsum.history.messages import (
    Classified,
    cherry_picked_from,
    classify,
    is_revert,
    people_of,
    reverted_sha,
    trailers,
)
from prsum.history.patches import parse_changes, split_patch
from prsum.types import (
    Commit,
    Discovery,
    FileChange,
    FileDiff,
    OtherCommit,
    PrKind,
    PullRequest,
    RangeQuery,
    Related,
)

_BLAME_HEADER = re.compile(r"^([0-9a-f]{40}(?:[0-9a-f]{24})?) \d+ \d+")  # sha-1 or sha-256
# A search of the tree (an edit's old text) or of a file's history (blame): past this, the
# fact it would give (a leftover, an origin) is left out.
_SEARCH_SECONDS = 20
_SPAN_COMMITS = 500  # first-parent commits read to tell what a release ships
_FIELD = "\x1f"
_RECORD = "\x1e"
_LOG_FORMAT = _RECORD + _FIELD.join(["%H", "%P", "%an", "%ae", "%at", "%cI", "%B"])
_OWN_COMMITS_LIMIT = 50
# How a commit's file list is read, best first: with line counts and renames (reads blobs),
# statuses only (reads trees), none (a damaged tree).
_FILE_LISTS: tuple[tuple[str, ...], ...] = (("-M", "--raw", "--numstat"), ("--raw", "--no-renames"))
# Commits per git process when a long first-parent line is read in parallel.
_BATCH = 200
_WORKERS = max(
    1,
    min(
        4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ),
)


@dataclass(frozen=True)
class _Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    author_time: str
    date: str
    message: str
    files: tuple[FileChange, ...]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    def classified(self) -> Classified:
        return classify(len(self.parents), self.message, self.author, self.email)


def _parse_batch(output: bytes) -> Iterator[_Commit]:
    # Split on bytes, decode per record, so one bad byte spoils one message at most.
    for record in output.split(_RECORD.encode()):
        if record:
            yield _parse_record(record.decode("utf-8", errors="replace"))


def _parse_record(record: str) -> _Commit:
    header, _, changes = record.partition("\0")
    sha, parents, author, email, author_time, date, message = header.split(_FIELD, 6)
    return _Commit(
        sha=sha,
        parents=tuple(parents.split()),
        author=author,
        email=email,
        author_time=author_time,
        date=date,
        message=message.strip(),
        files=parse_changes(changes.split("\0")),
    )


def git_error(exc: git.GitCommandError) -> str:
    """The line of git's stderr that says what went wrong, without gitpython's quoting
    (`stderr: 'fatal: …'`)."""
    text = exc.stderr or str(exc)
    text = re.sub(r"^\s*stderr:\s*'", "", text.strip()).rstrip("'").strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or [str(exc.status)])[-1]


def matches_paths(path: str, specs: tuple[str, ...]) -> bool:
    """Whether `path` falls under one of the pathspecs: a folder, a file, or a glob."""
    for spec in specs:
        spec = spec.rstrip("/")
        if (
            spec in ("", ".")
            or path == spec
            or path.startswith(spec + "/")
            or fnmatch.fnmatch(path, spec)
        ):
            return True
    return False


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
        self._pull_index_cache: dict[tuple[str, str, str], int] | None = None
        # Hunk headers that name the enclosing function: see the file's own comment.
        attributes = files("prsum.history").joinpath("gitattributes")
        self._repo.git.set_persistent_git_options(c=f"core.attributesFile={attributes}")

    def previous_tag(self, rev: str) -> str | None:
        """The latest tag reachable from `rev`, not counting a tag on `rev` itself."""
        sha = self.resolve(rev)
        for start in (sha, f"{sha}^"):
            try:
                tag = str(self._repo.git.describe("--tags", "--abbrev=0", start))
            except git.GitCommandError:
                return None
            if self.resolve(tag) != sha:
                return tag
        return None

    def resolve(self, rev: str) -> str:
        """The full sha of a commit-ish, or a RevisionError naming it."""
        try:
            return str(self._repo.git.rev_parse("--verify", "--quiet", f"{rev}^{{commit}}"))
        except git.GitCommandError:
            if not self._repo.head.is_valid():
                raise self._head_problem() from None
            raise RevisionError(
                f"unknown revision {rev!r} in {self.path}: check the name with `git log --oneline`"
            ) from None

    def _head_problem(self) -> RepositoryError:
        """Why HEAD names no readable commit: a new repository, or a damaged one."""
        try:
            sha = str(self._repo.git.rev_parse("--verify", "--quiet", "HEAD"))
        except git.GitCommandError:
            return RepositoryError(f"{self.path} has no commits yet: there is nothing to summarize")
        return RepositoryError(
            f"HEAD of {self.path} names commit {sha[:12]}, which git cannot read: the "
            "repository is damaged (`git fsck` says more)"
        )

    def _stream_commits(self, log_args: list[str]) -> Iterator[_Commit]:
        """The commits of a first-parent line, newest first, with their file lists.

        Diffing is git's cost and one git process diffs on one core, so a long line is read in
        batches by parallel git processes, at most one batch per core ahead of the reader:
        memory stays bounded however long the history.
        """
        try:
            shas = self._repo.git.rev_list("--first-parent", *log_args).split()
            batches = [shas[start : start + _BATCH] for start in range(0, len(shas), _BATCH)]
            if len(batches) <= 1 or _WORKERS == 1:
                for batch in batches:
                    yield from _parse_batch(self._log_batch(batch))
                return
            with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
                pending: deque[Future[bytes]] = deque()
                for batch in batches:
                    pending.append(pool.submit(self._log_batch, batch))
                    if len(pending) > _WORKERS:
                        yield from _parse_batch(pending.popleft().result())
                while pending:
                    yield from _parse_batch(pending.popleft().result())
        except git.GitCommandError as exc:
            raise RepositoryError(f"git failed in {self.path}: {git_error(exc)}") from None

    def _log_batch(self, shas: list[str]) -> bytes:
        """The log records of `shas`. A commit git cannot diff (a damaged object) costs only
        its own file list, never the rest of the range: its card then fails on its own."""
        try:
            return self._log(shas, _FILE_LISTS[0])
        except git.GitCommandError:
            if len(shas) > 1:
                return b"".join(self._log_batch([sha]) for sha in shas)
        for file_list in _FILE_LISTS[1:]:
            try:
                return self._log(shas, file_list)
            except git.GitCommandError:
                continue
        return self._log(shas, ())

    def _log(self, shas: list[str], file_list: tuple[str, ...]) -> bytes:
        output: bytes = self._repo.git.log(
            "--no-walk=unsorted",
            "--diff-merges=first-parent",
            *file_list,
            "-z",
            f"--format={_LOG_FORMAT}",
            *shas,
            stdout_as_string=False,
        )
        return output

    def _log_args(self, query: RangeQuery) -> list[str]:
        spec = query.spec
        if "..." in spec or spec.count("..") > 1:
            raise RevisionError(f"cannot read range {spec!r}: use A..B, or a single revision")
        start, dots, end = spec.partition("..")
        if dots:
            args = [f"{self.resolve(start or 'HEAD')}..{self.resolve(end or 'HEAD')}"]
        else:
            args = [self.resolve(spec)]
        if query.since:
            args.append(f"--since={query.since}")
        if query.until:
            args.append(f"--until={query.until}")
        return args

    def _pull_index(self) -> dict[tuple[str, str, str], int]:
        """PR commits kept under `refs/pull/N/head`, by (author email, author time, subject).

        A rebase merge copies a PR's commits onto the main line with new shas but the same
        author, author date and subject: this is how such copies are traced back to their PR.
        """
        if self._pull_index_cache is None:
            self._pull_index_cache = {}
            if self._repo.git.for_each_ref("--count=1", "refs/pull/"):
                output = self._repo.git.log(
                    "--source",
                    "--glob=refs/pull/*/head",
                    f"--format=%S{_FIELD}%ae{_FIELD}%at{_FIELD}%s",
                )
                for line in output.splitlines():
                    ref, email, author_time, subject = line.split(_FIELD, 3)
                    parts = ref.split("/")
                    if len(parts) >= 4 and parts[2].isdigit():
                        self._pull_index_cache[(email, author_time, subject)] = int(parts[2])
        return self._pull_index_cache

    def _group_number(self, commit: _Commit, classified: Classified) -> int | None:
        """The PR number that ties a single-parent commit to its neighbours of the same PR."""
        if len(commit.parents) > 1 or classified.kind == "sync":
            return None
        if classified.number is not None:
            return classified.number
        return self._pull_index().get((commit.email, commit.author_time, commit.subject))

    def iter_range(self, query: RangeQuery | str) -> Iterator[PullRequest | OtherCommit]:
        """Walk the first-parent line of the query's range (or a plain `A..B`), newest first.

        PRs and direct commits come out as PullRequest; branch syncs and (unless asked) bots'
        direct commits as OtherCommit. Later reverts are noted on the PRs they undo.
        """
        query = RangeQuery(query) if isinstance(query, str) else query
        reverted_by: dict[str, str] = {}
        produced = 0
        for group in self._groups(self._stream_commits(self._log_args(query))):
            item = self._item(group, query)
            if isinstance(item, PullRequest):
                undone = next(
                    (label for sha, label in reverted_by.items() if item.sha.startswith(sha)), None
                )
                if undone:
                    item = replace(item, related=(*item.related, Related("reverted_by", undone)))
                if item.kind == "revert" and (sha := reverted_sha(item.message)):
                    reverted_by[sha] = item.label
            if query.paths and not any(
                matches_paths(f.path, query.paths) for f in self._files_of(item)
            ):
                continue
            yield item
            if isinstance(item, PullRequest):
                produced += 1
                if query.last is not None and produced >= query.last:
                    return

    @staticmethod
    def _files_of(item: PullRequest | OtherCommit) -> tuple[FileChange, ...]:
        return item.files if isinstance(item, PullRequest) else item.files_changed

    def _groups(self, commits: Iterator[_Commit]) -> Iterator[list[_Commit]]:
        """Consecutive commits of one PR (a rebase merge) together; every other commit alone."""
        pending: list[_Commit] = []
        pending_number: int | None = None
        for commit in commits:
            number = self._group_number(commit, commit.classified())
            if pending and (number is None or number != pending_number):
                yield pending
                pending = []
            if number is None:
                yield [commit]
            else:
                pending.append(commit)
                pending_number = number
        if pending:
            yield pending

    def _item(self, commits: list[_Commit], query: RangeQuery) -> PullRequest | OtherCommit:
        newest = commits[0]
        classified = newest.classified()
        number = self._group_number(newest, classified)
        if classified.kind == "sync" or (
            classified.kind == "bot" and number is None and not query.include_bots
        ):
            brings = (
                self._synced_prs(newest) if classified.kind == "sync" and query.follow_sync else ()
            )
            return OtherCommit(
                newest.sha,
                "sync" if classified.kind == "sync" else "bot",
                newest.subject,
                newest.author,
                newest.date,
                brings=brings,
                files_changed=newest.files,
            )
        return self._to_pr(commits, number)

    def _synced_prs(self, merge: _Commit) -> tuple[PullRequest, ...]:
        """The PRs a branch sync brings in: those on its second parent's line, not on the first's."""
        query = RangeQuery(spec=f"{merge.parents[0]}..{merge.parents[1]}")
        return tuple(
            item for item in self.iter_range(query) if isinstance(item, PullRequest) and item.number
        )

    def _to_pr(
        self, commits: list[_Commit], number: int | None, kind_if_not_pr: PrKind = "direct"
    ) -> PullRequest:
        """One PR from its first-parent commits, newest first (several only for a rebase merge)."""
        newest, oldest = commits[0], commits[-1]
        classified = newest.classified()
        kind: PrKind
        if len(commits) > 1 or (number is not None and classified.number is None):
            kind = "rebase"  # several commits, or one traced to its PR through refs/pull
        elif classified.kind in ("merge", "squash", "direct"):
            kind = classified.kind
        else:
            kind = kind_if_not_pr
        number = classified.number if classified.number is not None else number
        message = "\n\n".join(commit.message for commit in reversed(commits))
        reverts = None
        if is_revert(newest.message):
            kind = "revert"
            reverts = self._label_of(reverted_sha(newest.message))
        people = _distinct_people(
            person
            for commit in reversed(commits)
            for person in people_of(commit.author, commit.email, commit.message)
        )
        return PullRequest(
            number=number,
            kind=kind,
            sha=newest.sha,
            base_sha=oldest.parents[0] if oldest.parents else None,
            title=classified.title if len(commits) == 1 else _title_of_group(commits, classified),
            message=message,
            authors=tuple(name for name, _ in people),
            author_emails=tuple(email for _, email in people),
            merged_at=newest.date,
            files=newest.files if len(commits) == 1 else _merge_file_lists(commits),
            trailers=trailers(message),
            reverts=reverts,
            cherry_picked_from=cherry_picked_from(message),
        )

    def _label_of(self, sha: str | None) -> str | None:
        """`#N` for a commit that landed as PR N, else its short sha (for reverts' links)."""
        if sha is None:
            return None
        try:
            commit = next(self._stream_commits(["-1", self.resolve(sha)]))
        except (RevisionError, RepositoryError, StopIteration):
            return sha[:7]
        number = commit.classified().number
        return f"#{number}" if number is not None else sha[:7]

    def discover(self, query: RangeQuery | str) -> Discovery:
        """Everything on the first-parent line of a range, sorted into PRs and other commits."""
        query = RangeQuery(query) if isinstance(query, str) else query
        entries: list[PullRequest] = []
        others: dict[str, list[OtherCommit]] = {"bot": [], "sync": []}
        for item in self.iter_range(query):
            if isinstance(item, PullRequest):
                entries.append(item)
            else:
                others[item.kind].append(item)
        if not entries and not any(others.values()):
            raise RevisionError(
                f"range {query.spec!r} selects no commits: is it reversed, are both ends the same, "
                "or do the date and path filters exclude everything?"
            )
        return Discovery(query.spec, tuple(entries), tuple(others["bot"]), tuple(others["sync"]))

    def find_pr(self, rev: str) -> PullRequest:
        """One PR by `#N` (searched along HEAD's first-parent line) or by a commit-ish."""
        if rev.startswith("#") and rev[1:].isdigit():
            number = int(rev[1:])
            for item in self.iter_range(RangeQuery("HEAD")):
                if isinstance(item, PullRequest) and item.number == number:
                    return item
            raise RevisionError(f"no PR #{number} on the first-parent line of HEAD in {self.path}")
        commit = next(self._stream_commits(["-1", self.resolve(rev)]))
        # A bot commit or a branch sync asked for by name is still worth a card.
        kind_if_not_pr: PrKind = "merge" if len(commit.parents) > 1 else "direct"
        return self._to_pr(
            [commit], self._group_number(commit, commit.classified()), kind_if_not_pr
        )

    def diff(self, pr: PullRequest, *, definitions: bool = True) -> tuple[FileDiff, ...]:
        """The PR's patch against its base (the first parent), split per file; with
        `definitions`, what each file's change does to its definitions, where a grammar reads
        the file (prsum.digest)."""
        common = ["-M", "-C", "--no-color", "--no-ext-diff", "--full-index"]
        try:
            if pr.base_sha and self._has_ref(pr.base_sha):
                text = self._repo.git.diff(*common, pr.base_sha, pr.sha, stdout_as_string=False)
            else:  # a root commit, or a shallow clone's boundary: everything is new
                text = self._repo.git.show(
                    *common, "--format=", "--root", pr.sha, stdout_as_string=False
                )
        except git.GitCommandError as exc:
            raise PrReadError(f"cannot read the diff of {pr.label}: {git_error(exc)}") from None
        diffs = split_patch(text.decode("utf-8", errors="replace"), pr.files)
        return with_definitions(diffs, self.blob) if definitions else diffs

    def blob(self, sha: str, max_bytes: int) -> bytes | None:
        """A blob's bytes, through git's long-running `cat-file` process; None when the clone
        lacks it (a shallow or partial clone), it is no blob, or it is over `max_bytes`."""
        try:
            # gitpython's annotations say str; the type comes as bytes.
            header: tuple[object, object, int] = self._repo.git.get_object_header(sha)
            _, kind, size = header
            if kind != b"blob" or size > max_bytes:
                return None
            data: bytes = self._repo.git.get_object_data(sha)[3]
        except (ValueError, git.GitCommandError):
            return None
        return data

    def file_at(self, rev: str, path: str, max_bytes: int) -> bytes | None:
        """The bytes of `path` in `rev`'s tree, as `blob` reads them; None in a partial clone
        (git would fetch a blob it lacks)."""
        return None if self.fetches_on_demand else self.blob(f"{rev}:{path}", max_bytes)

    @functools.cached_property
    def fetches_on_demand(self) -> bool:
        """Whether the clone is partial: git would fetch the blobs it lacks from a remote as a
        search reads them (prsum opens no connection, so such reads are not made)."""
        reader = self._repo.config_reader()
        return any(
            reader.get_value(section, option, default="") not in ("", False)
            for section in reader.sections()
            for option in ("partialclone", "promisor")
            if (section == "extensions" or section.startswith("remote "))
            and reader.has_option(section, option)
        )

    def grep(self, rev: str, texts: Sequence[str]) -> tuple[tuple[str, int, str], ...]:
        """(path, line number, line) of each line of `rev`'s tree that has any of `texts`
        (fixed strings, case and all), text files only, in one pass over the tree; none in a
        partial clone, or where git cannot search in time."""
        if not texts or self.fetches_on_demand:
            return ()
        patterns = [argument for text in texts for argument in ("-e", text)]
        try:
            output: str = self._repo.git.grep(
                "-F",
                "-I",
                "-n",
                "--no-color",
                "-z",
                *patterns,
                rev,
                "--",
                kill_after_timeout=_SEARCH_SECONDS,
                env={"GIT_NO_LAZY_FETCH": "1"},
            )
        except (git.GitCommandError, OSError):
            return ()  # nothing matched (git grep exits 1), too long, or too many patterns
        # `path\0number\0line\n` a line: a path may hold a newline, a line cannot.
        fields = output.split("\0")
        found = []
        path = fields[0]
        for index in range(1, len(fields) - 1, 2):
            line, _, following = fields[index + 1].partition("\n")
            found.append((path.removeprefix(f"{rev}:"), int(fields[index]), line))
            path = following
        return tuple(found)

    def blame(self, rev: str, path: str, numbers: Sequence[int]) -> tuple[str | None, ...]:
        """The commit that last changed each of the lines `numbers` of `path` at `rev`, as
        `git blame` tells it; None for a line of a boundary commit (a shallow clone's, or the
        root: git cannot tell a grafted commit from a first one). Nothing in a partial clone,
        or where git cannot tell in time. No revisions are skipped, whatever the
        configuration says (`blame.ignoreRevsFile`)."""
        if not numbers or self.fetches_on_demand:
            return ()
        ranges = [
            argument for first, last in _runs(numbers) for argument in ("-L", f"{first},{last}")
        ]
        try:
            output: str = self._repo.git.blame(
                "--line-porcelain",
                "--ignore-revs-file=",
                *ranges,
                rev,
                "--",
                path,
                kill_after_timeout=_SEARCH_SECONDS,
                env={"GIT_NO_LAZY_FETCH": "1"},
            )
        except (git.GitCommandError, OSError):
            return ()
        # `--line-porcelain`: a header line `sha old new ...` per line, then its fields, the
        # `boundary` flag among them, then the line itself after a tab.
        commits: list[str | None] = []
        sha: str | None = None
        for line in output.split("\n"):
            if line.startswith("\t"):
                commits.append(sha)
            elif header := _BLAME_HEADER.match(line):
                sha = header.group(1)
            elif line == "boundary":
                sha = None
        return tuple(commits)

    def landing(self, sha: str, base: str) -> PullRequest | None:
        """The PR on `base`'s first-parent line that brought commit `sha` in: `sha` itself,
        or the merge one of whose other parents holds it; for a sync of a long-lived branch,
        the PR on that branch that brought `sha` in. None where git cannot tell, or `base`
        does not hold `sha`."""
        try:
            if not self._holds(base, sha):
                return None
            line = self._repo.git.rev_list("--first-parent", f"{sha}..{base}").split()
            merge = None  # the line's commit that brought `sha` in, where that is not `sha`
            if line:
                # Newest first, the line's commits hold `sha` up to the one that brought it
                # in, and none after: the first to hold it is found by halving.
                low, high = 0, len(line) - 1
                while low < high:
                    middle = (low + high + 1) // 2
                    if self._holds(line[middle], sha):
                        low = middle
                    else:
                        high = middle - 1
                first = next(self._stream_commits(["-1", line[low]]))
                if first.parents[:1] != (sha,):  # else `sha` is on the line itself
                    merge = first
            commit = merge or next(self._stream_commits(["-1", sha]))
        except (git.GitCommandError, RepositoryError, StopIteration):
            return None
        classified = commit.classified()
        if merge is not None and classified.kind == "sync":
            # Only a sync of a long-lived branch is looked into: inside a branch merged as a
            # change of its own, a commit subject's `(#N)` may name an issue, not a PR.
            branch = next((p for p in commit.parents[1:] if self._holds(p, sha)), None)
            return self.landing(sha, branch) if branch else None
        return self._to_pr([commit], self._group_number(commit, classified))

    def span(self, start: str, end: str) -> tuple[PullRequest | OtherCommit, ...] | None:
        """The PRs, direct commits, bots' commits and syncs on the first-parent line of
        `start..end`, newest first (bots' commits included); None where git cannot tell, where
        `start` is not on `end`'s first-parent line (a commit of a branch synced in: what came
        "since" it is not a stretch of the line), or is more than `_SPAN_COMMITS` back (a
        release years after the last: its card would wait on reading all of it)."""
        try:
            line = self._repo.git.rev_list(
                "--first-parent", f"--max-count={_SPAN_COMMITS + 1}", end
            ).split()
            if start not in line:
                return None
            return tuple(self.iter_range(RangeQuery(f"{start}..{end}", include_bots=True)))
        except (git.GitCommandError, RepositoryError):
            return None

    def patch(self, sha: str, path: str) -> str | None:
        """Commit `sha`'s patch of `path` against its first parent; None where it has none
        (a root commit) or git cannot tell."""
        try:
            output: str = self._repo.git.diff(
                "--no-color", "--no-ext-diff", "--no-renames", f"{sha}^", sha, "--", path
            )
        except git.GitCommandError:
            return None
        return output

    def _holds(self, commit: str, ancestor: str) -> bool:
        """Whether `ancestor` is in `commit`'s history (or is `commit`)."""
        try:
            self._repo.git.merge_base("--is-ancestor", ancestor, commit)
        except git.GitCommandError as exc:
            if exc.status == 1:
                return False
            raise
        return True

    def own_commits(self, pr: PullRequest) -> tuple[Commit, ...]:
        """The PR's own commits, oldest first, where history keeps them.

        A merge's second parent holds them; a rebase merge's are the group itself; for a
        squash, `refs/pull/N/head` holds the originals when the clone has fetched it.
        """
        if pr.base_sha is None:
            return ()
        try:
            return self._own_commits(pr)
        except (git.GitCommandError, ValueError):
            return ()  # a shallow clone may lack them: they are context, not essential

    def _own_commits(self, pr: PullRequest) -> tuple[Commit, ...]:
        assert pr.base_sha is not None
        commit = self._repo.commit(pr.sha)
        if len(commit.parents) > 1:
            revs = [f"{pr.base_sha}..{pr.sha}^2"]
        elif pr.kind == "rebase":
            revs = [f"{pr.base_sha}..{pr.sha}"]
        elif pr.number is not None and self._has_ref(f"refs/pull/{pr.number}/head"):
            revs = [f"refs/pull/{pr.number}/head", "--not", pr.base_sha]
        else:
            return ()
        output = self._repo.git.log(
            "--reverse",
            f"--max-count={_OWN_COMMITS_LIMIT}",
            f"--format={_RECORD}%H{_FIELD}%an{_FIELD}%ae{_FIELD}%B",
            *revs,
        )
        commits = []
        for record in output.split(_RECORD):
            if record.strip():
                sha, author, email, message = record.split(_FIELD, 3)
                commits.append(Commit(sha.strip(), author, message.strip(), email))
        return tuple(commits)

    def with_own_commits(self, pr: PullRequest) -> tuple[PullRequest, tuple[Commit, ...]]:
        """The PR with its own commits read; a merge's authors become those commits' authors.

        A merge commit's author is whoever pressed "merge"; the people who wrote the PR are
        the authors (and co-authors) of the commits it brings in.
        """
        commits = self.own_commits(pr)
        if pr.kind != "merge" or not commits:
            return pr, commits
        people = _distinct_people(
            person
            for commit in commits
            for person in people_of(commit.author, commit.email, commit.message)
        )
        authors = tuple(name for name, _ in people)
        return replace(
            pr, authors=authors, author_emails=tuple(email for _, email in people)
        ), commits

    def _has_ref(self, ref: str) -> bool:
        try:
            self._repo.git.rev_parse("--verify", "--quiet", ref)
        except git.GitCommandError:
            return False
        return True


def _runs(numbers: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as runs of consecutive ones, (first, last) each."""
    runs: list[tuple[int, int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _distinct_people(people: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """(name, email) pairs, each name once, in first-seen order."""
    distinct: dict[str, tuple[str, str]] = {}
    for name, email in people:
        distinct.setdefault(name, (name, email))
    return tuple(distinct.values())


def _title_of_group(commits: list[_Commit], newest: Classified) -> str:
    """A rebase-merged PR's title: the numbered subject if one has it, else the oldest subject."""
    for commit in commits:
        classified = commit.classified()
        if classified.number is not None:
            return classified.title
    return commits[-1].subject if newest.number is None else newest.title


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
