"""What a PR title says about its kind, whatever convention it follows.

Conventions understood: `[module] type: …` and `[BREAKING][module] …`, conventional commits
with scopes and `!` (`fix(router)!: …`, `build(deps): …`, `fix[build]: …`), gitmoji (unicode
and `:code:`), a bare version (`4.13.3`, `v2.0.0`), and plain leading verbs (Add, Fix, Bump,
Refactor, …). The title of a GitHub merge commit is the body's first line (history/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prsum.types import Category

_TYPE_WORDS: dict[str, Category] = {
    "feat": "feature",
    "feature": "feature",
    "features": "feature",
    "new": "feature",
    "add": "feature",
    "fix": "fix",
    "fixes": "fix",
    "bugfix": "fix",
    "hotfix": "fix",
    "bug": "fix",
    "security": "fix",
    "perf": "perf",
    "performance": "perf",
    "refactor": "refactor",
    "refactoring": "refactor",
    "cleanup": "refactor",
    "docs": "docs",
    "doc": "docs",
    "documentation": "docs",
    "test": "test",
    "tests": "test",
    "testing": "test",
    "ci": "ci",
    "build": "chore",
    "chore": "chore",
    "chores": "chore",
    "style": "chore",
    "lint": "chore",
    "misc": "chore",
    "deps": "deps",
    "dep": "deps",
    "dependencies": "deps",
    "release": "release",
    "revert": "revert",
}
# Scopes that override a chore-like type: `build(deps): …`, `chore(release): …`.
_SCOPE_CATEGORIES: dict[str, Category] = {
    "deps": "deps",
    "dep": "deps",
    "dependencies": "deps",
    "deps-dev": "deps",
    "release": "release",
    "ci": "ci",
}
_CONVENTIONAL = re.compile(
    r"^(?P<type>[A-Za-z]+)\s*(?:[(\[](?P<scope>[^)\]]*)[)\]])?\s*(?P<bang>!)?\s*:\s+"
)
_BRACKETS = re.compile(r"^(?:\[[^\]]*\]\s*)+")
# The prefix a headline drops (`without_convention`): any word, with a `(scope)` and `!`
# written tight (`Docs: …`, `RegExpRouter: …`); `fix (x): …` and `fix[x]: …` keep theirs.
_TIGHT_PREFIX = re.compile(r"^[A-Za-z]+(?:\([^)]*\))?!?:\s+")
_BREAKING_TAG = re.compile(r"\[\s*breaking\s*\]", re.IGNORECASE)
_BARE_VERSION = re.compile(r"^v?\d+\.\d+(?:\.\d+)*(?:[-.+][0-9A-Za-z.]+)?$")
_VERSION_TITLE = re.compile(
    r"\b(release|releasing|version|prepare for|bump version to)\s+v?\d+\.\d+", re.IGNORECASE
)
DEPS_TITLE = re.compile(
    r"^(\W+\s*)?(bump|upgrade|update|pin|unpin|downgrade)\b.*"
    r"(\b(to|from)\b.*\d|\bversions?\b|\bdependenc(y|ies)\b|\bdeps\b|\block ?file)",
    re.IGNORECASE,
)
_GITMOJI: tuple[tuple[str, Category], ...] = (
    ("⏪", "revert"),
    ("🔖", "release"),
    ("⬆", "deps"),
    ("⬇", "deps"),
    ("📌", "deps"),
    ("➕", "deps"),
    ("➖", "deps"),
    ("🐛", "fix"),
    ("🚑", "fix"),
    ("🩹", "fix"),
    ("🔒", "fix"),
    ("⚡", "perf"),
    ("♻", "refactor"),
    ("🎨", "refactor"),
    ("🔥", "refactor"),
    ("🚚", "refactor"),
    ("🏗", "refactor"),
    ("✨", "feature"),
    ("💥", "feature"),
    ("🎉", "feature"),
    ("📝", "docs"),
    ("✏", "docs"),
    ("💡", "docs"),
    ("✅", "test"),
    ("🧪", "test"),
    ("👷", "ci"),
    ("💚", "ci"),
    ("🔧", "chore"),
    ("🔨", "chore"),
    ("🚨", "chore"),
    ("🙈", "chore"),
    ("🍱", "chore"),
)
_GITMOJI_CODES: dict[str, Category] = {
    "rewind": "revert",
    "bookmark": "release",
    "arrow_up": "deps",
    "arrow_down": "deps",
    "pushpin": "deps",
    "heavy_plus_sign": "deps",
    "heavy_minus_sign": "deps",
    "bug": "fix",
    "ambulance": "fix",
    "adhesive_bandage": "fix",
    "lock": "fix",
    "zap": "perf",
    "recycle": "refactor",
    "art": "refactor",
    "fire": "refactor",
    "truck": "refactor",
    "building_construction": "refactor",
    "sparkles": "feature",
    "boom": "feature",
    "tada": "feature",
    "memo": "docs",
    "pencil2": "docs",
    "bulb": "docs",
    "white_check_mark": "test",
    "test_tube": "test",
    "construction_worker": "ci",
    "green_heart": "ci",
    "wrench": "chore",
    "hammer": "chore",
    "rotating_light": "chore",
}
_GITMOJI_CODE = re.compile(r"^:([a-z0-9_]+):")
# A title's leading verb, when the title follows no convention.
_LEADING_VERBS: dict[str, Category] = {
    **dict.fromkeys(
        ("add", "adds", "added", "adding", "introduce", "introduces", "implement", "implements"),
        "feature",
    ),
    **dict.fromkeys(("support", "supports", "allow", "allows", "enable", "enables"), "feature"),
    **dict.fromkeys(("fix", "fixes", "fixed", "fixing", "resolve", "resolves"), "fix"),
    **dict.fromkeys(("correct", "corrects", "prevent", "prevents", "avoid", "avoids"), "fix"),
    **dict.fromkeys(("repair", "repairs", "handle", "handles", "restore", "restores"), "fix"),
    **dict.fromkeys(("refactor", "refactors", "streamline", "streamlines"), "refactor"),
    **dict.fromkeys(("simplify", "simplifies", "cleanup", "clean", "extract"), "refactor"),
    **dict.fromkeys(
        ("rename", "renames", "move", "moves", "reorganize", "restructure"), "refactor"
    ),
    **dict.fromkeys(("optimize", "optimise", "optimizes", "speed", "accelerate"), "perf"),
    **dict.fromkeys(("document", "documents", "docs"), "docs"),
}
# Title words anywhere, for titles that start with none of the above, in this order.
_TITLE_WORDS: tuple[tuple[Category, re.Pattern[str]], ...] = (
    ("fix", re.compile(r"\b(fix(es|ed)?|bug|crash|regression)\b", re.IGNORECASE)),
    ("perf", re.compile(r"\b(perf|optimi[sz]e[ds]?|faster|speed ?up)\b", re.IGNORECASE)),
    (
        "refactor",
        re.compile(r"\b(refactor(ed|ing)?|streamline|clean ?up|simplif(y|ies))\b", re.IGNORECASE),
    ),
    ("feature", re.compile(r"\b(add|adds|added|new|support|introduce|allow|enable)\b", re.I)),
)


@dataclass(frozen=True)
class TitleSignal:
    """What a PR title says about its kind, by the convention it follows."""

    category: Category | None  # the type the title declares, if any
    convention: str  # "conventional", "bracketed", "gitmoji", "version", "verb", "words", ""
    breaking: str = ""  # the breaking marker the title carries
    description: str = ""  # the title without its type prefix


def words_category(text: str) -> Category | None:
    for category, pattern in _TITLE_WORDS:
        if pattern.search(text):
            return category
    return None


def _gitmoji_category(title: str) -> Category | None:
    for emoji, category in _GITMOJI:
        if title.startswith(emoji):
            return category
    code = _GITMOJI_CODE.match(title)
    return _GITMOJI_CODES.get(code.group(1)) if code else None


def read_title(title: str) -> TitleSignal:
    """The category a title declares, and its breaking marker, whatever convention it uses."""
    text = title.strip()
    breaking = "[BREAKING]" if _BREAKING_TAG.search(text) else ""
    if text.startswith("💥") or text.startswith(":boom:"):
        breaking = breaking or "💥"
    brackets = _BRACKETS.match(text)
    rest = text[brackets.end() :].strip() if brackets else text
    conventional = _CONVENTIONAL.match(rest)
    if conventional and conventional.group("type").lower() in _TYPE_WORDS:
        kind = _TYPE_WORDS[conventional.group("type").lower()]
        scopes = {
            scope.strip().lower()
            for scope in re.split(r"[,/ ]+", conventional.group("scope") or "")
        }
        scoped = next((_SCOPE_CATEGORIES[s] for s in scopes if s in _SCOPE_CATEGORIES), None)
        if scoped is not None and kind in ("chore", "deps", "release", "ci", "fix"):
            kind = scoped
        if conventional.group("bang"):
            breaking = breaking or f"{conventional.group(0).strip()}"
        description = rest[conventional.end() :].strip()
        return TitleSignal(kind, "conventional", breaking, description)
    if brackets:
        # `[module] Description` without a type: the modules name places, not kinds.
        return TitleSignal(_plain_category(rest), "bracketed", breaking, rest)
    emoji = _gitmoji_category(rest)
    if emoji is not None:
        return TitleSignal(emoji, "gitmoji", breaking, rest.lstrip(":").strip())
    if _BARE_VERSION.match(rest) or _VERSION_TITLE.search(rest):
        return TitleSignal("release", "version", breaking, rest)
    return TitleSignal(_plain_category(rest), "verb", breaking, rest)


def _plain_category(text: str) -> Category | None:
    if text.lower().startswith("revert"):
        return "revert"
    if _BARE_VERSION.match(text) or _VERSION_TITLE.search(text):
        return "release"
    if DEPS_TITLE.search(text):
        return "deps"
    first = re.match(r"[`'\"]?([A-Za-z]+)", text)
    if first and first.group(1).lower() in _LEADING_VERBS:
        return _LEADING_VERBS[first.group(1).lower()]
    return None


def without_convention(title: str) -> str:
    """The title's own words: without its `[module]` tags and its `type(scope)!: ` prefix."""
    text = title.lstrip()
    brackets = _BRACKETS.match(text)
    rest = text[brackets.end() :] if brackets else text
    prefix = _TIGHT_PREFIX.match(rest)
    return rest[prefix.end() :] if prefix else rest
