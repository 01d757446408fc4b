"""How good are the cards? prsum on every PR of ../shared/eval/references.json, scored.

Every repository of ../shared/fixtures is cloned (a bundle; `verl.git.tar.gz` is a shallow
bare clone, unpacked) and each reference PR is looked up in its own range, as `prsum range`
would find it there (a PR listed apart as a branch sync is counted as missed).

Per card and per repository, then in total:
- category, breaking: the facts (no model) against the reference's;
- verdict: the card's against the accepted list;
- entity recall: the share of the reference's files and code names that the card names;
- ungrounded names: cited names not in the PR's diff or message (must be 0);
- minutes MAE: mean absolute error of the card's reading minutes against the reference's;
- chrF of the headline and of the paragraph (verdict opening and summary) against the
  reference card, where one exists: character n-grams 1..6, beta 2, sacrebleu's definition,
  corpus-level (statistics summed over the cards);
- language: the cards in their language (CJK > 50% of headline and summary letters in zh,
  none in en); the headlines and paragraphs the model wrote (the others prsum wrote from
  facts, having rejected the model's); seconds per card.

Each language and the default model with and without its adapter are run side by side, card
by card (`--lang`, `--adapter` narrow it), and compared in a last table. Cards are always
written fresh (the card cache is not used), so the seconds are the model's. `--facts-only`
loads no model: it scores the facts and the rubric's prior verdict and minutes (what the model
would start from), in seconds instead of minutes. `--dump FILE` keeps every card as a JSON line.

`--half dev|test` keeps the PRs of one half of the claim-level review's fixed split
(bench/judge/split.json; en on its en subset), `--strategy` is passed on to prsum, and
`--cards FILE` writes the cards in the review's form, as `--system NAME` (default: the
variant's label); where the review has judged them, the judged table comes first
(bench/judge/PROTOCOL.md): chrF and entity recall are secondary.

    python bench/eval.py [--lang zh|en]... [--adapter both|on|off] [--facts-only] [--only REPO]
                         [--model coder|small|PATH] [--ctx N] [--dump FILE] [--half dev|test]
                         [--strategy auto|brief|whole|fields|facts] [--cards FILE --system NAME]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "judge"))

import judge
from _common import SHARED

from prsum.config import STRATEGIES, resolve_settings
from prsum.grounding import Evidence, cited_names
from prsum.pipeline import Summarizer
from prsum.profiles import DEFAULT_EMBEDDED, EMBEDDED
from prsum.render import card_to_dict, verdict_opening
from prsum.rubric import prior_verdict, reading_minutes
from prsum.types import Card, Facts, FileDiff, PullRequest, RangeQuery

_CJK = re.compile(r"[\u3400-\u9fff]")
_LETTER = re.compile(r"[A-Za-z\u3400-\u9fff]")
CHRF_ORDER = 6
CHRF_BETA = 2.0


# --- chrF (sacrebleu's definition: chars without whitespace, n = 1..6, beta = 2) ----------


def chrf_statistics(hypothesis: str, reference: str, order: int = CHRF_ORDER) -> list[int]:
    """Per n-gram order: [hypothesis n-grams, reference n-grams, matches], flattened."""
    hyp = "".join(hypothesis.split())
    ref = "".join(reference.split())
    stats: list[int] = []
    for n in range(1, order + 1):
        hyp_grams = Counter(hyp[i : i + n] for i in range(len(hyp) - n + 1))
        ref_grams = Counter(ref[i : i + n] for i in range(len(ref) - n + 1))
        matches = sum((hyp_grams & ref_grams).values())
        stats += [sum(hyp_grams.values()), sum(ref_grams.values()), matches]
    return stats


def chrf_score(stats: list[int], order: int = CHRF_ORDER, beta: float = CHRF_BETA) -> float:
    """chrF from (summed) statistics, as sacrebleu's CHRF._compute_f_score computes it (without
    eps smoothing: precision and recall averaged over the orders both sides have)."""
    factor = beta**2
    precision = recall = 0.0
    effective = 0
    for n in range(order):
        hyp, ref, match = stats[3 * n : 3 * n + 3]
        if hyp > 0 and ref > 0:
            precision += match / hyp
            recall += match / ref
            effective += 1
    if effective == 0:
        return 0.0
    precision /= effective
    recall /= effective
    if precision + recall == 0:
        return 0.0
    return 100 * (1 + factor) * precision * recall / (factor * precision + recall)


def chrf(hypothesis: str, reference: str) -> float:
    return chrf_score(chrf_statistics(hypothesis, reference))


# --- fixtures ------------------------------------------------------------------------------


def fixture(name: str, root: Path) -> Path:
    """A working copy of ../shared/fixtures/NAME: a clone of the bundle, or the unpacked tarball."""
    fixtures = SHARED / "fixtures"
    bundle = fixtures / f"{name}.bundle"
    tarball = fixtures / f"{name}.git.tar.gz"
    if bundle.is_file():
        target = root / name
        if not target.exists():
            subprocess.run(
                ["git", "clone", "-q", str(bundle), str(target)],
                check=True,
                stderr=subprocess.DEVNULL,
            )
        return target
    if tarball.is_file():
        target = root / f"{name}.git"
        if not target.exists():
            with tarfile.open(tarball) as archive:
                archive.extractall(root, filter="data")
        return target
    raise SystemExit(f"no fixture for {name} in {fixtures}")


# --- scoring -------------------------------------------------------------------------------


def card_text(card: Card) -> str:
    body = card.body
    focus = [f"{item.path} {item.symbol or ''} {item.why}" for item in body.focus]
    return "\n".join([body.headline, body.summary, *focus, *body.lessons, *body.follow_ups])


def paragraph(card: Card) -> str:
    colon = "：" if card.lang == "zh" else ": "
    return f"{verdict_opening(card)}{colon}{card.body.summary}"


def cjk_share(text: str) -> float:
    prose = re.sub(r"`[^`]*`", "", text)
    letters = _LETTER.findall(prose)
    return len(_CJK.findall(prose)) / len(letters) if letters else 0.0


@dataclass
class Tally:
    cards: int = 0
    found: int = 0  # found in its range as a card (not missing, not listed as a sync)
    category: int = 0
    breaking: int = 0
    verdict: int = 0
    recalled: int = 0
    entities: int = 0
    ungrounded: int = 0
    minutes_error: int = 0
    minutes_count: int = 0
    by_model: int = 0  # headlines the model wrote
    paragraph_by_model: int = 0
    in_language: int = 0
    seconds: list[float] = field(default_factory=list)
    headline_stats: list[int] = field(default_factory=lambda: [0] * (3 * CHRF_ORDER))
    paragraph_stats: list[int] = field(default_factory=lambda: [0] * (3 * CHRF_ORDER))
    chrf_cards: int = 0

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            mine = getattr(self, name)
            if isinstance(value, list) and name.endswith("_stats"):
                setattr(self, name, [a + b for a, b in zip(mine, value, strict=True)])
            elif isinstance(value, list):
                mine.extend(value)
            else:
                setattr(self, name, mine + value)


def ranges_of(references: dict[str, Any]) -> dict[str, str]:
    """The range of each reference card: its own, else its repository's listed range."""
    listed = {entry["repo"]: entry["range"] for entry in references["ranges"]}
    return {
        reference["sha"]: reference.get("range") or listed.get(reference["repo"], "")
        for reference in references["cards"]
    }


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} {part / whole:>4.0%}" if whole else "-"


