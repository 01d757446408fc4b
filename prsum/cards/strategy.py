"""How a card is written: the strategies behind one protocol, and the one place that chooses.

- `fields`: for small base models (the default model untuned): one field per completion
  after worked examples, banned first tokens and a grammar as fallbacks, the verdict chosen by
  scoring the rubric's options; our code writes the rest from facts.
- `whole`: for models that follow instructions (a model with its own chat template, a served
  model): one chat request per card for the whole card as JSON, every field checked, a field
  that fails replaced by the facts-built one.
- `brief`: the default for those models: the same request read up to the summary, so the
  model writes the headline and chooses the verdict and reading time; the prose is facts'.
- `facts`: no model prose at all: the card our code writes from facts, with the rubric's
  verdict and reading time (the model's tokenizer still sizes the prompt, so coverage is real).
"""

from __future__ import annotations

from typing import Final, Protocol

from prsum.cards.assembly import CardInput, facts_body, facts_headline
from prsum.config import StrategySetting
from prsum.errors import ConfigError
from prsum.llm import GREEDY, Capabilities, Sampling
from prsum.profiles import JSON_STRATEGIES, Profile, StrategyName
from prsum.rubric import prior_verdict
from prsum.types import CardBody, Facts


class CardStrategy(Protocol):
    """Writes the evaluative body of one card from a packed prompt."""

    @property
    def name(self) -> StrategyName: ...

    @property
    def frame(self) -> str:
        """The prompt's fixed part, before the PR: worked examples or instructions."""
        ...

    @property
    def reserve(self) -> int:
        """Tokens kept free after the prompt for the model's answers."""
        ...

    @property
    def sampling(self) -> Sampling: ...

    def context_lines(self, facts: Facts) -> list[str]:
        """Lines of the strategy's own for the PR part of the prompt."""
        ...

    def write(self, card: CardInput) -> tuple[CardBody, int]:
        """The card's body before grounding, and the prompt tokens of the last request."""
        ...


def choose_strategy(
    setting: StrategySetting, capabilities: Capabilities, profile: Profile
) -> StrategyName:
    """`auto`: the profile's. An explicit choice the backend cannot serve is a usage error."""
    if setting == "facts":
        return "facts"
    if setting == "fields":
        if not capabilities.completion:
            raise ConfigError("--strategy fields needs a backend that completes prompts")
        return "fields"
    if setting in JSON_STRATEGIES:
        if capabilities.chat is None:
            raise ConfigError(
                f"--strategy {setting} needs a model with a chat format; this one has none "
                "(use fields)"
            )
        return setting
    return profile.strategy


class FactsStrategy:
    """The card from facts alone: the rubric's verdict and minutes, sentences our code writes
    from what the diff shows, a headline from the title's convention. No model is asked."""

    name: Final = "facts"
    frame = ""
    reserve = 0
    sampling = GREEDY

    def context_lines(self, facts: Facts) -> list[str]:
        return []

    def write(self, card: CardInput) -> tuple[CardBody, int]:
        return facts_body(card, prior_verdict(card.facts), facts_headline(card)), 0
