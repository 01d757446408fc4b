"""The highlights paragraph of release notes: by the model, checked, else from headlines."""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib.resources import files

from prsum import prompts
from prsum.cards.checks import clean_field, copied, in_language
from prsum.grounding import cited_names
from prsum.llm import Backend, Sampling
from prsum.notes import fallback_highlights, highlight_cards
from prsum.types import Card, Language


def highlights(backend: Backend, lang: Language, cards: Sequence[Card], sampling: Sampling) -> str:
    """The model's paragraph must cite at least one of the PRs it was given and no other,
    name only what those cards name, be in the reader's language and not copy its example."""
    chosen = highlight_cards(cards)
    if not chosen:
        return fallback_highlights(chosen, lang)
    frame = files("prsum.prompts").joinpath(f"highlights-{lang}.txt").read_text(encoding="utf-8")
    listing = "\n".join(f"{card.pr.label} {card.body.headline}" for card in chosen)
    labels = prompts.LABELS[lang]
    prompt = (
        f"{frame.rstrip()}\n\n{prompts.label(lang, labels.pull_requests).rstrip()}\n{listing}\n"
        f"{prompts.label(lang, labels.highlights)}"
    )
    completion = backend.complete(prompt, max_tokens=160, stop=["\n"], sampling=sampling)
    text = clean_field(completion.text)
    cited = set(re.findall(r"#\d+", text))
    allowed = {card.pr.label for card in chosen}
    known = "\n".join(
        f"{card.body.headline}\n{card.body.summary}\n{card.pr.title}" for card in chosen
    )
    usable = (
        bool(cited & allowed)
        and cited <= allowed
        and in_language(text, lang)
        and not copied(text, known, frame, lang)
        and all(name in known for name in cited_names(text))
    )
    return text if usable else fallback_highlights(chosen, lang)