def table(tallies: dict[str, Tally], facts_only: bool) -> str:
    head = (
        f"{'repo':<8} {'cards':>5} {'in range':>10} {'category':>10} {'breaking':>10} "
        f"{'verdict':>10} {'min MAE':>7}"
    )
    if not facts_only:
        head += f" {'entities':>12} {'ungr':>4} {'chrF head':>9} {'chrF para':>9}"
    rows = [head]
    for name, tally in tallies.items():
        mae = tally.minutes_error / tally.minutes_count if tally.minutes_count else float("nan")
        row = (
            f"{name:<8} {tally.cards:>5} {percent(tally.found, tally.cards):>10} "
            f"{percent(tally.category, tally.cards):>10} {percent(tally.breaking, tally.cards):>10} "
            f"{percent(tally.verdict, tally.cards):>10} {mae:>7.1f}"
        )
        if not facts_only:
            recall = percent(tally.recalled, tally.entities)
            if tally.chrf_cards:
                head_chrf = f"{chrf_score(tally.headline_stats):9.1f}"
                para_chrf = f"{chrf_score(tally.paragraph_stats):9.1f}"
            else:
                head_chrf = para_chrf = f"{'-':>9}"
            row += f" {recall:>12} {tally.ungrounded:>4} {head_chrf} {para_chrf}"
        rows.append(row)
    return "\n".join(rows)


