"""The claim-level review's command line: the split, packets for reviewers, their judgments in,
and the judged table out. PROTOCOL.md is what a reviewer follows; review.py holds the logic.

    python bench/judge/judge.py split                      # once: writes split.json
    python bench/judge/judge.py packets --round R CARDS...  # packets of cards not judged yet
    python bench/judge/judge.py check FILE                  # a reviewer's file, well formed?
    python bench/judge/judge.py ingest --round R            # reviewers' files -> judgments/
    python bench/judge/judge.py table CARDS... [--half dev] # the table, with the reference row

CARDS are JSON-lines files of cards (`bench/eval.py --cards FILE --system NAME` writes them):
one card a line with `system`, `repo`, `sha`, `lang` and the card's fields. The reference
cards of ../shared/eval/references.json are added as the system `reference` to every packet
and table. Packets, keys and clones live in the git-ignored `bench/judge/work/`; judgments,
our own text, are kept in `bench/judge/judgments/` by the hash of the card they judge.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
import sys
import tarfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import SHARED  # noqa: E402
from review import (  # noqa: E402
    REFERENCE_F_LIMIT,
    VERDICTS,
    JudgedCard,
    Judgment,
    JudgmentStore,
    MalformedJudgment,
    calibration,
    card_hash,
    parse_packet_judgments,
    system_row,
    table,
)

SPLIT = HERE / "split.json"
STORE = JudgmentStore(HERE / "judgments")
WORK = HERE / "work"
REFERENCE = "reference"
_VERDICT_PHRASES = {
    "zh": {"值得精读": "deep", "值得快速浏览": "skim", "不必精读代码细节": "skip"},
    "en": {
        "Worth reading closely": "deep",
        "Worth a quick read": "skim",
        "No need to read the code": "skip",
    },
}
_MINUTES = re.compile(r"(\d+)\s*(?:分钟|minutes?)")


def references() -> list[dict[str, Any]]:
    data = json.loads((SHARED / "eval" / "references.json").read_text(encoding="utf-8"))
    cards: list[dict[str, Any]] = data["cards"]
    return cards


# --- the split -----------------------------------------------------------------------------


def make_split(cards: list[dict[str, Any]]) -> dict[str, Any]:
    """Half of each repository's reference PRs for development, half for the test, by a hash
    of the sha (no choice of ours); en is judged on every other dev PR of each repository."""
    by_repo: dict[str, list[str]] = defaultdict(list)
    for card in cards:
        by_repo[card["repo"]].append(card["sha"])
    halves: dict[str, list[str]] = {"dev": [], "test": [], "dev_en": [], "test_en": []}
    for repo in sorted(by_repo):
        ordered = sorted(by_repo[repo], key=lambda sha: hashlib.sha256(sha.encode()).hexdigest())
        for index, sha in enumerate(ordered):
            half = "dev" if index % 2 == 0 else "test"
            halves[half].append(sha)
            if index % 4 in (0, 1):  # every other PR of each half
                halves[f"{half}_en"].append(sha)
    return {
        "about": (
            "The fixed split of ../shared/eval/references.json for the claim-level review "
            "(bench/judge/PROTOCOL.md): iterate on dev; judge test only when an issue closes. "
            "zh is judged on every PR of a half, en on its *_en subset. Written once by "
            "`judge.py split`; never edit it."
        ),
        **halves,
    }


def load_split() -> dict[str, list[str]]:
    if not SPLIT.is_file():
        raise SystemExit(f"{SPLIT} is missing: run `judge.py split` once")
    split: dict[str, list[str]] = json.loads(SPLIT.read_text(encoding="utf-8"))
    return split


def in_half(split: dict[str, list[str]], half: str, lang: str) -> set[str]:
    return set(split[half] if lang == "zh" else split[f"{half}_en"])


# --- cards ---------------------------------------------------------------------------------


def reference_card(reference: dict[str, Any], lang: str) -> dict[str, Any] | None:
    """The reference card in the form of prsum's cards: the verdict and minutes its paragraph
    opens with, the rest of the paragraph as the summary; the lesson and follow-up (written in
    English) only in en."""
    paragraph, headline = reference.get(f"card_{lang}"), reference.get(f"headline_{lang}")
    if not (paragraph and headline):
        return None
    verdict, opening = reference["verdict"][0], ""
    for phrase, named in _VERDICT_PHRASES[lang].items():
        if match := re.match(rf"{phrase}\s*(?:[（(][^）)]*[）)])?\s*[：:。.,，]?\s*", paragraph):
            verdict, opening = named, match.group()
            break
    summary = paragraph[len(opening) :]
    minutes = _MINUTES.search(opening)
    english = lang == "en"
    return {
        "system": REFERENCE,
        "repo": reference["repo"],
        "sha": reference["sha"],
        "number": reference.get("number"),
        "lang": lang,
        "headline": headline,
        "verdict": verdict,
        "minutes": int(minutes.group(1)) if minutes else reference.get("minutes") or 0,
        "summary": summary.strip(),
        "focus": [],
        "lessons": [reference["lesson"]] if english and reference.get("lesson") else [],
        "follow_ups": [reference["follow_up"]] if english and reference.get("follow_up") else [],
    }


def read_cards(paths: Iterable[Path]) -> list[dict[str, Any]]:
    cards = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            card = json.loads(line)
            missing = {"system", "repo", "sha", "lang", "headline", "verdict", "summary"} - set(
                card
            )
            if missing:
                raise SystemExit(f"{path}:{number}: a card without {', '.join(sorted(missing))}")
            cards.append(card)
    return cards


def with_references(
    cards: list[dict[str, Any]], split: dict[str, list[str]], half: str
) -> list[dict[str, Any]]:
    """The cards of the half (each language on its PRs), with the reference cards of those PRs."""
    kept = [c for c in cards if c["sha"] in in_half(split, half, c["lang"])]
    langs = {c["lang"] for c in kept}
    shas = {(c["sha"], c["lang"]) for c in kept}
    for reference in references():
        for lang in sorted(langs):
            if (reference["sha"], lang) in shas and (card := reference_card(reference, lang)):
                kept.append(card)
    return kept


# --- packets -------------------------------------------------------------------------------


def repo_path(repo: str) -> Path:
    """A clone of the fixture `repo` under work/repos (a bundle cloned, or verl's bare clone)."""
    root = WORK / "repos"
    bundle = SHARED / "fixtures" / f"{repo}.bundle"
    tarball = SHARED / "fixtures" / f"{repo}.git.tar.gz"
    if bundle.is_file():
        target = root / repo
        if not target.exists():
            root.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "clone", "-q", str(bundle), str(target)], check=True)
        return target
    target = root / f"{repo}.git"
    if not target.exists():
        root.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball) as archive:
            archive.extractall(root, filter="data")
    return target


