"""What each file's patch changes: code and prose lines, which lines replace which, and which
replacements only bump a version or fix a typo."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from prsum.facts.lexing import Side, comment_style
from prsum.filekinds import FileKind, file_kind
from prsum.types import FileChange, FileDiff, ParsedChange, PullRequest

MAX_LINES_PER_FILE = 20_000
_VERSIONISH = re.compile(
    r"v?\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z]+)*|\bv\d+\b|\b[0-9a-f]{7,64}\b|\bdev\d+\b|\brc\d+\b"
)
_WORD = re.compile(r"[A-Za-z]+|[^A-Za-z\s]")


@dataclass
class FileStats:
    """What one file's patch changes, line by line."""

    path: str
    kind: FileKind
    status: str
    code_added: list[str] = field(default_factory=list)
    code_removed: list[str] = field(default_factory=list)
    prose_lines: int = 0  # comment and docstring lines changed
    blank_lines: int = 0  # blank (or whitespace-only) lines added or removed
    version_edits: int = 0  # (removed, added) pairs that differ only in version numbers
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (removed, added) replacements
    hunk_context: list[str] = field(default_factory=list)  # context lines around changes
    parsed: ParsedChange | None = None  # its definitions, where a grammar read the file

    @property
    def code_lines(self) -> int:
        return len(self.code_added) + len(self.code_removed)

    @property
    def whitespace_only(self) -> bool:
        """Code lines changed only in their whitespace (formatting)."""
        if not self.code_lines:
            return False
        return _squashed(self.code_added) == _squashed(self.code_removed)

    def version_pairs(self) -> int:
        return self.version_edits

    def typo_pairs(self) -> int:
        return sum(1 for old, new in self.pairs if _typo_change(old, new))


def _squashed(lines: Iterable[str]) -> Counter[str]:
    return Counter("".join(line.split()) for line in lines)


def version_change(old: str, new: str) -> bool:
    """A line edited only in its version numbers, tags or commit hashes."""
    return (
        old.strip() != new.strip()
        and _VERSIONISH.sub("0", old).strip() == _VERSIONISH.sub("0", new).strip()
    )


def _edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


def _typo_change(old: str, new: str) -> bool:
    """A line edited in one or two words, each by a letter or two: a spelling fix."""
    old_words, new_words = _WORD.findall(old), _WORD.findall(new)
    if len(old_words) != len(new_words) or old_words == new_words:
        return False
    changed = [(a, b) for a, b in zip(old_words, new_words, strict=True) if a != b]
    return len(changed) <= 2 and all(
        a.isalpha() and b.isalpha() and len(a) >= 3 and _edit_distance(a, b) <= 2
        for a, b in changed
    )


def file_stats(diff: FileDiff, change: FileChange | None) -> FileStats:
    """Read one file's patch: its code and prose lines, and which lines replace which."""
    kind = file_kind(diff.path)
    stats = FileStats(diff.path, kind, change.status if change else "M", parsed=diff.parsed)
    style = comment_style(diff.path)
    old, new = Side(), Side()
    removed: list[str] = []
    added: list[str] = []

    def flush() -> None:
        stats.pairs.extend(zip(removed, added, strict=False))
        # Version edits pair by their text with versions masked, wherever they sit in the block.
        unmatched = Counter(_VERSIONISH.sub("0", line).strip() for line in added)
        for line in removed:
            masked = _VERSIONISH.sub("0", line).strip()
            if unmatched[masked] > 0 and masked != line.strip():
                unmatched[masked] -= 1
                stats.version_edits += 1
        removed.clear()
        added.clear()

    in_hunk = False
    for line in diff.patch.splitlines()[:MAX_LINES_PER_FILE]:
        if line.startswith("@@"):
            flush()
            old, new, in_hunk = Side(), Side(), True
            continue
        if not in_hunk or not line or line[0] not in "+- ":
            continue
        text = line[1:]
        if line[0] == " ":
            flush()
            old.role(text, style)
            new.role(text, style)
            if len(stats.hunk_context) < 200:
                stats.hunk_context.append(text)
            continue
        side = old if line[0] == "-" else new
        role = side.role(text, style)
        if role == "comment":
            stats.prose_lines += 1
        elif role == "blank":
            stats.blank_lines += 1
        elif role == "code":
            (stats.code_removed if line[0] == "-" else stats.code_added).append(text)
            (removed if line[0] == "-" else added).append(text)
    flush()
    return stats


def all_stats(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> list[FileStats]:
    changes = {change.path: change for change in pr.files}
    return [file_stats(diff, changes.get(diff.path)) for diff in diffs]
