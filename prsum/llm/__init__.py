"""The model interface prsum needs, and what each backend can do, asked up front.

Every backend counts tokens. A completion backend continues a prompt and scores a few
options (the field-by-field protocol for small base models, prsum.cards.fields); a chat
backend answers messages through a chat format, optionally held to a JSON schema (one request
per card, prsum.cards.whole). How to sample is the caller's choice (`Sampling`), not the
backend's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from prsum.types import ModelInfo

# Where a backend's chat format comes from: the model's own template (GGUF metadata), the
# format prsum's adapter was trained to answer in (the small tuned model), the server's (a
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
    prompt_seconds: float = 0.0  # of `seconds`, evaluating the prompt (the rest: decoding)


@dataclass(frozen=True)
class Sampling:
    """How to pick tokens: greedy by default, so that a card is the same on every run;
    `repeat_penalty` (llama.cpp's, over the answer's last tokens) breaks a small base model's
    loops in the field-by-field protocol."""

    temperature: float = 0.0
    repeat_penalty: float = 1.0


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
        stop: Sequence[str] = (),
    ) -> Completion:
        """The model's answer to `messages` in its chat format; held to `json_schema` where
        the backend can (capabilities.json_schema), else free text for the caller to check;
        cut before the first of `stop` (the answer is read no further)."""
        ...
