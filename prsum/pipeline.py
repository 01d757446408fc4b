"""The library's entry points: discover PRs in a range and write their cards."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from prsum.cache import JsonStore
from prsum.cards import CardWriter, PromptStyle
from prsum.config import Settings
from prsum.digest import touched_definitions
from prsum.discovery import with_pr_meta
from prsum.errors import GenerationError
from prsum.facts import compute_facts
from prsum.history import History
from prsum.llm import Backend
from prsum.llm.models import ResolvedModel, file_sha256, resolve_model
from prsum.notes import ReleaseNotes, build_notes
from prsum.types import Card, CardFailure, Discovery, PullRequest, RangeQuery, Related

CardResult = Card | CardFailure
ProgressCallback = Callable[[int, int, PullRequest, CardResult], None]


def open_backend(settings: Settings, model: ResolvedModel) -> Backend:
    """The embedded llama.cpp backend for the resolved model; weights load on first use."""
    from prsum.llm.llama import LlamaBackend

    return LlamaBackend(
        model.path,
        ctx_cap=settings.ctx,
        threads=settings.threads,
        sha256=file_sha256(model.path, settings.cache_dir),
    )


# Models smaller than this (on disk) continue a raw diff instead of describing it; they are
# shown each file's digest of definitions instead (see prsum.digest).
SMALL_MODEL_BYTES = 1 << 30


def prompt_style_for(settings: Settings, model: ResolvedModel) -> PromptStyle:
    if settings.prompt_style != "auto":
        return settings.prompt_style
    return "digest" if model.path.stat().st_size < SMALL_MODEL_BYTES else "diff"


class Summarizer:
    """One run: one repository, one model loaded once, one language."""

    def __init__(
        self,
        settings: Settings,
        backend: Backend | None = None,
        style: PromptStyle = "digest",
    ) -> None:
        """`backend` and `style` are for tests; a run resolves both from the settings."""
        self.settings = settings
        self.history = History(settings.repo)
        self._backend = backend
        self._style = style
        self._writer: CardWriter | None = None
        # Definitions touched by the PRs already carded (newer ones: cards go newest first),
        # so an older PR's card can say where its code was touched again.
        self._touched_later: dict[str, str] = {}

    @property
    def writer(self) -> CardWriter:
        if self._writer is None:
            if self._backend is None:
                model = resolve_model(self.settings)
                self._backend = open_backend(self.settings, model)
                self._style = prompt_style_for(self.settings, model)
            self._writer = CardWriter(
                self._backend,
                self.settings.lang,
                self._style,
                map_chunks=self.settings.map_chunks,
                note_store=JsonStore(self.settings.cache_dir / "notes"),
            )
        return self._writer

    def load(self) -> None:
        """Resolve and check the model now, so a bad model fails before any PR is read."""
        _ = self.writer

    def discover(self, query: RangeQuery) -> Discovery:
        return with_pr_meta(self.history.discover(query), self.settings)

    def find(self, rev: str) -> Discovery:
        """One PR (a sha, a tag or `#N`) as a discovery of its own."""
        pr = self.history.find_pr(rev)
        return with_pr_meta(Discovery(rev, (pr,), (), ()), self.settings)

    def card_for(self, pr: PullRequest) -> Card:
        pr, commits = self.history.with_own_commits(pr)
        diffs = self.history.diff(pr)
        facts = compute_facts(pr, diffs)
        names = {name for diff in diffs for name in touched_definitions(diff)}
        again = sorted(
            (
                Related("touched_again", label, name)
                for name, label in self._touched_later.items()
                if name in names
            ),
            key=lambda related: (related.label, related.name or ""),
        )
        for name in names:
            self._touched_later.setdefault(name, pr.label)
        context = replace(pr, related=(*pr.related, *again[:3]))
        return self.writer.write(context, facts, diffs, commits)

    def notes_range(self, spec: str | None) -> str:
        """`A..B` as given; `B` alone (or nothing, for HEAD) reads back to the latest tag before B."""
        if spec and ".." in spec:
            return spec
        end = spec or "HEAD"
        start = self.history.previous_tag(end)
        return f"{start}..{end}" if start else end

    def release_notes(
        self, discovery: Discovery, progress: ProgressCallback | None = None
    ) -> tuple[ReleaseNotes, tuple[CardFailure, ...]]:
        """Draft release notes: a card per PR (not per direct commit), highlights, sections."""
        prs = [entry for entry in discovery.entries if entry.kind != "direct"]
        results = list(self.cards(prs, progress))
        cards = [result for result in results if isinstance(result, Card)]
        failures = tuple(result for result in results if isinstance(result, CardFailure))
        highlights = self.writer.highlights(cards)
        notes = build_notes(
            discovery, cards, highlights, self.settings.lang, [f.pr for f in failures]
        )
        return notes, failures

    def cards(
        self, prs: Sequence[PullRequest], progress: ProgressCallback | None = None
    ) -> Iterator[CardResult]:
        """Cards in the order given; a PR that fails yields a CardFailure and the run goes on."""
        self.load()
        for done, pr in enumerate(prs, start=1):
            result: CardResult
            try:
                result = self.card_for(pr)
            except GenerationError as exc:
                result = CardFailure(pr, str(exc))
            if progress is not None:
                progress(done, len(prs), pr, result)
            yield result
