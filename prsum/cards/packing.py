"""Packing: the prompt for one PR under a token budget — a frame, then as much of the PR as fits.

Two views of the PR: `digest` (each file's added and changed definitions) for small models,
which continue a raw diff instead of describing it, and `diff` (the packed diff and the
digest) for bigger ones; diff chunks that do not fit can be noted by the model (map-reduce).
"""

from __future__ import annotations

from dataclasses import dataclass

from prsum import prompts
from prsum.budget import NO_ROOM, compact_patch, pack_diff, salience_order
from prsum.cache import JsonStore
from prsum.cards.checks import copied
from prsum.digest import FileDigest, digest_file
from prsum.errors import ConfigError
from prsum.filekinds import file_kind
from prsum.grounding import Evidence, cited_names
from prsum.llm import Backend, Completion, Sampling
from prsum.mapreduce import NOTE_TOKENS, ChunkNoter
from prsum.profiles import PromptStyle
from prsum.types import Facts, FileChange, FileDiff, Language, LeftOut, PackedDiff, PullRequest

# The digest lists each source file on a line of its own, up to this many; other kinds get
# lines of their own only when they are few, else one line per kind.
_MAX_SOURCE_LINES = 16
_MAX_LINES_PER_KIND = 2


@dataclass
class Usage:
    """What writing one card cost the model."""

    prompt_tokens: int = 0
    sent: int = 0  # prompt tokens of all calls: what a model without a KV cache would evaluate
    evaluated: int = 0
    completion: int = 0
    seconds: float = 0.0
    prompt_seconds: float = 0.0

    def add(self, completion: Completion) -> None:
        self.prompt_tokens = max(self.prompt_tokens, completion.prompt_tokens)
        self.sent += completion.prompt_tokens
        self.evaluated += completion.prompt_tokens_evaluated
        self.completion += completion.completion_tokens
        self.seconds += completion.seconds
        self.prompt_seconds += completion.prompt_seconds


@dataclass(frozen=True)
class _DigestLine:
    text: str
    paths: tuple[str, ...]
    reason: str | None  # why its files are not listed one by one, for a grouped line


@dataclass(frozen=True)
class Packed:
    """A packed prompt and what it holds of the PR."""

    prompt: str
    digests: dict[str, FileDigest]
    coverage_whole: tuple[str, ...]
    coverage_clipped: tuple[str, ...]
    left_out: tuple[LeftOut, ...]

    @property
    def files_unparsed(self) -> tuple[str, ...]:
        """Source and test files whose definitions come from the line rule, not a grammar."""
        return tuple(path for path, digest in self.digests.items() if digest.unparsed)


