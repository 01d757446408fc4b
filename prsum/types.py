"""Frozen dataclasses passed between prsum's stages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PrKind = Literal["merge", "squash", "rebase", "direct", "revert"]
Verdict = Literal["deep", "skim", "skip"]
SettingKind = Literal[
    "added", "removed", "changed", "edited", "item_added", "item_removed", "moved", "item_moved"
]
Category = Literal[
    "feature", "fix", "perf", "refactor", "docs", "test", "ci", "deps", "release", "revert", "chore"
]
Language = Literal["zh", "en"]


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
class PrMeta:
    """What a forge knows of a PR and git does not: read offline from `gh pr list --json` output."""

    source: str
    body: str
    labels: tuple[str, ...]
    author: str | None
    reviewers: tuple[str, ...]
    review_comments: tuple[str, ...]


@dataclass(frozen=True)
class Commit:
    """One of a PR's own commits (from a merge's second parent or a `refs/pull/N/head`)."""

    sha: str
    author: str
    message: str
    email: str = ""

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()


@dataclass(frozen=True)
class Related:
    """A later PR in the scanned range that undid this one or touched its code again."""

    relation: Literal["reverted_by", "touched_again"]
    label: str  # `#N` or a short sha
    name: str | None = None  # the definition touched again


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
    author_emails: tuple[str, ...] = ()  # the email of each of `authors`, in the same order
    trailers: tuple[tuple[str, str], ...] = ()
    reverts: str | None = None  # the change a revert undoes: `#N`, or a short sha
    cherry_picked_from: str | None = None
    related: tuple[Related, ...] = ()
    meta: PrMeta | None = None

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
    brings: tuple[
        PullRequest, ...
    ] = ()  # for a branch sync with --follow-sync: the PRs it merges in
    files_changed: tuple[FileChange, ...] = ()


@dataclass(frozen=True)
class RangeQuery:
    """Which part of history to read: a range, and the filters narrowing it."""

    spec: str = "HEAD"  # `A..B`, or a single revision for everything reachable from it
    since: str | None = None
    until: str | None = None
    last: int | None = None  # stop after this many PRs and direct commits
    paths: tuple[str, ...] = ()  # only PRs touching these folders, files or globs
    include_bots: bool = False
    follow_sync: bool = False


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


DefinitionStatus = Literal["added", "removed", "renamed", "changed"]


@dataclass(frozen=True)
class DefinitionChange:
    """One definition a file's change adds, removes, renames or changes, by the parser."""

    status: DefinitionStatus
    name: str  # as the code writes it where it is defined: `method`
    qualified: str  # with the definitions around it: `Class.method`, `Type::method`
    kind: str  # the grammar's node type: `function_definition`, `impl_item` …
    lines: int  # changed lines inside it (for added and removed: its nested definitions' too)
    # Part of the public API by the language's rule of visibility; for a removed or renamed
    # definition, whether the name that is gone was.
    public: bool
    old_name: str = ""  # renamed: the name before
    old_qualified: str = ""


@dataclass(frozen=True)
class ParsedChange:
    """What a file's change does to its definitions, from both versions of the file parsed."""

    definitions: tuple[DefinitionChange, ...]  # most changed lines first
    module_lines: int  # changed lines in no definition: imports, constants, top-level code


@dataclass(frozen=True)
class FileDiff:
    """The patch text of one file of a PR."""

    path: str
    patch: str
    parsed: ParsedChange | None = None  # None: no grammar read the file (prsum.digest's line rule)


@dataclass(frozen=True)
class Breaking:
    is_breaking: bool
    why: str = ""


@dataclass(frozen=True)
class LineEdit:
    """Code a PR edits in place, quoted from its diff: `before` became `after`; one of them is
    empty for a line of control flow removed or added (prsum.facts.edits)."""

    path: str
    before: str
    after: str


@dataclass(frozen=True)
class Precedent:
    """An unchanged `line` of the file a quoted edit is in, at the PR's commit, that already
    has the `text` the edit wrote (prsum.facts.echoes)."""

    edit: LineEdit
    text: str
    line: str


@dataclass(frozen=True)
class Leftover:
    """The line a quoted edit replaced (`text`, whole), still standing as it was at the PR's
    commit in `count` lines of `files` files of the product's code, most of them in `path`
    (prsum.facts.echoes)."""

    edit: LineEdit
    text: str
    path: str
    count: int
    files: int


Echo = Precedent | Leftover  # what the repository says of a quoted edit, beyond the diff


@dataclass(frozen=True)
class Reach:
    """A top-level function whose body the PR changes (`name`, in `path`) and the product's
    files, unchanged by the PR, that import and use it at its commit (prsum.facts.reach)."""

    name: str
    path: str
    users: tuple[str, ...]


@dataclass(frozen=True)
class LockChange:
    """A package whose pinned versions a lock file of the PR changes: `before` and `after` the
    versions the old and the new file pin, comma-separated ("" where one pins none: the
    package is added or dropped) (prsum.facts.locks)."""

    path: str
    name: str
    before: str
    after: str


@dataclass(frozen=True)
class SettingChange:
    """A setting a configuration file of the PR adds, removes or changes (prsum.facts.settings):
    its key path (`profile.debugging.debug`, `jobs.test.steps[Build].run`), what happened to it
    (`added`, `removed`, `changed`; `edited`: a line of a long value edited, `before` and
    `after` that line; `item_added`, `item_removed` for a value of a list) and its
    value before and after as the card shows them ("" where the file lacks it or it is too long
    to show). A value moved to another key (`moved`) or from one list to another
    (`item_moved`) has the new key as `key`, the old one as `before` and the value as `after`."""

    path: str
    key: str
    kind: SettingKind
    before: str
    after: str


