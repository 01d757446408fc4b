"""The library's entry points: discover PRs in a range and write their cards."""

from __future__ import annotations

import functools
import json
import math
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING, NamedTuple

from prsum import __version__
from prsum.cache import JsonStore, content_key, package_digest
from prsum.cards import CardWriter, choose_strategy
from prsum.config import Settings
from prsum.digest import holder, touched_definitions
from prsum.discovery import list_prs, prepared
from prsum.errors import GenerationError, PrReadError
from prsum.facts import compute_facts
from prsum.facts.echoes import edit_echoes
from prsum.facts.locks import lock_changes
from prsum.facts.origin import line_origin
from prsum.facts.reach import definition_reach
from prsum.facts.release import release_contents
from prsum.facts.settings import setting_changes
from prsum.history import History
from prsum.llm import Backend
from prsum.llm.models import ResolvedModel, file_sha256, resolve_model
from prsum.notes import ReleaseNotes, build_notes
from prsum.profiles import Profile, PromptStyle, StrategyName, choose_profile, for_strategy
from prsum.redact import (
    redact_commit,
    redact_diff,
    redact_echo,
    redact_lock,
    redact_origin,
    redact_pr,
    redact_release,
    redact_setting,
)
from prsum.serial import from_plain, to_plain
from prsum.types import (
    Card,
    CardBody,
    CardFailure,
    Commit,
    Coverage,
    Discovery,
    Facts,
    FileDiff,
    Language,
    ModelInfo,
    Provenance,
    PullRequest,
    RangeQuery,
    RangeReport,
    Related,
    Timing,
)

if TYPE_CHECKING:
    from prsum.llm.openai import OpenAIBackend

CardResult = Card | CardFailure
ProgressCallback = Callable[[int, int, PullRequest, CardResult], None]


class _PrInput(NamedTuple):
    pr: PullRequest
    commits: tuple[Commit, ...]
    diffs: tuple[FileDiff, ...]
    facts: Facts


class _CardJob(NamedTuple):
    """A card the cache does not hold: its input (with related PRs) and its cache key."""

    read: _PrInput
    key: str


@dataclass(frozen=True)
class CachedCard:
    """A card without its PR, as the card cache keeps it: the PR comes from the live history."""

    facts: Facts
    body: CardBody
    coverage: Coverage
    model: ModelInfo
    timing: Timing
    lang: Language
    provenance: Provenance

    @classmethod
    def of(cls, card: Card) -> CachedCard:
        return cls(
            card.facts,
            card.body,
            card.coverage,
            card.model,
            card.timing,
            card.lang,
            card.provenance,
        )

    def card_for(self, pr: PullRequest) -> Card:
        return Card(
            pr,
            self.facts,
            self.body,
            self.coverage,
            self.model,
            replace(self.timing, cached=True),
            self.lang,
            self.provenance,
        )


def open_llama_backend(settings: Settings, model: ResolvedModel, sha256: str) -> Backend:
    """The embedded llama.cpp backend for the resolved model; weights load on first use."""
    from prsum.llm.llama import LlamaBackend

    return LlamaBackend(
        model.path,
        ctx_cap=settings.ctx,
        threads=settings.threads,
        sha256=sha256,
        gpu_layers=settings.gpu_layers,
        adapter=model.adapter,
        adapter_sha256=file_sha256(model.adapter, settings.cache_dir) if model.adapter else None,
    )


# Another tokenizer's count runs over or under the server model's; this margin keeps an
# estimated prompt inside the context.
ESTIMATE_MARGIN = 1.25


def open_server_backend(settings: Settings) -> OpenAIBackend:
    """The server backend; asks the server which model it serves (so a dead server fails now)."""
    from prsum.budget import TiktokenEstimator
    from prsum.llm.openai import OpenAIBackend

    estimator = functools.cache(TiktokenEstimator)
    assert settings.base_url is not None  # resolve_settings requires it for this backend
    backend = OpenAIBackend(
        settings.base_url,
        ctx_cap=settings.ctx,
        model_name=settings.server_model,
        api_key=settings.api_key,
        fallback_counter=lambda text: math.ceil(estimator().count_tokens(text) * ESTIMATE_MARGIN),
    )
    backend.info  # noqa: B018  # asks /v1/models
    return backend