def locate(
    summarizer: Summarizer, sha: str, spec: str, found: dict[str, dict[str, PullRequest | str]]
) -> tuple[PullRequest, str]:
    """The PR of `sha` as discovery of its range gives it, and how it was found there."""
    if spec and spec not in found:
        discovery = summarizer.discover(RangeQuery(spec))
        where: dict[str, PullRequest | str] = {entry.sha: entry for entry in discovery.entries}
        where.update({sync.sha: "listed as a branch sync" for sync in discovery.sync_merges})
        where.update({bot.sha: "skipped as a bot commit" for bot in discovery.bot_commits})
        found[spec] = where
    entry = found.get(spec, {}).get(sha)
    if isinstance(entry, PullRequest):
        return entry, ""
    return summarizer.history.find_pr(sha), entry or "not in its range"


@dataclass(frozen=True)
class Variant:
    """One way of writing the cards: a language, and the model with or without prsum's
    adapter (a model without one runs as it comes)."""

    lang: str
    adapter: bool

    no_adapter: bool = False  # a model prsum has no adapter for: it runs as it comes

    @property
    def label(self) -> str:
        return f"{self.lang} {'model' if self.no_adapter else 'tuned' if self.adapter else 'base'}"


def score(
    reference: dict[str, Any],
    card: Card,
    pr: PullRequest,
    diffs: tuple[FileDiff, ...],
    tally: Tally,
) -> str:
    """Add the card's scores against the reference to `tally`; the chrF cell of its row."""
    lang = card.lang
    text = card_text(card)
    evidence = Evidence.of(pr, diffs, card.facts)
    tally.recalled = sum(1 for entity in reference["entities"] if entity in text)
    tally.entities = len(reference["entities"])
    tally.ungrounded = sum(1 for cited in cited_names(text) if not evidence.knows(cited))
    share = cjk_share(f"{card.body.headline} {card.body.summary}")
    tally.in_language = int(share > 0.5 if lang == "zh" else share == 0)
    tally.by_model = int(card.body.headline_by_model)
    tally.paragraph_by_model = int("summary" in card.body.by_model)
    ref_head, ref_card = reference.get(f"headline_{lang}"), reference.get(f"card_{lang}")
    if not (ref_head and ref_card):
        return "-"
    tally.headline_stats = chrf_statistics(card.body.headline, ref_head)
    tally.paragraph_stats = chrf_statistics(paragraph(card), ref_card)
    tally.chrf_cards = 1
    return f"{chrf_score(tally.headline_stats):.0f}/{chrf_score(tally.paragraph_stats):.0f}"


def review_card(card: Card, reference: dict[str, Any], system: str) -> dict[str, Any]:
    """The card as the claim-level review reads it (bench/judge): its text fields, and the
    rules' record of what they refused or dropped."""
    body = card_to_dict(card)["card"]
    for internal in ("ungrounded_removed", "headline_by_model"):
        del body[internal]
    return {
        "system": system,
        "repo": reference["repo"],
        "sha": reference["sha"],
        "number": card.pr.number,
        "lang": card.lang,
        **body,
        "seconds": card.timing.seconds,
    }


