"""How good are the cards? prsum on every PR of ../shared/eval/references.json, scored.

Per card: the verdict against the accepted list, entity recall (the share of the reference's
files and code names that the card names), ungrounded names (cited names not in the PR's
diff or message: should be 0), the CJK share of a zh card's headline and summary, seconds.
Overall also the headlines the model wrote (the others prsum wrote from facts, having
rejected the model's): a weaker model gets fewer past the checks. Cards are always written
fresh (the card cache is not used), so the seconds are the model's.

    python bench/eval.py [--lang zh|en] [--model PATH] [--ctx N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SHARED, fixture_clone

from prsum.config import resolve_settings
from prsum.grounding import Evidence, cited_names
from prsum.pipeline import Summarizer
from prsum.types import Card

_CJK = re.compile(r"[\u3400-\u9fff]")
_LETTER = re.compile(r"[A-Za-z\u3400-\u9fff]")


def card_text(card: Card) -> str:
    body = card.body
    focus = [f"{item.path} {item.symbol or ''} {item.why}" for item in body.focus]
    return "\n".join([body.headline, body.summary, *focus, *body.lessons, *body.follow_ups])


def cjk_share(text: str) -> float:
    prose = re.sub(r"`[^`]*`", "", text)
    letters = _LETTER.findall(prose)
    return len(_CJK.findall(prose)) / len(letters) if letters else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lang", choices=["zh", "en"], default="zh")
    parser.add_argument("--model", type=Path)
    parser.add_argument("--ctx", type=int)
    args = parser.parse_args()
    references = json.loads((SHARED / "eval" / "references.json").read_text(encoding="utf-8"))
    agree = recalled = entities = ungrounded = mostly_chinese = by_model = 0
    seconds: list[float] = []
    print(
        f"{'PR':<14} {'verdict':<7} {'accepted':<11} {'entities':>8} {'ungrounded':>10} {'CJK':>5} {'s':>5}  headline"
    )
    with tempfile.TemporaryDirectory() as scratch:
        summarizers: dict[str, Summarizer] = {}
        for reference in references["cards"]:
            repo = fixture_clone(reference["repo"], Path(scratch))
            if reference["repo"] not in summarizers:
                flags = {
                    "repo": str(repo),
                    "lang": args.lang,
                    "model": args.model,
                    "ctx": args.ctx,
                    "cache": "false",
                }
                summarizers[reference["repo"]] = Summarizer(
                    resolve_settings({k: v for k, v in flags.items() if v})
                )
            summarizer = summarizers[reference["repo"]]
            pr = summarizer.history.find_pr(reference["sha"])
            started = time.perf_counter()
            card = summarizer.card_for(pr)
            seconds.append(time.perf_counter() - started)
            text = card_text(card)
            named = sum(1 for entity in reference["entities"] if entity in text)
            evidence = Evidence.of(pr, summarizer.history.diff(pr))
            unknown = sum(1 for name in cited_names(text) if not evidence.knows(name))
            share = cjk_share(f"{card.body.headline} {card.body.summary}")
            agree += card.body.verdict in reference["verdict"]
            recalled += named
            entities += len(reference["entities"])
            ungrounded += unknown
            mostly_chinese += share > 0.5
            by_model += card.body.headline_by_model
            label = f"{reference['repo']} {pr.label}"
            print(
                f"{label:<14} {card.body.verdict:<7} {'/'.join(reference['verdict']):<11} "
                f"{named:>3}/{len(reference['entities']):<4} {unknown:>10} {share:>5.0%} {seconds[-1]:>5.1f}  {card.body.headline}"
            )
    count = len(references["cards"])
    print(f"\nverdict agreement   {agree}/{count}")
    print(f"entity recall       {recalled}/{entities} = {recalled / entities:.0%}")
    print(f"ungrounded names    {ungrounded}")
    print(f"model's headlines   {by_model}/{count} (the rest written from facts)")
    if args.lang == "zh":
        print(
            f"mostly Chinese      {mostly_chinese}/{count} (CJK > 50% of headline and summary letters)"
        )
    print(
        f"seconds per card    {sum(seconds) / len(seconds):.1f} (median {sorted(seconds)[len(seconds) // 2]:.1f})"
    )


if __name__ == "__main__":
    main()
