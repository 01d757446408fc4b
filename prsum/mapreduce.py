"""Map-reduce for diffs that do not fit: the model notes each left-out chunk in one line.

The card's prompt then carries the notes instead of the chunks. The number of model calls
per PR is bounded, and notes are cached by content, so a re-run does not redo them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

from prsum.budget import clip_to_budget
from prsum.cache import JsonStore, content_key, package_digest
from prsum.llm import Backend, Completion, Sampling
from prsum.types import Language

NOTE_TOKENS = 60
_NOTE_LABELS: dict[Language, str] = {"zh": "要点：", "en": "Note: "}


@dataclass(frozen=True)
class ChunkNote:
    paths: tuple[str, ...]
    text: str
    completion: Completion | None  # None when the note came from the cache


def chunk(
    pieces: Sequence[tuple[str, str]], budget: int, backend: Backend
) -> list[list[tuple[str, str]]]:
    """Consecutive (path, patch) pieces grouped so each group fits `budget` tokens.

    A piece larger than the budget is cut to its leading lines: a note on the start of a
    huge file beats no note.
    """
    groups: list[list[tuple[str, str]]] = []
    used = budget + 1
    for path, patch in pieces:
        cost = backend.count_tokens(patch) + 1
        if cost > budget:
            patch = clip_to_budget(patch, budget - 1, backend)
            cost = backend.count_tokens(patch) + 1
        if used + cost > budget:
            groups.append([])
            used = 0
        groups[-1].append((path, patch))
        used += cost
    return groups


class ChunkNoter:
    """Writes (or recalls) one note per chunk with one backend, in one language."""

    def __init__(
        self, backend: Backend, lang: Language, store: JsonStore | None, sampling: Sampling
    ) -> None:
        self.backend = backend
        self.sampling = sampling
        self.lang = lang
        self.store = store
        self.frame = (
            files("prsum.prompts")
            .joinpath(f"notes-{lang}.txt")
            .read_text(encoding="utf-8")
            .rstrip()
            + "\n\n"
        )
        self.chunk_budget = (
            backend.context_size - backend.count_tokens(self.frame) - NOTE_TOKENS - 32
        )

    def notes(self, pieces: Sequence[tuple[str, str]], max_chunks: int) -> list[ChunkNote]:
        if max_chunks <= 0 or self.chunk_budget <= 0:
            return []
        found = []
        for group in chunk(pieces, self.chunk_budget, self.backend)[:max_chunks]:
            text = "\n".join(patch for _, patch in group)
            key = content_key(self.backend.info.identity, package_digest(), self.lang, text)
            cached = self.store.get(key) if self.store else None
            paths = tuple(path for path, _ in group)
            if isinstance(cached, str):
                found.append(ChunkNote(paths, cached, None))
                continue
            prompt = f"{self.frame}<diff>\n{text}\n</diff>\n{_NOTE_LABELS[self.lang]}"
            completion = self.backend.complete(
                prompt, max_tokens=NOTE_TOKENS, stop=["\n"], sampling=self.sampling
            )
            note = " ".join(completion.text.split())
            if self.store and note:
                self.store.put(key, note)
            found.append(ChunkNote(paths, note, completion))
        return found
