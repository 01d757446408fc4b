"""How often each rule of the card writer fires: counted from the cards' own record of what it
refused, dropped or repaired (`card.dropped`; `bench/eval.py --cards FILE` keeps it).

A rule that never fires over the dev set is dead weight; one that fires is kept only if taking
it out raises the judged false-claim share (bench/judge).

    python bench/rules.py CARDS.jsonl...
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cards", nargs="+", type=Path)
    args = parser.parse_args()
    events: dict[str, Counter[str]] = defaultdict(Counter)
    cards_hit: dict[str, Counter[str]] = defaultdict(Counter)
    totals: Counter[str] = Counter()
    for path in args.cards:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            card = json.loads(line)
            system = f"{card['system']} {card['lang']}"
            totals[system] += 1
            fired = [event["rule"] for event in card.get("dropped", [])]
            events[system].update(fired)
            cards_hit[system].update(set(fired))
    for system in sorted(totals):
        print(f"\n{system}: {totals[system]} cards")
        print(f"  {'rule':<44} {'fired':>6} {'cards':>6}")
        for rule, count in sorted(events[system].items(), key=lambda item: -item[1]):
            print(f"  {rule:<44} {count:>6} {cards_hit[system][rule]:>6}")


if __name__ == "__main__":
    main()
