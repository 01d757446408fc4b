"""Frozen dataclasses passed between prsum's stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

PrKind = Literal["merge", "squash", "rebase", "direct"]
Verdict = Literal["deep", "skim", "skip"]
Category = Literal[
    "feature", "fix", "perf", "refactor", "docs", "test", "ci", "deps", "release", "revert", "chore"
]
Language = Literal["zh", "en"]

VERDICTS: tuple[Verdict, ...] = ("deep", "skim", "skip")
CATEGORIES: tuple[Category, ...] = (
    "feature",
    "fix",
    "perf",
    "refactor",
    "docs",
    "test",
    "ci",
    "deps",
    "release",
    "revert",
    "chore",
)


@dataclass(frozen=True)
class FileChange:
    """One file a PR touched, as git's numstat sees it against the diff base."""

    path: str
    status: Literal["A", "M", "D", "R"]
    added: int
    deleted: int
    old_path: str | None = None
    binary: bool = False


@dataclass(frozen=True)
class PullRequest:
    """A PR reconstructed from history: one commit on the first-parent line (or a group of them)."""

    number: int | None
    kind: PrKind
    sha: str
    base_sha: str | None
    title: str
    message: str
    authors: tuple[str, ...]
    merged_at: str
    files: tuple[FileChange, ...]

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def deleted(self) -> int:
        return sum(f.deleted for f in self.files)

    @property
    def label(self) -> str:
        """How a person names this PR: `#N`, or the short sha for a direct commit."""
        return f"#{self.number}" if self.number is not None else self.sha[:7]


@dataclass(frozen=True)
class OtherCommit:
    """A first-parent commit that gets no card: a bot's direct commit or a branch sync."""

    sha: str
    kind: Literal["bot", "sync"]
    subject: str
    author: str
    date: str


@dataclass(frozen=True)
class Discovery:
    """What the history reader found along the first-parent line of a range."""

    range_spec: str
    entries: tuple[PullRequest, ...]  # PRs and direct commits, newest first: one card each
    bot_commits: tuple[OtherCommit, ...]
    sync_merges: tuple[OtherCommit, ...]

    @property
    def prs(self) -> tuple[PullRequest, ...]:
        return tuple(entry for entry in self.entries if entry.kind != "direct")

    @property
    def direct_commits(self) -> tuple[PullRequest, ...]:
        return tuple(entry for entry in self.entries if entry.kind == "direct")


@dataclass(frozen=True)
class FileDiff:
    """The patch text of one file of a PR."""

    path: str
    patch: str


@dataclass(frozen=True)
class Breaking:
    is_breaking: bool
    why: str = ""


@dataclass(frozen=True)
class Facts:
    """What can be said about a PR without a model."""

    category: Category
    breaking: Breaking
    tests_touched: bool
    docs_only: bool
    generated_or_vendored: tuple[str, ...]
    todos_added: tuple[str, ...]
    new_options: tuple[str, ...]
    files_changed: int
    lines_added: int
    lines_deleted: int
    source_lines_changed: int


@dataclass(frozen=True)
class LeftOut:
    path: str
    reason: str


@dataclass(frozen=True)
class Coverage:
    """What the model saw of a PR."""

    files_total: int
    files_whole: tuple[str, ...]
    files_clipped: tuple[str, ...]
    files_left_out: tuple[LeftOut, ...]
    prompt_tokens: int
    context_size: int
    view: Literal["digest", "diff"] = "diff"  # what the model was shown of each file


@dataclass(frozen=True)
class PackedDiff:
    """The part of a PR's diff chosen to fit the budget, and the record of what was cut."""

    text: str
    coverage_whole: tuple[str, ...]
    coverage_clipped: tuple[str, ...]
    left_out: tuple[LeftOut, ...]


@dataclass(frozen=True)
class Focus:
    path: str
    why: str
    symbol: str | None = None


@dataclass(frozen=True)
class CardBody:
    """The evaluative part of a card, written by the model and checked by our code."""

    headline: str
    verdict: Verdict
    minutes: int
    summary: str
    focus: tuple[Focus, ...] = ()
    lessons: tuple[str, ...] = ()
    follow_ups: tuple[str, ...] = ()
    ungrounded_removed: int = 0


@dataclass(frozen=True)
class ModelInfo:
    file: str
    sha256: str
    backend: str


@dataclass(frozen=True)
class Timing:
    prompt_tokens: int
    prompt_tokens_evaluated: int
    completion_tokens: int
    seconds: float


@dataclass(frozen=True)
class Card:
    """One evaluative card for one PR (schema `prsum.card/1`)."""

    pr: PullRequest
    facts: Facts
    body: CardBody
    coverage: Coverage
    model: ModelInfo
    timing: Timing
    lang: Language
    schema: str = field(default="prsum.card/1")


@dataclass(frozen=True)
class CardFailure:
    """A PR whose card could not be written; the run goes on with the others."""

    pr: PullRequest
    message: str


@dataclass(frozen=True)
class RangeReport:
    """Everything a range run produced, ready to render."""

    discovery: Discovery
    cards: tuple[Card, ...]
    failures: tuple[CardFailure, ...]
    lang: Language
    interrupted: bool = False
