"""Writing cards: packing (packing), answer checks (checks), what our code writes from facts
and the card itself (assembly), the strategies behind one protocol (strategy, fields, whole),
release-notes highlights (highlights), and the writer that runs them (writer)."""

from prsum.cards.checks import clean_field, in_language
from prsum.cards.strategy import choose_strategy
from prsum.cards.writer import CardWriter

__all__ = [
    "CardWriter",
    "choose_strategy",
    "clean_field",
    "in_language",
]
