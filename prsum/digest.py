"""A compact, deterministic account of what each file of a PR changes: the definitions touched.

Small models cannot read a raw diff (they continue it instead of describing it), but they can
phrase a sentence from a list like `src/click/core.py: adds format_arguments; changes
format_help`. Bigger models get this digest and the diff itself.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

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
    }
)
_MAX_NAMES = 4


@dataclass(frozen=True)
class FileDigest:
    path: str
    added: tuple[str, ...]  # definitions that appear only on added lines
    changed: tuple[str, ...]  # definitions whose body or signature the hunks touch

    @property
    def main_symbol(self) -> str | None:
        """The one definition a reader should open first."""
        return (self.added or self.changed or (None,))[0]


def definition_name(line: str) -> str | None:
    for pattern in (_DEFINITION, _JS_ASSIGNED_FUNCTION, _JS_METHOD):
        match = pattern.match(line)
        if match and match.group(1).lower() not in _KEYWORDS:
            return match.group(1)
    return None


def digest_patch(path: str, patch: str) -> FileDigest:
    """The definitions a file's patch adds and changes, most touched first."""
    plus: list[str] = []
    minus: set[str] = set()
    touched: Counter[str] = Counter()
    for line in patch.splitlines():
        if line.startswith("+++") or line.startswith("---"):
            continue
        hunk = _HUNK.match(line)
        if hunk:
            name = definition_name(hunk.group(1))
            if name:
                touched[name] += 1
        elif line.startswith(("+", "-", " ")):
            name = definition_name(line[1:])
            if name is None:
                continue
            if line.startswith("+"):
                plus.append(name)
            elif line.startswith("-"):
                minus.add(name)
            if line[0] != " ":
                touched[name] += 1
    added = tuple(dict.fromkeys(name for name in plus if name not in minus))
    changed = tuple(name for name, _ in touched.most_common() if name not in added)
    return FileDigest(path, added[:_MAX_NAMES], changed[:_MAX_NAMES])


def touched_definitions(diff: FileDiff) -> set[str]:
    """Every definition a file's patch adds or changes."""
    digest = digest_patch(diff.path, diff.patch)
    return {*digest.added, *digest.changed}
