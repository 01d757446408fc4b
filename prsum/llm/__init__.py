"""The model interface prsum needs, and what each backend can do, asked up front.

Every backend counts tokens. A completion backend continues a prompt and scores a few
options (the field-by-field protocol for small base models, prsum.cards.fields); a chat
backend answers messages through a chat format, optionally held to a JSON schema (one request
per card, prsum.cards.whole). How to sample is the caller's choice (`Sampling`), not the
backend's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from prsum.types import ModelInfo

# Where a backend's chat format comes from: the model's own template (GGUF metadata), the
# format prsum's adapter was trained to answer in (the tuned default model), the server's (a
# served model), or a format prsum knows for the model's family (a base model without a
# template); None: no chat.
ChatFormatSource = Literal["model", "tuned", "server", "family"]


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    prompt_tokens_evaluated: int
    completion_tokens: int
    seconds: float


@dataclass(frozen=True)
class RepeatBreaker:
    """A "don't repeat yourself" (DRY) penalty over the answer's own tokens: a token that would
    continue a stretch the answer already wrote, longer than `allowed` tokens, loses
    `multiplier * base ** (length - allowed)` of its logit. A long repeat becomes unlikely fast,
    while a name said twice costs little. Only the answer counts, not the prompt: repeating
    the PR's own names is what a card should do (a repeat penalty over the prompt steers the
    model away from them). A stretch does not cross a token with a quote or a newline in it,
    so the JSON's own structure ("key": "…", list items) never counts as a repeat. The embedded
    backend applies it; a server is sent none (llama.cpp's server scans the prompt too)."""

    allowed: int = 10
    multiplier: float = 0.8
    base: float = 1.75


@dataclass(frozen=True)
class Sampling:
    """How to pick tokens: greedy by default, so that a card is the same on every run.

    `allows(written, piece)`: where set, whether the answer, having written `written`, may go
    on with a token whose text is `piece`. The embedded backend applies it token by token (a
    card's answer is held to the PR's names and may not end its summary too soon: prsum.cards
    .whole); a server is sent none, and its answer is only checked afterwards, as every
    answer is.
    """

    temperature: float = 0.0
    repeat_penalty: float = 1.0
    breaker: RepeatBreaker | None = None
    allows: Callable[[str, str], bool] | None = None


def repeat_penalties(
    answer: Sequence[int], breaks: Callable[[int], bool], breaker: RepeatBreaker
) -> dict[int, float]:
    """The logit to take from each next token that would continue one of the answer's
    repeats (`breaks(token)`: the token ends a stretch)."""
    size = len(answer)
    if size < 2 or breaks(answer[-1]):
        return {}
    penalties: dict[int, float] = {}
    for end in range(size - 1):  # answer[: end + 1] ends as the answer does; answer[end + 1] next
        length = 0
        while (
            length <= end
            and answer[end - length] == answer[size - 1 - length]
            and not breaks(answer[end - length])
        ):
            length += 1
        if length >= breaker.allowed:
            penalty = breaker.multiplier * breaker.base ** (length - breaker.allowed)
            token = answer[end + 1]
            penalties[token] = max(penalties.get(token, 0.0), penalty)
    return penalties


GREEDY = Sampling()


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers, known before any card is written."""

    completion: bool  # complete() and score()
    chat: ChatFormatSource | None  # chat(), and where its format comes from
    json_schema: bool  # chat() can hold its answer to a JSON schema natively (fast)


Message = Mapping[str, str]  # {"role": "user", "content": "..."}


class Backend(Protocol):
    """A loaded (or lazily loadable) model. Implementations load weights on first use."""

    @property
    def context_size(self) -> int: ...

    @property
    def info(self) -> ModelInfo: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def count_tokens(self, text: str) -> int: ...

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        stop: Sequence[str],
        grammar: str | None = None,
        banned_starts: Sequence[str] = (),
        sampling: Sampling = GREEDY,
    ) -> Completion:
        """Continuation of `prompt`, cut at the first stop string.

        `banned_starts`: texts whose first token the continuation may not use, to steer a
        small model away from an answer already rejected.
        """
        ...

    def score(self, prompt: str, options: Sequence[str]) -> list[float]:
        """Log-probability of each option as the continuation of `prompt`."""
        ...

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        sampling: Sampling = GREEDY,
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """The model's answer to `messages` in its chat format; held to `json_schema` where
        the backend can (capabilities.json_schema), else free text for the caller to check."""
        ...
