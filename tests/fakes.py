"""A scripted model for tests about prsum's own logic (budgets, guards, grounding, rendering)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from prsum.llm import GREEDY, Capabilities, ChatFormatSource, Completion, Message, Sampling
from prsum.types import ModelInfo


@dataclass
class FakeBackend:
    """Answers each field from `answers` (by the label the prompt ends with); counts one token per 3 chars."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    verdict_preference: str | None = None
    context: int = 4096
    prompts: list[str] = field(default_factory=list)
    on_complete: Callable[[str], None] | None = None
    chat_format: ChatFormatSource | None = None  # None: a base model without a chat format
    chat_answers: list[str] = field(default_factory=list)  # what chat() answers, in turn
    # What each completion was asked with, to test the fallbacks: (grammar, banned starts).
    constraints: list[tuple[str | None, tuple[str, ...]]] = field(default_factory=list)
    samplings: list[Sampling] = field(default_factory=list)
    schemas: list[object] = field(default_factory=list)
    json_schema: bool = False  # whether chat() takes a JSON schema natively
    honours_stop: bool = True  # whether chat() cuts its answer at a stop string (a server may not)
    conversations: list[list[Message]] = field(default_factory=list)  # chat() requests

    @property
    def context_size(self) -> int:
        return self.context

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(file="fake.gguf", sha256="0" * 64, backend="fake")

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(completion=True, chat=self.chat_format, json_schema=self.json_schema)

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
        sampling: Sampling = GREEDY,
    ) -> Completion:
        assert self.count_tokens(prompt) + max_tokens <= self.context, (
            "prompt overflows the context"
        )
        self.prompts.append(prompt)
        self.constraints.append((grammar, tuple(banned_starts)))
        self.samplings.append(sampling)
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

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        sampling: Sampling = GREEDY,
        json_schema: object = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        assert self.chat_format is not None, "chat() on a backend without a chat format"
        prompt = messages[-1]["content"]
        chat = sum(self.count_tokens(message["content"]) + 4 for message in messages)
        assert chat + max_tokens <= self.context, "chat overflows"
        self.prompts.append(prompt)
        self.conversations.append(list(messages))
        self.samplings.append(sampling)
        self.schemas.append(json_schema)
        text = self.chat_answers.pop(0) if self.chat_answers else ""
        # Cut before the first stop string, as the backends do.
        if self.honours_stop and (cuts := [at for word in stop if (at := text.find(word)) >= 0]):
            text = text[: min(cuts)]
        return Completion(text, self.count_tokens(prompt), 0, self.count_tokens(text), 0.0)