def summary_table(totals: dict[str, Tally]) -> str:
    """The variants side by side, one row each."""
    rows = [
        f"{'variant':<9} {'verdicts':>10} {'entities':>12} {'ungr':>4} {'language':>10} "
        f"{'chrF head':>9} {'chrF para':>9} {'headlines':>10} {'paragraphs':>10} {'s/card':>6}"
    ]
    for label, t in totals.items():
        seconds = sorted(t.seconds)
        rows.append(
            f"{label:<9} {percent(t.verdict, t.cards):>10} {percent(t.recalled, t.entities):>12} "
            f"{t.ungrounded:>4} {percent(t.in_language, t.cards):>10} "
            f"{chrf_score(t.headline_stats):9.1f} {chrf_score(t.paragraph_stats):9.1f} "
            f"{percent(t.by_model, t.cards):>10} {percent(t.paragraph_by_model, t.cards):>10} "
            f"{seconds[len(seconds) // 2]:6.2f}"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--lang", choices=["zh", "en"], action="append", help="repeatable; default: zh and en"
    )
    parser.add_argument(
        "--adapter",
        choices=["both", "on", "off"],
        default="both",
        help="the default model with its adapter, without, or both side by side (default)",
    )
    parser.add_argument(
        "--model",
        help="an embedded model by name (coder, small), or a GGUF file (no adapter applied)",
    )
    parser.add_argument("--ctx", type=int)
    parser.add_argument("--facts-only", action="store_true", help="no model: facts and rubric")
    parser.add_argument("--only", action="append", help="only this repository (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no per-card rows")
    parser.add_argument("--dump", type=Path, help="write every card here, a JSON line each")
    parser.add_argument("--half", choices=["dev", "test"], help="one half of the review's split")
    parser.add_argument("--strategy", choices=STRATEGIES)
    parser.add_argument("--cards", type=Path, help="write the cards in the review's form here")
    parser.add_argument("--system", help="the cards' system name in the review")
    args = parser.parse_args()
    split = judge.load_split() if args.half else None
    references = json.loads((SHARED / "eval" / "references.json").read_text(encoding="utf-8"))
    spec_of = ranges_of(references)
    cards = [c for c in references["cards"] if not args.only or c["repo"] in args.only]
    if not cards:
        raise SystemExit(f"no reference card of {', '.join(args.only)}")
    langs = list(dict.fromkeys(args.lang or ["zh", "en"]))
    adapters = {"both": [True, False], "on": [True], "off": [False]}[args.adapter]
    own_model = bool(args.model) and args.model not in EMBEDDED
    no_adapter = own_model or EMBEDDED[args.model or DEFAULT_EMBEDDED].adapter is None
    if args.facts_only or no_adapter or args.strategy == "facts":  # one model, or none at all
        adapters = [False] if no_adapter else [True]
    variants = [
        Variant(lang, adapter, no_adapter=no_adapter) for lang in langs for adapter in adapters
    ]
    if args.facts_only:
        variants = variants[:1]
    tallies: dict[Variant, dict[str, Tally]] = {v: defaultdict(Tally) for v in variants}
    dump = args.dump.open("w", encoding="utf-8") if args.dump else None
    reviewed: list[dict[str, Any]] = []
    if not args.quiet:
        print(
            f"{'PR':<14} {'variant':<8} {'category':<17} {'brk':<3} {'verdict':<7} "
            f"{'accepted':<9} {'min':>7} {'ent':>5} {'ungr':>4} {'chrF h/p':>9} {'s':>4}  headline"
        )
    with tempfile.TemporaryDirectory() as scratch:
        summarizers: dict[Variant, Summarizer] = {}
        current = ""
        discovered: dict[str, dict[str, PullRequest | str]] = {}
        for reference in cards:
            name = reference["repo"]
            if name != current:
                # One repository at a time: each variant's model is loaded once for it.
                current, summarizers = name, {}
                for variant in variants:
                    flags = {
                        "repo": str(fixture(name, Path(scratch))),
                        "lang": variant.lang,
                        "model": args.model,
                        "ctx": args.ctx,
                        "cache": "false",
                        "adapter": "true" if variant.adapter else "false",
                        "strategy": args.strategy,
                    }
                    summarizers[variant] = Summarizer(
                        resolve_settings({k: v for k, v in flags.items() if v})
                    )
            spec = spec_of[reference["sha"]]
            for variant in variants:
                if split and reference["sha"] not in judge.in_half(split, args.half, variant.lang):
                    continue
                summarizer = summarizers[variant]
                pr, missed = locate(summarizer, reference["sha"], spec, discovered)
                tally = Tally(cards=1, found=int(not missed))
                started = time.perf_counter()
                read = summarizer.read(pr)
                facts: Facts = read.facts
                card: Card | None = None
                if args.facts_only:
                    verdict = prior_verdict(facts)
                    minutes = reading_minutes(verdict, facts)
                else:
                    card = summarizer.card_for(pr, read)
                    verdict, minutes = card.body.verdict, card.body.minutes
                tally.seconds.append(time.perf_counter() - started)
                # A PR that prsum lists apart (as a branch sync) gets no card.
                verdict_ok = not missed and verdict in reference["verdict"]
                tally.category = int(facts.category == reference["category"])
                tally.breaking = int(facts.breaking.is_breaking == reference["breaking"])
                tally.verdict = int(verdict_ok)
                if reference.get("minutes") is not None:
                    tally.minutes_error = abs(minutes - reference["minutes"])
                    tally.minutes_count = 1
                chrf_cell = "-"
                headline = facts.breaking.why if facts.breaking.is_breaking else ""
                if card is not None:
                    chrf_cell = score(reference, card, pr, read.diffs, tally)
                    headline = card.body.headline
                    reviewed.append(
                        review_card(card, reference, args.system or variant.label.split()[-1])
                    )
                    if dump is not None:
                        line = {"sha": reference["sha"], "variant": variant.label}
                        dump.write(json.dumps({**line, **card_to_dict(card)}, ensure_ascii=False))
                        dump.write("\n")
                tallies[variant][name].add(tally)
                if not args.quiet:
                    label = f"{name} {pr.label}"
                    category: str = facts.category
                    if category != reference["category"]:
                        category += f"≠{reference['category']}"
                    brk = ("B" if facts.breaking.is_breaking else "-") + (
                        "" if tally.breaking else "!"
                    )
                    mark = "" if verdict_ok else "✗"
                    ref_minutes = reference.get("minutes")
                    minutes_cell = f"{minutes}/{'-' if ref_minutes is None else ref_minutes}"
                    print(
                        f"{label:<14} {variant.label:<8} {category:<17} {brk:<3} "
                        f"{verdict + mark:<7} {'/'.join(reference['verdict']):<9} "
                        f"{minutes_cell:>7} {tally.recalled:>2}/{tally.entities:<2} "
                        f"{tally.ungrounded:>4} {chrf_cell:>9} {tally.seconds[-1]:>4.1f}  "
                        f"{missed or headline}",
                        flush=True,
                    )
    if dump is not None:
        dump.close()
    if args.cards:
        with args.cards.open("w", encoding="utf-8") as handle:
            for line in reviewed:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    if split and reviewed:
        cards = judge.with_references(reviewed, split, args.half)
        print("\nThe claim-level review (bench/judge): the judged figures first\n")
        langs = list(dict.fromkeys(card["lang"] for card in reviewed))
        print(judge.judged_table(cards, langs))
    totals: dict[str, Tally] = {}
    for variant in variants:
        total = Tally()
        for tally in tallies[variant].values():
            total.add(tally)
        totals[variant.label] = total
        print(f"\n{'facts' if args.facts_only else variant.label}")
        print(table({**tallies[variant], "total": total}, args.facts_only))
    if not args.facts_only:
        print()
        print(summary_table(totals))
        print(
            "\nheadlines, paragraphs: those the model wrote (the rest prsum wrote from facts); "
            "language: CJK > 50% of headline and summary letters in zh, none in en; "
            "s/card: median"
        )


if __name__ == "__main__":
    main()
