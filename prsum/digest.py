"""A compact, deterministic account of what each file of a PR changes: the definitions touched.

Small base models cannot read a raw diff (they continue it instead of describing it), but they can
phrase a sentence from a list like `store/cache.go: adds evictOldest, SetLimit; changes
Put`. Bigger models get this digest and the diff itself.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from prsum.types import FileDiff

_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(?:def|class|func|function|fn|struct|enum|trait|interface|type|impl)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"
)
_JS_ASSIGNED_FUNCTION = re.compile(
    r"^\s*(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:function|\()"
)
_JS_METHOD = re.compile(r"^\s{2,}(?:async\s+)?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{\s*$")
_C_FUNCTION = re.compile(r"^(?:[A-Za-z_][\w:<>,]*[\s*&]+)+\**([A-Za-z_]\w*)\s*\([^;]*$")
_SHELL_FUNCTION = re.compile(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{?\s*$")
_CONFIG_KEY = re.compile(r"^(?:\[([A-Za-z0-9_.\-\"]+)\]|([A-Za-z_][\w.-]*)\s*[:=])")
# Extra definition patterns by file ending: C-family functions, shell functions, the
# top-level keys and [sections] of configuration files.
_PATTERNS_BY_SUFFIX: dict[str, re.Pattern[str]] = {
    **dict.fromkeys((".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".m"), _C_FUNCTION),
    **dict.fromkeys((".sh", ".bash", ".zsh"), _SHELL_FUNCTION),
    **dict.fromkeys((".toml", ".yaml", ".yml", ".ini", ".cfg"), _CONFIG_KEY),
}
_HUNK = re.compile(r"^@@ [^@]+ @@\s*(.*)$")
# Control-flow words that the JS method pattern would otherwise take for method names.
_KEYWORDS = frozenset(
    {
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "function",
        "return",
        "else",
        "elif",
        "with",
        "foreach",
        "sizeof",
        "defined",
    }
)
_MAX_NAMES = 4
# A digest reads this many lines of a file's patch at most: enough to name what a huge
# (often generated) file changes, without scanning all of it.
_MAX_DIGEST_LINES = 20_000


@dataclass(frozen=True)
class FileDigest:
    path: str
    added: tuple[str, ...]  # definitions that appear only on added lines
    changed: tuple[str, ...]  # definitions whose body or signature the hunks touch

    @property
    def names(self) -> tuple[str, ...]:
        return (*self.added, *self.changed)


@lru_cache(maxsize=4096)
def _patterns_for(path: str) -> re.Pattern[str] | None:
    return _PATTERNS_BY_SUFFIX.get(PurePosixPath(path).suffix.lower())


def definition_name(line: str, path: str = "") -> str | None:
    """The name a line defines (function, class, type, config key), if it defines one."""
    special = _patterns_for(path)
    for pattern in (
        (_DEFINITION, _JS_ASSIGNED_FUNCTION, _JS_METHOD) if special is None else (special,)
    ):
        match = pattern.match(line)
        name = next((group for group in match.groups() if group), None) if match else None
        if name and name.lower() not in _KEYWORDS:
            return name.strip('"')
    return None


def digest_patch(path: str, patch: str) -> FileDigest:
    """The definitions a file's patch adds and changes, most touched first.

    A changed line belongs to the nearest definition above it: the hunk header's (git's
    function context) or one that appears on the hunk's own context lines.
    """
    plus: list[str] = []
    minus: set[str] = set()
    touched: Counter[str] = Counter()
    enclosing: str | None = None
    for line in patch.splitlines()[:_MAX_DIGEST_LINES]:
        if line.startswith(("+++", "---")):
            continue
        hunk = _HUNK.match(line)
        if hunk:
            enclosing = definition_name(hunk.group(1), path)
            continue
        if not line.startswith(("+", "-", " ")):
            continue
        name = definition_name(line[1:], path)
        if line.startswith(" "):
            enclosing = name or enclosing
            continue
        if name is not None:
            (plus.append if line.startswith("+") else minus.add)(name)
            touched[name] += 1
        elif enclosing is not None:
            touched[enclosing] += 1
    added = tuple(dict.fromkeys(name for name in plus if name not in minus))
    changed = tuple(name for name, _ in touched.most_common() if name not in added)
    return FileDigest(path, added[:_MAX_NAMES], changed[:_MAX_NAMES])


def touched_definitions(diff: FileDiff) -> set[str]:
    """Every definition a file's patch adds or changes."""
    digest = digest_patch(diff.path, diff.patch)
    return {*digest.added, *digest.changed}


# Title words that say what kind of change it is, not where: they point at no code.
_GENERIC_WORDS = frozenset(
    [
        "update",
        "updates",
        "add",
        "adds",
        "added",
        "fix",
        "fixes",
        "fixed",
        "make",
        "makes",
        "support",
        "improve",
        "improves",
        "change",
        "changes",
        "remove",
        "removes",
        "use",
        "uses",
        "when",
        "with",
        "from",
        "into",
        "that",
        "this",
        "version",
        "bump",
        "release",
        "more",
        "some",
        "also",
        "allow",
        "allows",
        "new",
        "refactor",
        "clean",
        "cleanup",
        "handle",
        "handles",
    ]
)


def title_words(title: str) -> frozenset[str]:
    """The words of a PR title that may name code: four letters or more, not generic verbs."""
    return frozenset(
        word
        for word in re.findall(r"[a-z][a-z0-9]{3,}", title.lower())
        if word not in _GENERIC_WORDS
    )


def _name_words(text: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word}


def relevance(words: frozenset[str], path: str, names: tuple[str, ...]) -> float:
    """How much a file is about what its PR's title says.

    The number of title words its path and changed definitions contain, plus the share of
    those definitions that contain one: a file whose changes are all about the title ranks
    above one where a matching name is one of many.
    """

    def matches(text: str) -> set[str]:
        return {word for word in words if any(part.startswith(word) for part in _name_words(text))}

    found = matches(path).union(*(matches(name) for name in names))
    share = sum(1 for name in names if matches(name)) / len(names) if names else 0.0
    return len(found) + share if found else 0.0