@dataclass(frozen=True)
class Origin:
    """The earlier PR that last changed the lines a PR removes or rewrites, as `git blame` at
    the PR's base tells it (prsum.facts.origin)."""

    label: str  # `#N`, or a short sha for a commit that was no PR
    title: str
    days: int  # from its merge to this PR's
    whole: bool  # it last changed all of those lines, not only most of them


@dataclass(frozen=True)
class Shipped:
    """A change a release ships, as a reader names it."""

    label: str  # `#N`, or a short sha for a direct commit
    title: str


@dataclass(frozen=True)
class Release:
    """What a release PR ships: the changes on its base's first-parent line since the change
    that last set the project's version (prsum.facts.release)."""

    label: str  # that change: `#N`, or a short sha for a commit that was no PR
    title: str
    days: int  # from its merge to this PR's
    prs: int  # PRs merged since
    direct: int  # commits made directly since (bots' included)
    syncs: int  # merges of another branch since (a stable branch into main), not PRs
    largest: tuple[Shipped, ...]  # those that change the most source lines, most first


@dataclass(frozen=True)
class Assertion:
    """A check a PR's tests add, quoted from its diff: the behaviour the PR pins
    (prsum.facts.edits)."""

    path: str
    line: str


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
    # What a reader must understand (prsum.facts measures it; prsum.rubric weighs it):
    logic_lines: int = 0  # product code lines changed: not comments, formatting, version edits
    logic_files: int = 0  # source files with such lines
    new_modules: tuple[str, ...] = ()  # source files added with real code
    new_definitions: tuple[str, ...] = ()  # public definitions (or CLI options) added
    tricky: tuple[str, ...] = ()  # concurrency, ownership or lifecycle cues in the changed code
    branches: int = 0  # control-flow lines added
    test_lines_added: int = 0
    ci_lines: int = 0  # CI lines added, version bumps not counted
    config_lines: int = 0  # build and tool configuration lines changed, version bumps not counted
    test_lines: int = 0  # test code lines changed
    new_module_lines: int = 0  # of logic_lines, those in source files the PR adds
    mechanical: str = ""  # why no line needs reading: whitespace, typo, comments, rename, generated
    whitespace_only: bool = False  # every file's text the same, spaces and line breaks aside
    breaking_scope: str = ""  # "api" (callers must change) or "environment" (where it runs)
    edits: tuple[LineEdit, ...] = ()  # code edited in place, quoted from the diff
    assertions: tuple[Assertion, ...] = ()  # checks the tests add, quoted from the diff
    echoes: tuple[Echo, ...] = ()  # the repository's lines that bear on the edits (read by git)
    reach: tuple[Reach, ...] = ()  # files beyond the PR that use what it changes (read by git)
    account: str = ""  # what the description says beyond the title, quoted (prsum.facts.account)
    origin: Origin | None = None  # the earlier PR whose lines this one rewrites (read by git)
    locks: tuple[LockChange, ...] = ()  # packages whose pins the lock files change (read by git)
    settings: tuple[SettingChange, ...] = ()  # what the configuration files set (read by git)
    release: Release | None = None  # what a release ships (read by git)


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
    # Source and test files whose changed definitions come from the line rule: no grammar read them.
    files_unparsed: tuple[str, ...] = ()


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
class RuleEvent:
    """One thing a rule of the card writer refused or dropped of the model's text, or repaired:
    the card's record of why its text is what it is (`--format json`: `card.dropped`)."""

    rule: str  # e.g. "guard.number", "summary.loops", "grounding.removed"
    field: str  # the card field: headline, summary, focus, lessons, follow_ups, ...
    text: str  # what was refused, dropped or repaired (cut to a line)


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
    # The fields the model wrote (and our checks passed); the others are prsum's, from facts.
    by_model: tuple[str, ...] = ()
    dropped: tuple[RuleEvent, ...] = ()  # what the writer's rules refused, dropped or repaired

    @property
    def headline_by_model(self) -> bool:
        return "headline" in self.by_model


@dataclass(frozen=True)
class ModelInfo:
    """The model that wrote a card: a GGUF file run in prsum, or a model served at `server`."""

    file: str  # the file's name, or the served model's name
    sha256: str | None  # of the file; None for a served model, whose file prsum cannot read
    backend: str
    server: str | None = None
    strategy: str = "fields"  # how the card was written: prsum.cards.strategy
    adapter: str | None = None  # a LoRA adapter applied to the model: its file name
    adapter_sha256: str | None = None

    @property
    def identity(self) -> str:
        """What names the exact model, for cache keys."""
        base = self.sha256 or f"{self.backend} {self.server} {self.file}"
        return f"{base}+{self.adapter_sha256}" if self.adapter_sha256 else base


@dataclass(frozen=True)
class Timing:
    prompt_tokens: int
    prompt_tokens_evaluated: int
    completion_tokens: int
    seconds: float
    cached: bool = False  # read from the card cache: no model time was spent
    prompt_tokens_sent: int = 0  # over all the card's model calls; evaluated is what was not reused
    prompt_seconds: float = 0.0  # of `seconds`, evaluating prompts (the rest: decoding)


@dataclass(frozen=True)
class Provenance:
    """Where a card's input came from, beyond the diff: credited in the card."""

    sources: tuple[str, ...]  # "git", and "gh-json:<file>" when --pr-meta supplied the PR
    commits_read: int
    labels: tuple[str, ...] = ()
    reviewers: tuple[str, ...] = ()
    pr_body: str = ""  # the excerpt of the PR body the model was shown


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
    provenance: Provenance = Provenance(("git",), 0)


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
    interrupted: bool = False  # Ctrl-C: the cards are those finished before it
    cache_unwritable: bool = False  # some cards could not be cached; the run went on
