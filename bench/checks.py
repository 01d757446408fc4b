"""How well does each claim check tell false sentences from true ones? Measured on the
claim-level review's judged cards (bench/judge): each reviewer's claim is placed in the card
sentence it quotes most of, a sentence is false when any claim in it was judged F, and every
check is run on every sentence against the PR: the truth checks of an instruction model's
card (`AnswerChecker.untrue`, against the PR's whole text and the card prompt's worked
example) and the structural ones (bench/claims.py).

Per check: sentences flagged, precision (the share of them that were false), recall (the share
of false sentences it flags); then the false-claim share of the cards before and after the
flagged sentences are left out (their claims removed: checks run after the model wrote, so the
other sentences are unchanged), with the share of claims kept.

    python bench/checks.py CARDS.jsonl... [--half dev|test]
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "judge"))

import judge
from claims import DiffSides, contradiction
from eval import fixture
from review import card_hash

from prsum import prompts
from prsum.cards.checks import NUMBER, AnswerChecker, sentences
from prsum.cards.explain import RuleLog
from prsum.config import resolve_settings
from prsum.grounding import Evidence
from prsum.pipeline import Summarizer

TEXT_FIELDS = ("summary", "lessons", "follow_ups")


def card_sentences(card: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, sentence) for every sentence of the card's prose fields."""
    found = [("summary", part) for part in sentences(card["summary"], card["lang"])]
    for field in ("lessons", "follow_ups"):
        found += [(field, item) for item in card.get(field) or []]
    return found


def place(claim: str, parts: list[tuple[str, str]]) -> int | None:
    """The index of the sentence that holds most of the claim's text, if any holds some."""
    best, score = None, 0.0
    for index, (_, sentence) in enumerate(parts):
        match = difflib.SequenceMatcher(None, claim, sentence).find_longest_match()
        ratio = match.size / max(1, min(len(claim), 40))
        if ratio > score:
            best, score = index, ratio
    return best if score >= 0.5 else None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cards", nargs="+", type=Path)
    parser.add_argument("--half", choices=["dev", "test"], default="dev")
    args = parser.parse_args()
    split = judge.load_split()
    cards = [
        c
        for c in judge.read_cards(args.cards)
        if c["sha"] in judge.in_half(split, args.half, c["lang"])
    ]
    flagged: Counter[str] = Counter()
    flagged_false: Counter[str] = Counter()
    false_sentences = 0
    before = Counter[str]()
    after = Counter[str]()
    summarizers: dict[str, Summarizer] = {}
    sides_of: dict[str, DiffSides] = {}
    checkers: dict[tuple[str, str], AnswerChecker] = {}
    by_system: dict[str, Counter[str]] = defaultdict(Counter)
    with tempfile.TemporaryDirectory() as scratch:
        for card in cards:
            judgment = judge.STORE.first(card_hash(card))
            if judgment is None:
                continue
            repo = card["repo"]
            if repo not in summarizers:
                clone = fixture(repo, Path(scratch))
                summarizers[repo] = Summarizer(
                    resolve_settings({"repo": str(clone), "strategy": "facts", "cache": "false"})
                )
            if card["sha"] not in sides_of:
                summarizer = summarizers[repo]
                read = summarizer.read(summarizer.history.find_pr(card["sha"]))
                sides_of[card["sha"]] = DiffSides.of(read.pr, read.diffs)
                evidence = Evidence.of(read.pr, read.diffs)
                for lang in ("zh", "en"):
                    frame = prompts.frame(lang, "card")
                    checker = AnswerChecker.for_card(
                        lang, frame, frame + evidence.text, read.pr, evidence, RuleLog()
                    )
                    checker.stated_numbers |= set(NUMBER.findall(evidence.text))
                    checkers[card["sha"], lang] = checker
            parts = card_sentences(card)
            labels: dict[int, list[str]] = defaultdict(list)
            for claim in judgment.claims:
                if claim.field in TEXT_FIELDS and (at := place(claim.text, parts)) is not None:
                    labels[at].append(claim.label)
            dropped = set()
            for index, (_, sentence) in enumerate(parts):
                false = "F" in labels[index]
                false_sentences += false
                untrue = checkers[card["sha"], card["lang"]].untrue(sentence)
                rule = (
                    "untrue." + "-".join(untrue.split()[:4])
                    if untrue
                    else contradiction(sentence, card["lang"], sides_of[card["sha"]])
                )
                if rule is not None:
                    flagged[rule] += 1
                    flagged_false[rule] += false
                    dropped.add(index)
            for claim in judgment.claims:
                at = place(claim.text, parts) if claim.field in TEXT_FIELDS else None
                before[claim.label] += 1
                by_system[card["system"]][f"before {claim.label}"] += 1
                if at is None or at not in dropped:
                    after[claim.label] += 1
                    by_system[card["system"]][f"after {claim.label}"] += 1
    print(f"{'check':<32} {'flagged':>8} {'precision':>10} {'recall':>8}")
    for rule, count in flagged.most_common():
        print(
            f"{rule:<32} {count:>8} {flagged_false[rule] / count:>10.0%} "
            f"{flagged_false[rule] / max(1, false_sentences):>8.0%}"
        )
    print(f"false sentences: {false_sentences}")
    for system, counts in sorted(by_system.items()):
        total_before = sum(counts[f"before {label}"] for label in "SFU")
        total_after = sum(counts[f"after {label}"] for label in "SFU")
        print(
            f"{system}: false {counts['before F'] / total_before:.1%} -> "
            f"{counts['after F'] / max(1, total_after):.1%} of claims, "
            f"{total_after / total_before:.0%} of claims kept"
        )


if __name__ == "__main__":
    main()
