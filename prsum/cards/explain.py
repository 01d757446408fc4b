"""The record of what the card writer's rules refused, dropped or repaired of a model's text.

Every rule that shapes or drops model text reports here, by a stable name, so that a card can
say why its text is what it is (`card.dropped` in JSON; `--debug` logs each event as it
happens) and a benchmark can count how often each rule fires (bench/rules.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from prsum.redact import redact_text
from prsum.types import RuleEvent

_TEXT_LIMIT = 160
_log = logging.getLogger("prsum.rules")


@dataclass
class RuleLog:
    """The events of one card, in the order they happened."""

    events: list[RuleEvent] = field(default_factory=list)

    def record(self, rule: str, field_name: str, text: str) -> None:
        # What the model wrote is output too: masked like everything else prsum shows.
        line = " ".join(redact_text(text).split())
        if len(line) > _TEXT_LIMIT:
            line = line[: _TEXT_LIMIT - 1] + "…"
        self.events.append(RuleEvent(rule, field_name, line))
        _log.debug("rule %s (%s): %s", rule, field_name, line)
