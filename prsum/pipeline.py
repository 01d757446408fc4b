"""The library's entry points: discover PRs in a range and write their cards."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from prsum.cards import CardWriter, PromptStyle
from prsum.config import Settings
from prsum.errors import GenerationError
from prsum.facts import compute_facts
from prsum.history import History
from prsum.llm import Backend
from prsum.llm.models import ResolvedModel, file_sha256, resolve_model
from prsum.types import Card, CardFailure, Discovery, PullRequest

CardResult = Card | CardFailure
ProgressCallback = Callable[[int, int, PullRequest, CardResult], None]


def list_prs(settings: Settings, range_spec: str) -> Discovery:
    """Discovery only: what landed on the first-parent line of the range. No model is loaded."""
    return History(settings.repo).discover(range_spec, settings.include_bots)


def estimate_diff_tokens(settings: Settings, discovery: Discovery) -> dict[str, int]:
    """Each entry's diff size in tokens, estimated with tiktoken: no model is loaded for this."""
    from prsum.budget import TiktokenEstimator, compact_patch

    history = History(settings.repo)
    estimator = TiktokenEstimator()
    return {
        entry.sha: sum(
            estimator.count_tokens(compact_patch(diff.patch)) for diff in history.diff(entry)
        )
        for entry in discovery.entries
    }


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

    @property
    def writer(self) -> CardWriter:
        if self._writer is None:
            if self._backend is None:
                model = resolve_model(self.settings)
                self._backend = open_backend(self.settings, model)
                self._style = prompt_style_for(self.settings, model)
            self._writer = CardWriter(self._backend, self.settings.lang, self._style)
        return self._writer

    def load(self) -> None:
        """Resolve and check the model now, so a bad model fails before any PR is read."""
        _ = self.writer

    def discover(self, range_spec: str) -> Discovery:
        return self.history.discover(range_spec, self.settings.include_bots)

    def card_for(self, pr: PullRequest) -> Card:
        diffs = self.history.diff(pr)
        return self.writer.write(pr, compute_facts(pr, diffs), diffs)

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
