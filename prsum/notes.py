"""Release notes from a range of cards: highlights, sections by kind of change, contributors.

Every PR of the range appears exactly once; direct commits, bots' commits and branch syncs
are listed apart, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prsum.i18n import PHRASES
from prsum.types import Card, Discovery, Language, PullRequest

SECTIONS = ("breaking", "features", "fixes", "performance", "docs", "internal")
_SECTION_OF_CATEGORY = {
    "feature": "features",
    "fix": "fixes",
    "perf": "performance",
    "docs": "docs",
}


@dataclass(frozen=True)
class NoteEntry:
    number: int | None
    sha: str
    headline: str
    authors: tuple[str, ...]
    category: str
    verdict: str


@dataclass(frozen=True)
class NoteSection:
    key: str
    title: str
    entries: tuple[NoteEntry, ...]


@dataclass(frozen=True)
class OtherEntry:
    sha: str
    subject: str
    author: str


@dataclass(frozen=True)
class ReleaseNotes:
    range_spec: str
    title: str
    highlights: str
    sections: tuple[NoteSection, ...]
    contributors: tuple[str, ...]
    direct_commits: tuple[OtherEntry, ...]
    bot_commits_skipped: int
    sync_merges: tuple[OtherEntry, ...]
    lang: Language


def undecorated_title(title: str) -> str:
    """A PR title without its leading emoji and trailing `(#N)`: a release-notes line when the
    card's headline was written from facts rather than by the model."""
    return re.sub(r"^[^\w`]+|\s*\(#\d+\)\s*$", "", title) or title


def section_of(card: Card) -> str:
    """Breaking changes first, whatever their kind; then by category; the rest is internal."""
    if card.facts.breaking.is_breaking:
        return "breaking"
    return _SECTION_OF_CATEGORY.get(card.facts.category, "internal")


def contributors(prs: Sequence[PullRequest]) -> tuple[str, ...]:
    """Authors and co-authors, each person once: the same email or the same name is the same
    person. Bots are not contributors. Names in order of first appearance."""
    groups: list[tuple[set[str], set[str], str]] = []  # (names, emails, display name)
    for pr in prs:
        emails = pr.author_emails or ("",) * len(pr.authors)
        for name, email in zip(pr.authors, emails, strict=False):
            if name.endswith("[bot]") or "[bot]@" in email:
                continue
            key_name, key_email = name.casefold(), email.casefold()
            matches = [g for g in groups if key_name in g[0] or (key_email and key_email in g[1])]
            if not matches:
                groups.append(({key_name}, {key_email} - {""}, name))
                continue
            keep = matches[0]
            keep[0].add(key_name)
            if key_email:
                keep[1].add(key_email)
            for other in matches[1:]:  # this person links two groups: one person after all
                keep[0].update(other[0])
                keep[1].update(other[1])
                groups.remove(other)
    return tuple(display for _, _, display in groups)


def notes_title(range_spec: str, lang: Language) -> str:
    start, dots, end = range_spec.partition("..")
    span = f"{start} → {end or 'HEAD'}" if dots else range_spec
    return PHRASES[lang].notes_title.format(span=span)


def build_notes(
    discovery: Discovery,
    cards: Sequence[Card],
    highlights: str,
    lang: Language,
    failed: Sequence[PullRequest] = (),
) -> ReleaseNotes:
    """The notes of a range from its cards and a highlights text.

    A PR whose card failed is still listed, under internal changes, by its title.
    """
    by_section: dict[str, list[NoteEntry]] = {key: [] for key in SECTIONS}
    for card in cards:
        by_section[section_of(card)].append(
            NoteEntry(
                number=card.pr.number,
                sha=card.pr.sha,
                headline=card.body.headline
                if card.body.headline_by_model
                else undecorated_title(card.pr.title),
                authors=card.pr.authors,
                category=card.facts.category,
                verdict=card.body.verdict,
            )
        )
    for pr in failed:
        by_section["internal"].append(
            NoteEntry(pr.number, pr.sha, pr.title, pr.authors, "unknown", "unknown")
        )
    return ReleaseNotes(
        range_spec=discovery.range_spec,
        title=notes_title(discovery.range_spec, lang),
        highlights=highlights,
        sections=tuple(
            NoteSection(key, PHRASES[lang].sections[key], tuple(entries))
            for key, entries in by_section.items()
            if entries
        ),
        contributors=contributors(
            [card.pr for card in cards] + list(failed) + list(discovery.direct_commits)
        ),
        direct_commits=tuple(
            OtherEntry(pr.sha, pr.title, pr.authors[0] if pr.authors else "")
            for pr in discovery.direct_commits
        ),
        bot_commits_skipped=len(discovery.bot_commits),
        sync_merges=tuple(OtherEntry(c.sha, c.subject, c.author) for c in discovery.sync_merges),
        lang=lang,
    )


def highlight_cards(cards: Sequence[Card]) -> list[Card]:
    """The cards a highlights paragraph speaks of: the deep ones, else the skimmable features
    and fixes, at most five."""
    deep = [card for card in cards if card.body.verdict == "deep"]
    chosen = deep or [
        c for c in cards if c.body.verdict == "skim" and c.facts.category in ("feature", "fix")
    ]
    return chosen[:5]


def fallback_highlights(cards: Sequence[Card], lang: Language) -> str:
    """Highlights built from the cards' headlines, for when the model's paragraph is unusable."""
    words = PHRASES[lang]
    if not cards:
        return words.nothing_to_highlight
    items = words.highlight_separator.join(
        words.highlight_item.format(headline=c.body.headline, label=c.pr.label) for c in cards
    )
    return f"{words.highlights_intro}{items}{words.highlights_end}"
