"""A scripted model for tests about prsum's own logic (budgets, guards, grounding, rendering)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from prsum.llm import Completion
from prsum.types import ModelInfo


@dataclass
class FakeBackend:
    """Answers each field from `answers` (by the label the prompt ends with); counts one token per 3 chars."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    verdict_preference: str | None = None
    context: int = 4096
    prompts: list[str] = field(default_factory=list)
    on_complete: Callable[[str], None] | None = None

    @property
    def context_size(self) -> int:
        return self.context

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(file="fake.gguf", sha256="0" * 64, backend="fake")

    def count_tokens(self, text: str) -> int:
        return (len(text.encode("utf-8")) + 2) // 3

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        stop: Sequence[str],
        grammar: str | None = None,
        banned_starts: Sequence[str] = (),
    ) -> Completion:
        assert self.count_tokens(prompt) + max_tokens <= self.context, (
            "prompt overflows the context"
        )
        self.prompts.append(prompt)
        if self.on_complete is not None:
            self.on_complete(prompt)
        label = prompt.rsplit("\n", 1)[-1]
        queue = next(
            (answers for key, answers in self.answers.items() if label.startswith(key)), []
        )
        text = queue.pop(0) if queue else ""
        return Completion(text + "\n", self.count_tokens(prompt), 0, self.count_tokens(text), 0.0)

    def score(self, prompt: str, options: Sequence[str]) -> list[float]:
        return [
            0.0 if self.verdict_preference and option.startswith(self.verdict_preference) else -10.0
            for option in options
        ]