def render_card(card_id: str, card: dict[str, Any]) -> str:
    lines = [f"## Card {card_id} ({card['lang']})", ""]
    lines.append(f"- headline: {card['headline']}")
    lines.append(f"- verdict: {card['verdict']}, {card.get('minutes', 0)} minutes")
    lines.append(f"- summary: {card['summary']}")
    for key in ("focus", "lessons", "follow_ups"):
        items = card.get(key) or []
        if not items:
            continue
        lines.append(f"- {key}:")
        for item in items:
            if key == "focus":
                symbol = f" · `{item['symbol']}`" if item.get("symbol") else ""
                lines.append(f"  - `{item['path']}`{symbol}: {item['why']}")
            else:
                lines.append(f"  - {item}")
    return "\n".join(lines) + "\n"


def packets(
    round_name: str, cards: list[dict[str, Any]]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(packet id, packet text, key) for each PR with a card not judged yet. The reference card
    goes into every packet, unmarked; card ids are random and the order shuffled."""
    rng = random.Random(round_name)
    by_pr: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    systems: dict[str, set[str]] = defaultdict(set)
    for card in cards:
        digest = card_hash(card)
        by_pr[(card["repo"], card["sha"])][digest] = card
        systems[digest].add(card["system"])
    number = 0
    for (repo, sha), found in sorted(by_pr.items()):
        fresh = {d: c for d, c in found.items() if STORE.first(d) is None}
        if not any(systems[d] - {REFERENCE} for d in fresh):
            continue
        chosen = {d: c for d, c in found.items() if d in fresh or REFERENCE in systems[d]}
        order = sorted(chosen, key=lambda d: (chosen[d]["lang"], rng.random()))
        ids = {digest: f"c{rng.randrange(16**4):04x}" for digest in order}
        number += 1
        packet = f"p{number:02d}"
        clone = repo_path(repo)
        answer = WORK / round_name / "judged" / f"{packet}.json"
        text = [
            f"# Packet {packet}: {repo} {sha[:10]}",
            "",
            f"Follow {HERE / 'PROTOCOL.md'}.",
            "",
            f"- clone: `{clone}`",
            f"- commit: `{sha}`",
            f"- read it: `git -C {clone} show --stat --format=fuller {sha}` and "
            f"`git -C {clone} diff {sha}^1 {sha}`",
            f"- write your judgments to: `{answer}`",
            "",
            *(render_card(ids[d], chosen[d]) for d in order),
        ]
        key = {
            ids[d]: {
                "hash": d,
                "systems": sorted(systems[d]),
                **{k: chosen[d][k] for k in ("repo", "sha", "lang")},
            }
            for d in order
        }
        yield packet, "\n".join(text), key


def write_packets(round_name: str, cards: list[dict[str, Any]]) -> None:
    folder = WORK / round_name
    if (folder / "key.json").exists():
        raise SystemExit(f"round {round_name} exists ({folder}): choose another name")
    (folder / "packets").mkdir(parents=True, exist_ok=True)
    (folder / "judged").mkdir(exist_ok=True)
    keys: dict[str, Any] = {}
    for packet, text, key in packets(round_name, cards):
        (folder / "packets" / f"{packet}.md").write_text(text, encoding="utf-8")
        keys[packet] = key
    # The key stays apart from the packets: reviewers are pointed at packets/ only.
    (folder / "key.json").write_text(json.dumps(keys, indent=1), encoding="utf-8")
    cards_to_judge = sum(len(key) for key in keys.values())
    print(f"round {round_name}: {len(keys)} packets, {cards_to_judge} cards, in {folder}/packets")


def check(path: Path) -> None:
    """Whether a reviewer's file for one packet has the protocol's shape (reviewers run this on
    their own files; it reads no key, so it says nothing of which card is whose)."""
    packet = path.stem
    text = (path.parent.parent / "packets" / f"{packet}.md").read_text(encoding="utf-8")
    card_ids = re.findall(r"^## Card (c[0-9a-f]{4}) ", text, flags=re.MULTILINE)
    try:
        parse_packet_judgments(json.loads(path.read_text(encoding="utf-8")), packet, card_ids)
    except (MalformedJudgment, json.JSONDecodeError) as exc:
        raise SystemExit(f"{path}: {exc}") from None
    print(f"{path}: well formed ({len(card_ids)} cards)")


def ingest(round_name: str) -> None:
    """The reviewers' files of a round into the store: all of a file or none of it."""
    folder = WORK / round_name
    keys = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    problems = []
    stored = 0
    for packet, key in sorted(keys.items()):
        path = folder / "judged" / f"{packet}.json"
        if not path.is_file():
            problems.append(f"{packet}: not judged yet")
            continue
        try:
            judged = parse_packet_judgments(
                json.loads(path.read_text(encoding="utf-8")), packet, key
            )
        except (MalformedJudgment, json.JSONDecodeError) as exc:
            problems.append(str(exc))
            continue
        for card_id, judgment in judged.items():
            STORE.add(key[card_id]["hash"], judgment, round_name, key[card_id])
            stored += 1
    print(f"round {round_name}: {stored} judgments stored")
    for problem in problems:
        print(f"  {problem}")
    if problems:
        raise SystemExit(1)


# --- the table -----------------------------------------------------------------------------


def judged_table(cards: list[dict[str, Any]], langs: list[str]) -> str:
    out = []
    for lang in [*langs, "all"] if len(langs) > 1 else langs:
        chosen = [c for c in cards if lang == "all" or c["lang"] == lang]
        systems = list(dict.fromkeys(c["system"] for c in chosen if c["system"] != REFERENCE))
        rows = []
        for system in [*systems, REFERENCE]:
            judged = [
                JudgedCard(c["system"], c["repo"], c["sha"], c["lang"], STORE.first(card_hash(c)))
                for c in chosen
                if c["system"] == system
            ]
            if any(card.judgment for card in judged):
                rows.append(system_row(system, judged))
        prs = len({c["sha"] for c in chosen})
        out.append(f"### {lang}: {prs} PRs\n\n{table(rows)}")
        by_round: dict[str, list[Judgment]] = defaultdict(list)
        for c in chosen:
            if c["system"] == REFERENCE:
                for judgment in STORE.all(card_hash(c)):
                    by_round[judgment.round].append(judgment)
        shares = calibration(by_round)
        if shares:
            marks = ", ".join(
                f"{name} {100 * share:.1f}%{'' if share <= REFERENCE_F_LIMIT else ' (redo)'}"
                for name, share in shares.items()
            )
            out.append(f"\nreference cards' false share by round: {marks}")
    return "\n\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("split", help="write split.json (once)")
    make = commands.add_parser("packets", help="packets of the cards not judged yet")
    make.add_argument("--round", required=True, help="a new round's name")
    make.add_argument("--half", choices=["dev", "test"], default="dev")
    make.add_argument("cards", nargs="+", type=Path)
    lint = commands.add_parser("check", help="check one reviewer's file for its packet")
    lint.add_argument("file", type=Path)
    take = commands.add_parser("ingest", help="store a round's judgments")
    take.add_argument("--round", required=True)
    show = commands.add_parser("table", help="the judged table")
    show.add_argument("--half", choices=["dev", "test"], default="dev")
    show.add_argument("cards", nargs="+", type=Path)
    args = parser.parse_args()
    if args.command == "split":
        if SPLIT.exists():
            raise SystemExit(f"{SPLIT} exists: the split is written once")
        SPLIT.write_text(json.dumps(make_split(references()), indent=1) + "\n", encoding="utf-8")
        return
    if args.command == "ingest":
        ingest(args.round)
        return
    if args.command == "check":
        check(args.file)
        return
    cards = with_references(read_cards(args.cards), load_split(), args.half)
    unknown = {c["verdict"] for c in cards} - set(VERDICTS)
    if unknown:
        raise SystemExit(f"cards with verdicts {sorted(unknown)}")
    if args.command == "packets":
        write_packets(args.round, cards)
    else:
        langs = sorted({c["lang"] for c in cards}, key=["zh", "en"].index)
        print(judged_table(cards, langs))


if __name__ == "__main__":
    main()