def prompt_style_for(settings: Settings, profile: Profile, strategy: StrategyName) -> PromptStyle:
    """The user's choice, else the profile's view (the digest for facts-only cards)."""
    if settings.prompt_style != "auto":
        return settings.prompt_style
    return "digest" if strategy == "facts" else profile.view


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
        self._style: PromptStyle | None = None
        if backend is not None:
            self._style = style if settings.prompt_style == "auto" else settings.prompt_style
        self._model_bytes: int | None = None
        self._writer: CardWriter | None = None
        self._model: ResolvedModel | None = None
        self._model_id = backend.info.identity if backend is not None else ""
        self._strategy: StrategyName | None = None
        self._profile: Profile | None = None
        # Definitions touched by the PRs already carded (newer ones: cards go newest first),
        # so an older PR's card can say where its code was touched again.
        self._touched_later: dict[str, str] = {}
        self._cards = JsonStore(settings.cache_dir / "cards") if settings.cache else None
        self.cache_unwritable = False  # set when a card could not be cached: the run goes on

    def load(self) -> None:
        """Resolve and check the model now, so a bad one fails before any PR is read.

        Embedded: only the file is checked (and hashed once); its vocabulary and weights
        load on the first card the cache does not already hold. Server: it is asked which
        model it serves.
        """
        if self._backend is not None or self._model is not None:
            return
        if self.settings.backend == "openai":
            server = open_server_backend(self.settings)
            self._backend, self._model_id = server, server.info.identity
            self._model_bytes = server.model_bytes
            return
        self._model = resolve_model(self.settings)
        self._model_id = file_sha256(self._model.path, self.settings.cache_dir)
        if self._model.adapter is not None:
            self._model_id += "+" + file_sha256(self._model.adapter, self.settings.cache_dir)
        self._model_bytes = self._model.path.stat().st_size

    @property
    def backend(self) -> Backend:
        """The model's backend; the embedded one is made on first use (its vocabulary loads
        then, its weights on the first card written)."""
        self.load()
        if self._backend is None:
            assert self._model is not None
            self._backend = open_llama_backend(
                self.settings, self._model, file_sha256(self._model.path, self.settings.cache_dir)
            )
        return self._backend

    @property
    def profile(self) -> Profile:
        """How the model is prompted and held (prsum.profiles): chosen once, from what the
        backend can do, and the strategy the user may have chosen against it."""
        if self._profile is None:
            self.load()
            capabilities = self.backend.capabilities
            profile = choose_profile(capabilities.chat, self._model_bytes)
            self._strategy = choose_strategy(self.settings.strategy, capabilities, profile)
            self._profile = for_strategy(profile, self._strategy, self._model_bytes)
        return self._profile

    @property
    def strategy(self) -> StrategyName:
        """How cards are written: chosen once, with the profile."""
        self.profile  # noqa: B018  # chooses both
        assert self._strategy is not None
        return self._strategy

    @property
    def map_chunks(self) -> int:
        """Chunk notes per PR: the setting where the profile writes them (a model tuned to
        write cards from the packed diff alone was trained neither to read nor to write them);
        none for facts-only cards, which no model writes."""
        if self.strategy == "facts" or not self.profile.chunk_notes:
            return 0
        return self.settings.map_chunks

    @property
    def style(self) -> PromptStyle:
        """How the PR is shown to the model: chosen once, from the setting and the profile."""
        if self._style is None:
            self._style = prompt_style_for(self.settings, self.profile, self.strategy)
        return self._style

    @property
    def writer(self) -> CardWriter:
        if self._writer is None:
            self._writer = CardWriter(
                self.backend,
                self.settings.lang,
                self.style,
                strategy=self.strategy,
                profile=self.profile,
                map_chunks=self.map_chunks,
                note_store=JsonStore(self.settings.cache_dir / "notes"),
            )
        return self._writer

    def discover(self, query: RangeQuery) -> Discovery:
        return list_prs(self.settings, query, self.history)

    def find(self, rev: str) -> Discovery:
        """One PR (a sha, a tag or `#N`) as a discovery of its own."""
        return prepared(Discovery(rev, (self.history.find_pr(rev),), (), ()), self.settings)

    def read(self, pr: PullRequest) -> _PrInput:
        """Everything git and the facts say of a PR: the part of a card that needs no model."""
        pr, commits = self.history.with_own_commits(pr)
        diffs = written = self.history.diff(pr)
        if self.settings.redact:
            pr = redact_pr(pr)
            commits = tuple(redact_commit(commit) for commit in commits)
            diffs = tuple(redact_diff(diff) for diff in diffs)
        facts = compute_facts(pr, diffs)
        # The edits are quoted from the masked diffs; their echoes are placed by the patches'
        # line numbers, which only the unmasked ones keep.
        echoes = edit_echoes(
            facts.edits, written, self.history.blob, functools.partial(self.history.grep, pr.sha)
        )
        reach = definition_reach(
            written,
            frozenset(
                path for change in pr.files for path in (change.path, change.old_path) if path
            ),
            functools.partial(self.history.grep, pr.sha),
            functools.partial(self.history.file_at, pr.sha),
        )
        origin = (
            line_origin(
                pr,
                written,
                functools.partial(self.history.blame, pr.base_sha),
                functools.partial(self.history.landing, base=pr.base_sha),
            )
            if pr.base_sha
            else None
        )
        locks = lock_changes(written, self.history.blob)
        statuses = {change.path: change.status for change in pr.files}
        settings = setting_changes(written, statuses, self.history.blob)
        release = release_contents(
            pr,
            written,
            facts.category,
            functools.partial(self.history.blame, pr.base_sha or ""),
            functools.partial(self.history.landing, base=pr.base_sha or ""),
            self.history.span,
            self.history.patch,
        )
        if self.settings.redact:
            echoes = tuple(redact_echo(echo) for echo in echoes)
            origin = redact_origin(origin)
            locks = tuple(redact_lock(change) for change in locks)
            settings = tuple(redact_setting(change) for change in settings)
            release = redact_release(release)
        facts = replace(
            facts,
            echoes=echoes,
            reach=reach,
            origin=origin,
            locks=locks,
            settings=settings,
            release=release,
        )
        return _PrInput(pr, commits, diffs, facts)

    def card_for(self, pr: PullRequest, read: _PrInput | None = None) -> Card:
        """The PR's card: from the cache when it holds one for this exact input, else written."""
        ready = self._from_cache(read or self.read(pr))
        return ready if isinstance(ready, Card) else self._write(ready)

    def _from_cache(self, read: _PrInput) -> Card | _CardJob:
        """The cached card, or the job of writing it.

        Called in PR order (newest first): it records the definitions each PR touches, so an
        older PR's card can say where its code was touched again.
        """
        pr, commits, diffs, facts = read
        names = {name for diff in diffs for name in touched_definitions(diff)}
        again = sorted(
            {
                Related("touched_again", label, held)
                for name, label in self._touched_later.items()
                if (held := holder(name, names))
            },
            key=lambda related: (related.label, related.name or ""),
        )
        for name in names:
            self._touched_later.setdefault(name, pr.label)
        context = replace(pr, related=(*pr.related, *again[:3]))
        key = self._card_key(context, diffs, commits)
        cached = self._cards.get(key) if self._cards is not None else None
        if cached is not None:
            try:
                body = from_plain(CachedCard, cached)
            except (KeyError, TypeError, ValueError):
                body = None  # written by another version: recompute and overwrite
            if body is not None:
                return body.card_for(context)
        return _CardJob(_PrInput(context, commits, diffs, facts), key)

    def _write(self, job: _CardJob) -> Card:
        """Write a card with the model and cache it at once, so no finished card is lost."""
        pr, commits, diffs, facts = job.read
        card = self.writer.write(pr, facts, diffs, commits)
        if self._cards is not None and not self._cards.put(job.key, to_plain(CachedCard.of(card))):
            self.cache_unwritable = True
        return card

    def _card_key(
        self, pr: PullRequest, diffs: tuple[FileDiff, ...], commits: tuple[Commit, ...]
    ) -> str:
        """Everything a card depends on: its input, the model, the package's code and prompts,
        the options."""
        self.load()
        settings = self.settings
        return content_key(
            package_digest(),
            __version__,
            self._model_id,
            settings.lang,
            self.style,
            self.strategy,
            self.profile.name,
            str(settings.ctx),  # with the model's hash, this fixes the context size
            str(self.map_chunks),
            json.dumps(to_plain(pr), sort_keys=True, ensure_ascii=False),
            *(diff.patch for diff in diffs),
            *(commit.message for commit in commits),
        )

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

    def run(
        self,
        discovery: Discovery,
        progress: ProgressCallback | None = None,
        on_card: Callable[[Card], None] | None = None,
    ) -> RangeReport:
        """The use case: a card for every entry of the discovery, in its order. A PR that
        fails costs only its card; Ctrl-C ends the run with the cards finished so far
        (`interrupted`). `on_card` sees each card as it is finished (to stream them)."""
        self.load()
        self.strategy  # noqa: B018  # one the backend cannot serve fails before any PR is read
        cards: list[Card] = []
        failures: list[CardFailure] = []
        interrupted = False
        try:
            for result in self.cards(discovery.entries, progress):
                if isinstance(result, CardFailure):
                    failures.append(result)
                    continue
                cards.append(result)
                if on_card is not None:
                    on_card(result)
        except KeyboardInterrupt:
            interrupted = True
        return RangeReport(
            discovery,
            tuple(cards),
            tuple(failures),
            self.settings.lang,
            interrupted=interrupted,
            cache_unwritable=self.cache_unwritable,
        )

    def cards(
        self, prs: Sequence[PullRequest], progress: ProgressCallback | None = None
    ) -> Iterator[CardResult]:
        """Cards in the order given; a PR that fails yields a CardFailure and the run goes on.

        Git is read ahead in a thread of its own and the model writes in `jobs` others (one
        for the embedded model, which writes one card at a time), so the model never waits
        for git and a server gets `jobs` requests at once.
        """
        self.load()
        jobs = self.settings.jobs
        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prsum-git")
        writers = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="prsum-card")
        done = 0

        def finished(pr: PullRequest, future: Future[CardResult]) -> CardResult:
            nonlocal done
            result = future.result()
            done += 1
            if progress is not None:
                progress(done, len(prs), pr, result)
            return result

        # Git reads run up to jobs + 1 PRs ahead; one card more than the writers can take
        # is checked against the cache and queued, so a writer never waits for the main thread.
        unread = iter(prs)
        reads = deque(reader.submit(self.read, pr) for pr in islice(unread, jobs + 1))
        in_flight: deque[tuple[PullRequest, Future[CardResult]]] = deque()
        try:
            for pr in prs:
                read = reads.popleft()
                reads.extend(reader.submit(self.read, ahead) for ahead in islice(unread, 1))
                in_flight.append((pr, self._start_card(pr, read, writers)))
                if len(in_flight) > jobs:
                    yield finished(*in_flight.popleft())
            while in_flight:
                yield finished(*in_flight.popleft())
        finally:
            # Ctrl-C, or a consumer that stops early: queued cards are dropped; a card being
            # written is finished and cached.
            reader.shutdown(wait=False, cancel_futures=True)
            writers.shutdown(wait=False, cancel_futures=True)

    def _start_card(
        self, pr: PullRequest, read: Future[_PrInput], writers: ThreadPoolExecutor
    ) -> Future[CardResult]:
        """A cached card at once; else the card's writing, started on a writer thread."""
        done: Future[CardResult] = Future()
        try:
            ready = self._from_cache(read.result())
        except PrReadError as exc:
            done.set_result(CardFailure(pr, str(exc)))
            return done
        if isinstance(ready, Card):
            done.set_result(ready)
            return done
        self.writer  # noqa: B018  # created here, once, rather than raced for by the writers
        return writers.submit(self._written_or_failed, pr, ready)

    def _written_or_failed(self, pr: PullRequest, job: _CardJob) -> CardResult:
        try:
            return self._write(job)
        except (GenerationError, PrReadError) as exc:
            return CardFailure(pr, str(exc))
