"""The claim-level review of cards: what a judgment is, where judgments are kept, and the table.

A reviewer (never the author of the change under test) reads a PR's diff, splits each card of
its packet into atomic claims and labels them S (the diff shows it), F (false) or U
(unsupported or empty), then judges the card whole: `sign`, `verdict_ok`, `insight`
(PROTOCOL.md). Judgments are kept by the hash of the card's text and its PR, so an unchanged
card is never judged again. The table gives, per system, the claims per card, the S/F/U shares,
sign yes/edit/no, verdict_ok and mean insight, each with a bootstrap 95% interval over PRs.

This module is pure: no git, no model. `judge.py` is its command line.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LABELS = ("S", "F", "U")
SIGNS = ("yes", "edit", "no")
FIELDS = ("headline", "summary", "focus", "lessons", "follow_ups")
CARD_KEYS = ("headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups")
VERDICTS = ("deep", "skim", "skip")
BOOTSTRAP_SAMPLES = 2000
# The reference cards calibrate a round: reviewers who find more of their claims false than this
# judged too harshly (or carelessly), and the round is redone.
REFERENCE_F_LIMIT = 0.05


class MalformedJudgment(ValueError):
    """A judgment that does not follow the protocol's shape."""


@dataclass(frozen=True)
class Claim:
    field: str
    text: str
    label: str
    why: str


@dataclass(frozen=True)
class Judgment:
    claims: tuple[Claim, ...]
    sign: str
    verdict_ok: bool
    insight: int
    note: str = ""
    round: str = ""

    def count(self, label: str) -> int:
        return sum(1 for claim in self.claims if claim.label == label)


@dataclass(frozen=True)
class JudgedCard:
    """One card of one system, with its judgment (None: not judged yet)."""

    system: str
    repo: str
    sha: str
    lang: str
    judgment: Judgment | None


