"""The model interface prsum needs: count tokens, complete a prompt, score a few options."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from prsum.types import ModelInfo


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    prompt_tokens_evaluated: int
    completion_tokens: int
    seconds: float


class Backend(Protocol):
    """A loaded (or lazily loadable) model. Implementations load weights on first use."""

    @property
    def context_size(self) -> int: ...

    @property
    def info(self) -> ModelInfo: ...

    def count_tokens(self, text: str) -> int: ...

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        stop: Sequence[str],
        grammar: str | None = None,
        banned_starts: Sequence[str] = (),
    ) -> Completion:
        """Greedy continuation of `prompt`, cut at the first stop string.

        `banned_starts`: texts whose first token the continuation may not use, to steer a
        small model away from an answer already rejected.
        """
        ...

    def score(self, prompt: str, options: Sequence[str]) -> list[float]:
        """Log-probability of each option as the continuation of `prompt`."""
        ...