class Packer:
    """Packs every card's prompt for one backend, language, view and frame."""

    def __init__(
        self,
        backend: Backend,
        lang: Language,
        style: PromptStyle,
        frame: str,
        reserve: int,
        *,
        map_chunks: int = 0,
        note_store: JsonStore | None = None,
        sampling: Sampling,
        layout: str = "fields",
    ) -> None:
        """`reserve`: tokens kept free for the answer. `map_chunks`: at most this many
        model-written chunk notes per PR (diff view only). `layout`: the prompt whose layout of
        the PR to use (prsum.prompts.PR_LAYOUTS)."""
        self.block = prompts.PR_LAYOUTS[layout]
        self.backend = backend
        self.lang = lang
        self.style = style
        self.frame = frame
        self.reserve = reserve
        self.map_chunks = map_chunks
        self.noter = (
            ChunkNoter(backend, lang, note_store, sampling)
            if map_chunks > 0 and style == "diff"
            else None
        )
        self.frame_tokens = backend.count_tokens(frame)

    def _too_small(self, needed: int) -> ConfigError:
        return ConfigError(
            f"--ctx {self.backend.context_size} is too small for prsum's prompt: use at least {needed}"
        )

    def pack(
        self,
        pr: PullRequest,
        facts: Facts,
        diffs: tuple[FileDiff, ...],
        extra: list[str],
        evidence: Evidence,
        usage: Usage,
    ) -> Packed:
        """The prompt for `pr`, as much of it as fits, checked against the context size."""
        by_path = {diff.path: diff for diff in diffs}
        digests = {
            change.path: digest_file(by_path.get(change.path, FileDiff(change.path, "")))
            for change in pr.files
        }
        plan = self._digest_plan(pr, digests)
        context = self.backend.context_size
        # The digest loses its least salient lines until the prompt fits.
        while True:
            lines = [entry.text for entry in plan]
            prompt = self.frame + self.block(pr, facts, lines, None, self.lang, extra)
            if self.backend.count_tokens(prompt) + self.reserve <= context:
                break
            if not plan:
                raise self._too_small(self.frame_tokens + self.reserve + 256)
            plan.pop()
        listed = {path for entry in plan for path in entry.paths}
        unlisted = [
            LeftOut(c.path, "not in the digest: no room left in the context")
            for c in pr.files
            if c.path not in listed
        ]
        if self.style == "digest":
            whole = [path for entry in plan if entry.reason is None for path in entry.paths]
            grouped = [
                LeftOut(path, entry.reason)
                for entry in plan
                if entry.reason
                for path in entry.paths
            ]
            return Packed(prompt, digests, tuple(whole), (), tuple(grouped + unlisted))
        empty = self.frame + self.block(pr, facts, lines, "", self.lang, extra)
        budget = context - self.reserve - self.backend.count_tokens(empty)
        if budget < 0:
            raise self._too_small(context - budget + 256)
        packed = pack_diff(pr.files, diffs, budget, self.backend)
        noted: dict[str, str] = {}
        if self.noter is not None and any(item.reason == NO_ROOM for item in packed.left_out):
            # Map-reduce: make room for one note line per chunk of what does not fit.
            budget -= self.map_chunks * (NOTE_TOKENS + 8)
            packed = pack_diff(pr.files, diffs, max(0, budget), self.backend)
            extra, noted = self._noted(diffs, packed, extra, evidence, usage)
        # The joined pieces can count a few tokens more than their sum: shrink until it fits.
        while True:
            prompt = self.frame + self.block(pr, facts, lines, packed.text, self.lang, extra)
            overflow = self.backend.count_tokens(prompt) + self.reserve - context
            if overflow <= 0:
                left_out = tuple(
                    LeftOut(item.path, noted[item.path]) if item.path in noted else item
                    for item in packed.left_out
                )
                return Packed(
                    prompt, digests, packed.coverage_whole, packed.coverage_clipped, left_out
                )
            if not packed.text:
                raise self._too_small(context + overflow + 256)
            budget -= overflow + 8
            packed = pack_diff(pr.files, diffs, budget, self.backend)

    def _noted(
        self,
        diffs: tuple[FileDiff, ...],
        packed: PackedDiff,
        extra: list[str],
        evidence: Evidence,
        usage: Usage,
    ) -> tuple[list[str], dict[str, str]]:
        """Notes on the files left out for room: extra prompt lines, and each noted file's reason."""
        assert self.noter is not None
        patches = {diff.path: compact_patch(diff.patch) for diff in diffs}
        pieces = [
            (item.path, patches[item.path])
            for item in packed.left_out
            if item.reason == NO_ROOM and item.path in patches
        ]
        lines = list(extra)
        noted: dict[str, str] = {}
        for note in self.noter.notes(pieces, self.map_chunks):
            if note.completion is not None:
                usage.add(note.completion)
            if (
                not note.text
                or copied(note.text, evidence.text, self.noter.frame, self.lang)
                or any(not evidence.knows(name) for name in cited_names(note.text))
            ):
                continue
            lines.append(prompts.label(self.lang, prompts.LABELS[self.lang].notes) + note.text)
            noted.update(
                (path, f"seen through a chunk note ({len(note.paths)} files)")
                for path in note.paths
            )
        return lines, noted

    def _digest_plan(self, pr: PullRequest, digests: dict[str, FileDigest]) -> list[_DigestLine]:
        """One line per source file (up to a cap) and per odd other file; the rest grouped by kind."""
        by_kind: dict[str, list[FileChange]] = {}
        for change in salience_order(pr.files):
            by_kind.setdefault(file_kind(change.path), []).append(change)
        plan: list[_DigestLine] = []
        for kind, changes in by_kind.items():
            cap = _MAX_SOURCE_LINES if kind == "source" else _MAX_LINES_PER_KIND
            if kind in ("lock", "vendored") or len(changes) > cap + 1:
                singles, rest = (
                    ([], changes) if kind != "source" else (changes[:cap], changes[cap:])
                )
            else:
                singles, rest = changes, []
            plan += [
                _DigestLine(prompts.change_line(c, digests[c.path], self.lang), (c.path,), None)
                for c in singles
            ]
            if rest:
                reason = f"compressed: one line for {len(rest)} {kind} files"
                plan.append(
                    _DigestLine(
                        prompts.group_line(kind, rest, self.lang),
                        tuple(c.path for c in rest),
                        reason,
                    )
                )
        return plan