def card_hash(card: Mapping[str, Any]) -> str:
    """The identity of a card's text for one PR and language: what a judgment is kept under.
    Only what a reviewer reads counts (the text fields, the verdict and minutes)."""
    shown = {key: card.get(key) for key in CARD_KEYS}
    payload = json.dumps(
        [card["sha"], card["lang"], shown],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _require(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise MalformedJudgment(f"{where}: {message}")


def parse_judgment(value: Any, where: str = "judgment") -> Judgment:
    """A judgment from its JSON form, or MalformedJudgment naming what is wrong."""
    _require(isinstance(value, dict), where, "not an object")
    missing = {"claims", "sign", "verdict_ok", "insight"} - set(value)
    _require(not missing, where, f"missing {', '.join(sorted(missing))}")
    claims_value = value["claims"]
    _require(isinstance(claims_value, list), where, "claims is not a list")
    claims = []
    for index, item in enumerate(claims_value):
        at = f"{where}, claim {index + 1}"
        _require(isinstance(item, dict), at, "not an object")
        field, text, label = item.get("field"), item.get("text"), item.get("label")
        why = item.get("why", "")
        _require(field in FIELDS, at, f"field {field!r} is not one of {', '.join(FIELDS)}")
        _require(isinstance(text, str) and text.strip() != "", at, "text is empty")
        _require(label in LABELS, at, f"label {label!r} is not S, F or U")
        _require(isinstance(why, str), at, "why is not a string")
        _require(label == "S" or why.strip() != "", at, f"an {label} claim needs its why")
        claims.append(Claim(field, text, label, why))
    _require(value["sign"] in SIGNS, where, f"sign {value['sign']!r} is not yes, edit or no")
    _require(isinstance(value["verdict_ok"], bool), where, "verdict_ok is not true or false")
    insight = value["insight"]
    _require(
        isinstance(insight, int) and not isinstance(insight, bool) and insight in (0, 1, 2),
        where,
        f"insight {insight!r} is not 0, 1 or 2",
    )
    note = value.get("note", "")
    _require(isinstance(note, str), where, "note is not a string")
    return Judgment(tuple(claims), value["sign"], value["verdict_ok"], insight, note)


def parse_packet_judgments(value: Any, packet: str, card_ids: Iterable[str]) -> dict[str, Judgment]:
    """A reviewer's file for one packet: a judgment for exactly the packet's cards."""
    where = f"packet {packet}"
    _require(isinstance(value, dict), where, "not an object")
    _require(value.get("packet") == packet, where, f"says it is packet {value.get('packet')!r}")
    cards = value.get("cards")
    _require(isinstance(cards, dict), where, "cards is not an object")
    expected = set(card_ids)
    _require(
        set(cards) == expected,
        where,
        f"judges cards {sorted(cards)}, the packet has {sorted(expected)}",
    )
    return {card: parse_judgment(cards[card], f"{where}, card {card}") for card in sorted(cards)}


class JudgmentStore:
    """Judgments by card hash, one JSON file each (a list: one judgment per round that judged
    the card). The first is the card's judgment; later ones are kept for calibration."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / f"{digest}.json"

    def all(self, digest: str) -> list[Judgment]:
        path = self._path(digest)
        if not path.is_file():
            return []
        entries = json.loads(path.read_text(encoding="utf-8"))
        judged = []
        for entry in entries:
            judgment = parse_judgment(entry, str(path))
            judged.append(
                Judgment(
                    judgment.claims,
                    judgment.sign,
                    judgment.verdict_ok,
                    judgment.insight,
                    judgment.note,
                    str(entry.get("round", "")),
                )
            )
        return judged

    def first(self, digest: str) -> Judgment | None:
        judged = self.all(digest)
        return judged[0] if judged else None

    def add(
        self, digest: str, judgment: Judgment, round_name: str, card: Mapping[str, Any]
    ) -> None:
        """Keep `judgment` of the card `digest` from `round_name`; a round judges a card once."""
        path = self._path(digest)
        entries = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
        if any(entry.get("round") == round_name for entry in entries):
            return
        entries.append(
            {
                "round": round_name,
                "repo": card["repo"],
                "sha": card["sha"],
                "lang": card["lang"],
                "claims": [vars(claim) for claim in judgment.claims],
                "sign": judgment.sign,
                "verdict_ok": judgment.verdict_ok,
                "insight": judgment.insight,
                "note": judgment.note,
            }
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entries, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


# --- the table -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def percent(self) -> str:
        return f"{100 * self.value:.0f} [{100 * self.low:.0f}–{100 * self.high:.0f}]"

    def plain(self, digits: int = 2) -> str:
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}–{self.high:.{digits}f}]"


@dataclass(frozen=True)
class SystemRow:
    system: str
    cards: int
    judged: int
    claims: int
    claims_per_card: Interval
    shares: dict[str, Interval]  # S, F, U: of all claims
    signs: dict[str, Interval]  # yes, edit, no: of judged cards
    signable: Interval  # yes + edit
    verdict_ok: Interval
    insight: Interval


def _statistics(judgments: Sequence[Judgment]) -> dict[str, float]:
    """The row's figures over a sample of judgments (claims pooled: a share is of all claims)."""
    cards = len(judgments)
    claims = sum(len(j.claims) for j in judgments)
    figures = {
        "claims_per_card": claims / cards if cards else 0.0,
        "verdict_ok": sum(j.verdict_ok for j in judgments) / cards if cards else 0.0,
        "insight": sum(j.insight for j in judgments) / cards if cards else 0.0,
        "signable": sum(j.sign != "no" for j in judgments) / cards if cards else 0.0,
    }
    for label in LABELS:
        figures[label] = sum(j.count(label) for j in judgments) / claims if claims else 0.0
    for sign in SIGNS:
        figures[sign] = sum(j.sign == sign for j in judgments) / cards if cards else 0.0
    return figures


def bootstrap(
    groups: Sequence[Sequence[Judgment]], samples: int = BOOTSTRAP_SAMPLES, seed: int = 7
) -> dict[str, Interval]:
    """Each figure with its 95% interval, resampling PRs (a group: the judged cards of one PR)
    with replacement: claims of one card, and cards of one PR, are not independent."""
    pooled = [judgment for group in groups for judgment in group]
    point = _statistics(pooled)
    rng = random.Random(seed)
    drawn: dict[str, list[float]] = {name: [] for name in point}
    for _ in range(samples):
        sample = [j for _ in groups for j in groups[rng.randrange(len(groups))]]
        for name, value in _statistics(sample).items():
            drawn[name].append(value)
    intervals = {}
    for name, value in point.items():
        values = sorted(drawn[name])
        low = values[int(0.025 * (len(values) - 1))]
        high = values[int(0.975 * (len(values) - 1))]
        intervals[name] = Interval(value, low, high)
    return intervals


def system_row(system: str, cards: Sequence[JudgedCard]) -> SystemRow:
    """One system's figures over its judged cards."""
    by_pr: dict[tuple[str, str], list[Judgment]] = {}
    for card in cards:
        if card.judgment is not None:
            by_pr.setdefault((card.repo, card.sha), []).append(card.judgment)
    groups = list(by_pr.values())
    if not groups:
        raise ValueError(f"no judged card of {system}")
    figures = bootstrap(groups)
    judged = sum(len(group) for group in groups)
    return SystemRow(
        system=system,
        cards=len(cards),
        judged=judged,
        claims=sum(len(j.claims) for group in groups for j in group),
        claims_per_card=figures["claims_per_card"],
        shares={label: figures[label] for label in LABELS},
        signs={sign: figures[sign] for sign in SIGNS},
        signable=figures["signable"],
        verdict_ok=figures["verdict_ok"],
        insight=figures["insight"],
    )


def table(rows: Sequence[SystemRow]) -> str:
    """The judged table in Markdown, false share first."""
    head = (
        "| system | cards judged | claims/card | false % | supported % | empty % | "
        "sign yes / edit / no % | signable % | verdict ok % | insight (0–2) |"
    )
    lines = [head, "|" + " --- |" * 10]
    for row in rows:
        signs = " / ".join(f"{100 * row.signs[sign].value:.0f}" for sign in SIGNS)
        judged = f"{row.judged}" if row.judged == row.cards else f"{row.judged} of {row.cards}"
        lines.append(
            f"| {row.system} | {judged} | {row.claims_per_card.plain(1)} | "
            f"**{row.shares['F'].percent()}** | {row.shares['S'].percent()} | "
            f"{row.shares['U'].percent()} | {signs} | {row.signable.percent()} | "
            f"{row.verdict_ok.percent()} | {row.insight.plain()} |"
        )
    return "\n".join(lines)


def calibration(judgments_by_round: Mapping[str, Sequence[Judgment]]) -> dict[str, float]:
    """The false share the reference cards got in each round (must be <= REFERENCE_F_LIMIT)."""
    shares = {}
    for name, judged in sorted(judgments_by_round.items()):
        claims = sum(len(j.claims) for j in judged)
        shares[name] = sum(j.count("F") for j in judged) / claims if claims else 0.0
    return shares
