"""One card from one PR: pack the prompt, let the strategy write, assemble what it wrote."""

from __future__ import annotations

from collections.abc import Sequence

from prsum import prompts
from prsum.cache import JsonStore
from prsum.cards.assembly import CardInput, assemble
from prsum.cards.explain import RuleLog
from prsum.cards.fields import BASE_MODEL_SAMPLING, FieldsStrategy
from prsum.cards.highlights import highlights
from prsum.cards.packing import Packer, Usage
from prsum.cards.strategy import CardStrategy, FactsStrategy
from prsum.cards.whole import BriefStrategy, WholeStrategy
from prsum.grounding import Evidence
from prsum.llm import Backend
from prsum.profiles import PROFILES, Profile, PromptStyle, StrategyName
from prsum.types import Card, Commit, Facts, FileDiff, Language, PullRequest


def make_strategy(
    name: StrategyName, backend: Backend, lang: Language, profile: Profile
) -> CardStrategy:
    if name == "facts":
        return FactsStrategy()
    if name == "fields":
        return FieldsStrategy(backend, lang)
    if name == "brief":
        return BriefStrategy(backend, lang, profile)
    return WholeStrategy(backend, lang, profile)


class CardWriter:
    """Writes cards with one backend, in one language, one view, one strategy and profile."""

    def __init__(
        self,
        backend: Backend,
        lang: Language,
        style: PromptStyle,
        *,
        strategy: StrategyName = "fields",
        profile: Profile = PROFILES["small-base"],
        map_chunks: int = 0,
        note_store: JsonStore | None = None,
    ) -> None:
        """`map_chunks`: at most this many model-written chunk notes per PR (diff view only)."""
        self.backend = backend
        self.lang = lang
        self.style = style
        self.strategy = make_strategy(strategy, backend, lang, profile)
        # Chunk notes and highlights are completions a base model writes, whatever the card's
        # strategy.
        self.packer = Packer(
            backend,
            lang,
            style,
            self.strategy.frame,
            self.strategy.reserve,
            map_chunks=map_chunks,
            note_store=note_store,
            sampling=BASE_MODEL_SAMPLING,
            layout="fields" if strategy == "facts" else profile.prompt,
        )

    def card_input(
        self,
        pr: PullRequest,
        facts: Facts,
        diffs: tuple[FileDiff, ...],
        commits: Sequence[Commit] = (),
    ) -> CardInput:
        """What the strategy writes from: the PR, its facts and its packed prompt."""
        extra = prompts.context_lines(pr, commits, self.lang) + self.strategy.context_lines(facts)
        evidence = Evidence.of(pr, diffs, facts)
        usage = Usage()
        packed = self.packer.pack(pr, facts, diffs, extra, evidence, usage)
        return CardInput(
            pr, facts, diffs, tuple(commits), extra, evidence, packed, usage, self.lang, RuleLog()
        )

    def build_prompt(
        self,
        pr: PullRequest,
        facts: Facts,
        diffs: tuple[FileDiff, ...],
        commits: Sequence[Commit] = (),
    ) -> str:
        """The prompt a card starts from, as it would be packed: for benchmarks, inspection and
        training inputs."""
        return self.card_input(pr, facts, diffs, commits).packed.prompt

    def write(
        self,
        pr: PullRequest,
        facts: Facts,
        diffs: tuple[FileDiff, ...],
        commits: Sequence[Commit] = (),
    ) -> Card:
        card = self.card_input(pr, facts, diffs, commits)
        body, prompt_tokens = self.strategy.write(card)
        return assemble(card, body, self.backend, self.style, self.strategy.name, prompt_tokens)

    def highlights(self, cards: Sequence[Card]) -> str:
        """The highlights paragraph of release notes (prsum.cards.highlights)."""
        return highlights(self.backend, self.lang, cards, BASE_MODEL_SAMPLING)
