"""Check the card corpus: every card well-formed and judged as CARDS.md asks, the corpus as a whole
big and varied enough, and — where a clone of a card's repository is at hand — every name a card
cites present in its PR.

    python -m training.check                       # the committed corpus, totals required
    python -m training.check FILE.jsonl --partial  # one batch: its cards only, no totals
    python -m training.check --clones DIR          # also ground every card in its clone

A clone of `owner/name` is looked for in DIR as `owner+name/repo`, `owner+name`,
`owner+name.git`, `name.git` or `name` (also from the environment variable PRSUM_CORPUS_CLONES). Exit 0 when all holds, 1 with
one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from prsum.cards.checks import sentences
from prsum.grounding import cited_names
from training.sources import (
    MAX_PRS_PER_REPOSITORY,
    SOURCES,
    is_reference_repository,
)

CORPUS_DIR = Path(__file__).parent / "corpus"
LANGS = ("zh", "en")
VERDICTS = ("deep", "skim", "skip")
CARD_KEYS = {"headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups"}
RECORD_KEYS = {"repo", "range", "sha", "number", *LANGS}
# The renderer puts the verdict phrase before the paragraph; a paragraph that repeats it reads twice.
VERDICT_PHRASES = (
    "值得精读",
    "值得细读",
    "值得一读",
    "值得快速",
    "不必精读",
    "不必细读",
    "无需精读",
    "Worth reading",
    "Worth a close read",
    "Worth a quick read",
    "Read closely",
    "No need to read",
)
MINUTES = {"skip": (0, 0), "skim": (1, 15), "deep": (5, 60)}
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_URL = re.compile(r"https?://")
# Sentence ends outside backticks: CJK full stops, or Latin ones followed by a space or the end.


@dataclass(frozen=True)
class Totals:
    """What the corpus as a whole must reach (issue 14)."""

    cards: int = 1000
    repositories: int = 25
    languages: int = 5
    skip_share: float = 0.25
    deep_share: float = 0.15


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    records: list[dict[str, object]] = field(default_factory=list)

    def add(self, where: str, problem: str) -> None:
        self.problems.append(f"{where}: {problem}")


def read_corpus(paths: Iterable[Path], report: Report) -> None:
    """Parse every line; a line that is not a JSON object is a problem, not a crash."""
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                report.add(where, f"not JSON ({error.msg})")
                continue
            if not isinstance(record, dict):
                report.add(where, "not a JSON object")
                continue
            record["_where"] = where
            report.records.append(record)


def _strip_code(text: str) -> str:
    return re.sub(r"`[^`\n]*`", "x", text)


def check_card(where: str, lang: str, card: object, report: Report) -> None:
    """One language's card: fields, lengths, language, the paragraph's shape."""
    if not isinstance(card, dict):
        report.add(where, f"{lang} card is not an object")
        return
    if set(card) != CARD_KEYS:
        report.add(where, f"{lang} card keys {sorted(card)} are not {sorted(CARD_KEYS)}")
        return
    verdict, minutes = card["verdict"], card["minutes"]
    if verdict not in VERDICTS:
        report.add(where, f"{lang} verdict {verdict!r} is not one of {VERDICTS}")
        return
    low, high = MINUTES[verdict]
    if not isinstance(minutes, int) or not low <= minutes <= high:
        report.add(where, f"{lang} minutes {minutes!r} do not fit {verdict} ({low}..{high})")
    texts = _card_texts(where, lang, card, report)
    headline, summary = card["headline"], card["summary"]
    if not isinstance(headline, str) or not isinstance(summary, str):
        report.add(where, f"{lang} headline and summary must be strings")
        return
    _check_headline(where, lang, headline, report)
    count = len(sentences(summary, "zh" if lang == "zh" else "en"))
    if not 2 <= count <= 5:
        report.add(where, f"{lang} summary has {count} sentences, not 2 to 5")
    # A skip card may be short: a floor that asks more only buys filler.
    low_chars = {"zh": 60, "en": 140}[lang] if verdict != "skip" else {"zh": 40, "en": 100}[lang]
    high_chars = 650 if lang == "zh" else 1500
    if not low_chars <= len(summary) <= high_chars:
        report.add(
            where, f"{lang} summary is {len(summary)} characters, not {low_chars}..{high_chars}"
        )
    if summary.lstrip("*_ ").startswith(VERDICT_PHRASES):
        report.add(where, f"{lang} summary repeats the verdict phrase the renderer adds")
    if verdict != "skip" and "`" not in summary:
        report.add(where, f"{lang} summary of a {verdict} card names no place in backticks")
    if verdict != "skip" and not card["focus"]:
        report.add(where, f"{lang} {verdict} card has no focus place")
    for text in texts:
        _check_language(where, lang, text, report)
        if _URL.search(text):
            report.add(where, f"{lang} card holds a URL (say only what git shows)")


def _card_texts(where: str, lang: str, card: dict[str, object], report: Report) -> list[str]:
    """The card's prose, with the list fields' shapes checked on the way."""
    texts = [str(card["headline"]), str(card["summary"])]
    focus = card["focus"]
    if not isinstance(focus, list) or len(focus) > 5:
        report.add(where, f"{lang} focus must be a list of at most 5 places")
    else:
        for place in focus:
            if (
                not isinstance(place, dict)
                or set(place) != {"path", "symbol", "why"}
                or not isinstance(place["path"], str)
                or not place["path"]
                or not (place["symbol"] is None or isinstance(place["symbol"], str))
                or not isinstance(place["why"], str)
                or not place["why"].strip()
            ):
                report.add(where, f"{lang} focus place {place!r} needs path, symbol|null, why")
                continue
            texts.append(place["why"])
    limit = 140 if lang == "zh" else 280
    for key in ("lessons", "follow_ups"):
        items = card[key]
        if not isinstance(items, list) or len(items) > 3:
            report.add(where, f"{lang} {key} must be a list of at most 3 items")
            continue
        for item in items:
            if not isinstance(item, str) or not item.strip() or len(item) > limit:
                report.add(where, f"{lang} {key} item {item!r} is empty or over {limit} characters")
                continue
            texts.append(item)
    return texts


def _check_headline(where: str, lang: str, headline: str, report: Report) -> None:
    if not headline.strip():
        report.add(where, f"{lang} headline is empty")
    elif lang == "zh":
        cjk = len(_CJK.findall(headline))
        if cjk == 0 or cjk > 24 or len(headline) > 40:
            report.add(where, f"zh headline {headline!r}: 1..24 CJK characters, at most 40 in all")
    elif len(headline.split()) > 12:
        report.add(where, f"en headline {headline!r} has more than 12 words")


def _check_language(where: str, lang: str, text: str, report: Report) -> None:
    plain = _strip_code(text)
    cjk = len(_CJK.findall(plain))
    if lang == "en" and cjk:
        report.add(where, f"en text holds Chinese: {text[:40]!r}")
    # Technical terms stay in Latin letters; a word counts as much as one CJK character.
    if lang == "zh" and plain.strip() and cjk < len(_LATIN_WORD.findall(plain)):
        report.add(where, f"zh text is not mostly Chinese: {text[:40]!r}")


def check_record(record: dict[str, object], report: Report) -> None:
    where = str(record["_where"])
    keys = set(record) - {"_where"}
    if keys != RECORD_KEYS:
        report.add(where, f"keys {sorted(keys)} are not {sorted(RECORD_KEYS)}")
        return
    repo, sha = record["repo"], record["sha"]
    if repo not in SOURCES:
        report.add(where, f"repository {repo!r} is not in training/sources.py")
    if isinstance(repo, str) and is_reference_repository(repo):
        report.add(where, f"repository {repo!r} measures prsum and may not be trained on")
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}", sha):
        report.add(where, f"sha {sha!r} is not a full 40-digit sha")
    if not isinstance(record["range"], str) or ".." not in str(record["range"]):
        report.add(where, f"range {record['range']!r} is not A..B")
    number = record["number"]
    if number is not None and (not isinstance(number, int) or number < 1):
        report.add(where, f"number {number!r} is neither null nor a PR number")
    for lang in LANGS:
        check_card(where, lang, record[lang], report)
    zh, en = record["zh"], record["en"]
    if isinstance(zh, dict) and isinstance(en, dict):
        if (zh.get("verdict"), zh.get("minutes")) != (en.get("verdict"), en.get("minutes")):
            report.add(where, "zh and en disagree on verdict or minutes")
        if _places(zh) != _places(en):
            report.add(where, "zh and en focus different places")


def _places(card: dict[str, object]) -> list[tuple[object, object]]:
    focus = card.get("focus")
    if not isinstance(focus, list):
        return []
    return [(p.get("path"), p.get("symbol")) for p in focus if isinstance(p, dict)]


def check_corpus(report: Report, totals: Totals | None) -> None:
    seen: Counter[tuple[object, object]] = Counter(
        (record.get("repo"), record.get("sha")) for record in report.records
    )
    for (repo, sha), count in seen.items():
        if count > 1:
            report.add("corpus", f"{repo} {sha} has {count} cards")
    per_repo = Counter(str(record.get("repo")) for record in report.records)
    for repo, count in per_repo.items():
        if count > MAX_PRS_PER_REPOSITORY:
            report.add("corpus", f"{repo} has {count} cards, more than {MAX_PRS_PER_REPOSITORY}")
    if totals is None:
        return
    verdicts = Counter(_verdict(record) for record in report.records)
    cards = len(report.records)
    languages = {SOURCES[repo] for repo in per_repo if repo in SOURCES}
    if cards < totals.cards:
        report.add("corpus", f"{cards} cards, fewer than {totals.cards}")
    if len(per_repo) < totals.repositories:
        report.add("corpus", f"{len(per_repo)} repositories, fewer than {totals.repositories}")
    if len(languages) < totals.languages:
        report.add("corpus", f"{len(languages)} languages, fewer than {totals.languages}")
    for verdict, share in (("skip", totals.skip_share), ("deep", totals.deep_share)):
        if cards and verdicts[verdict] / cards < share:
            report.add("corpus", f"{verdict} is {verdicts[verdict] / cards:.0%}, under {share:.0%}")


def _verdict(record: dict[str, object]) -> str:
    zh = record.get("zh")
    return str(zh.get("verdict")) if isinstance(zh, dict) else "?"


def find_clone(clones: Path, repo: str) -> Path | None:
    owner, name = repo.split("/", 1)
    for candidate in (
        clones / f"{owner}+{name}" / "repo",
        clones / f"{owner}+{name}",
        clones / f"{owner}+{name}.git",
        clones / f"{name}.git",
        clones / name,
    ):
        if candidate.is_dir():
            return candidate
    return None


def _git(clone: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, errors="replace"
    )
    if result.returncode != 0:
        raise LookupError(result.stderr.strip().splitlines()[-1] if result.stderr else "git failed")
    return result.stdout


@dataclass(frozen=True)
class PullRequestText:
    """What a card may cite: the message, the paths, the diff against the first parent."""

    text: str
    paths: frozenset[str]

    @classmethod
    def read(cls, clone: Path, sha: str) -> PullRequestText:
        parents = _git(clone, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        base = parents[0] if parents else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        message = _git(clone, "show", "-s", "--format=%B", sha)
        status = _git(clone, "diff", "--name-status", "-M", base, sha)
        paths = {part for line in status.splitlines() for part in line.split("\t")[1:]}
        diff = _git(clone, "diff", "-M", "--unified=3", base, sha)
        return cls("\n".join([message, *sorted(paths), diff]), frozenset(paths))

    def knows(self, name: str) -> bool:
        core = name.strip().rstrip("().,;:")
        return bool(core) and (
            core in self.paths or core in self.text or core.split("(")[0] in self.text
        )


def ground(report: Report, clones: Path) -> int:
    """Check every cited name against its PR where the clone is present; count cards grounded."""
    grounded = 0
    for record in report.records:
        repo, sha, where = str(record.get("repo")), str(record.get("sha")), str(record["_where"])
        clone = find_clone(clones, repo) if "/" in repo else None
        if clone is None:
            continue
        try:
            pr = PullRequestText.read(clone, sha)
            in_range = _git(clone, "rev-list", "--first-parent", str(record.get("range")))
        except LookupError as error:
            report.add(where, f"{repo} {sha[:10]}: {error}")
            continue
        if sha not in in_range.split():
            report.add(
                where, f"{sha[:10]} is not on the first-parent line of {record.get('range')}"
            )
        for lang in LANGS:
            for name in sorted(set(_cited(record.get(lang)))):
                if not pr.knows(name):
                    report.add(where, f"{lang} cites `{name}`, which the PR does not contain")
        grounded += 1
    return grounded


def _cited(card: object) -> Iterator[str]:
    if not isinstance(card, dict):
        return
    for key in ("headline", "summary"):
        yield from cited_names(str(card.get(key, "")))
    for key in ("lessons", "follow_ups"):
        for item in card.get(key) or ():
            yield from cited_names(str(item))
    for place in card.get("focus") or ():
        if isinstance(place, dict):
            yield str(place.get("path"))
            if place.get("symbol"):
                yield str(place["symbol"])
            yield from cited_names(str(place.get("why", "")))


def summary_line(report: Report) -> str:
    records = report.records
    verdicts = Counter(_verdict(record) for record in records)
    repos = Counter(str(record.get("repo")) for record in records)
    languages = Counter(SOURCES.get(repo, "?") for repo in repos)
    mix = ", ".join(
        f"{v} {verdicts[v]} ({verdicts[v] / max(len(records), 1):.0%})" for v in VERDICTS
    )
    return (
        f"{len(records)} cards, {len(repos)} repositories, {len(languages)} languages"
        f" ({', '.join(sorted(languages))}); {mix}"
    )


def ranges_table(report: Report) -> str:
    """The corpus as a Markdown table: repository, language, ranges, cards, verdict mix."""
    rows: dict[str, list[dict[str, object]]] = {}
    for record in report.records:
        rows.setdefault(str(record.get("repo")), []).append(record)
    lines = [
        "| repository | language | ranges | cards | deep / skim / skip |",
        "| --- | --- | --- | --- | --- |",
    ]
    for repo in sorted(rows, key=str.lower):
        records = rows[repo]
        ranges = Counter(str(record.get("range")) for record in records)
        verdicts = Counter(_verdict(record) for record in records)
        spans = ", ".join(f"`{span}` ({count})" for span, count in ranges.items())
        mix = " / ".join(str(verdicts[v]) for v in VERDICTS)
        lines.append(f"| {repo} | {SOURCES.get(repo, '?')} | {spans} | {len(records)} | {mix} |")
    verdicts = Counter(_verdict(record) for record in report.records)
    mix = " / ".join(str(verdicts[v]) for v in VERDICTS)
    lines.append(f"| **all** | | | **{len(report.records)}** | {mix} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.check", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "files", nargs="*", type=Path, help="corpus files (default: all of training/corpus)"
    )
    parser.add_argument(
        "--partial", action="store_true", help="check cards only, not the corpus totals"
    )
    parser.add_argument(
        "--clones",
        type=Path,
        default=os.environ.get("PRSUM_CORPUS_CLONES"),
        help="folder of clones to ground the cited names in",
    )
    parser.add_argument("--table", action="store_true", help="print the corpus as a Markdown table")
    args = parser.parse_args(argv)
    files = args.files or sorted(CORPUS_DIR.glob("*.jsonl"))
    report = Report()
    read_corpus(files, report)
    for record in report.records:
        check_record(record, report)
    check_corpus(report, None if args.partial else Totals())
    if args.table:
        print(ranges_table(report))
        return 0
    grounded = ground(report, args.clones) if args.clones else 0
    for problem in report.problems:
        print(problem)
    print(summary_line(report) + (f"; {grounded} grounded in their clones" if args.clones else ""))
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
