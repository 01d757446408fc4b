"""A compact, deterministic account of what each file of a PR changes: the definitions touched.

Small base models cannot read a raw diff (they continue it instead of describing it), but they can
phrase a sentence from a list like `store/cache.go: adds evictOldest, SetLimit; changes
Put`. Bigger models get this digest and the diff itself.

Where a grammar reads both versions of a file (prsum.syntax), each changed line belongs to the
innermost definition that spans it, decorators, attributes and doc comments included, and a
definition is added, removed, renamed or changed by comparing the two versions. Elsewhere the
line rule guesses from the patch alone: a changed line belongs to the nearest definition above
it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import PurePosixPath

from prsum.filekinds import file_kind, is_generated
from prsum.syntax import EMPTY, MAX_SOURCE_BYTES, Outline, language_of, outline
from prsum.types import DefinitionChange, DefinitionStatus, FileDiff, ParsedChange

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
# A hunk's header: the first line numbers of its old and new sides.
HUNK_START = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_BLOBS = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)
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
# How alike (shared lines over all lines, own names masked) a definition only in the old
# version and one only in the new must be to be one definition renamed.
_RENAME_SIMILARITY = 0.8

# Reads a blob by its sha, at most so many bytes: None when the clone lacks it or it is larger.
BlobReader = Callable[[str, int], bytes | None]
_ABSENT = re.compile(r"^0+$")  # the blob name of a side that does not exist


@dataclass(frozen=True)
class FileDigest:
    path: str
    added: tuple[
        str, ...
    ]  # definitions only in the new version (the line rule: only on added lines)
    changed: tuple[str, ...]  # definitions in both whose lines the hunks touch
    removed: tuple[str, ...] = ()  # definitions only in the old version (parsed files only)
    renamed: tuple[tuple[str, str], ...] = ()  # (old name, new name) (parsed files only)
    unparsed: bool = False  # a source or test file changed that no grammar read: the line rule

    @property
    def names(self) -> tuple[str, ...]:
        """The definitions of the new version that the change touches."""
        return (*self.added, *(new for _, new in self.renamed), *self.changed)


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
    """The line rule: the definitions a file's patch adds and changes, most touched first.

    A changed line belongs to the nearest definition above it: the hunk header's (git's
    function context) or one that appears on the hunk's own context lines. What a grammar
    cannot read falls back to this.
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


def digest_file(diff: FileDiff) -> FileDigest:
    """The definitions a file's change adds, removes, renames and changes, most changed first:
    the parser's where a grammar read the file, else the line rule's."""
    if diff.parsed is None:
        unparsed = file_kind(diff.path) in ("source", "test") and "\n@@ " in diff.patch
        return replace(digest_patch(diff.path, diff.patch), unparsed=unparsed)
    changes = diff.parsed.definitions

    def named(status: DefinitionStatus, besides: tuple[str, ...] = ()) -> tuple[str, ...]:
        names = dict.fromkeys(
            change.name
            for change in changes
            if change.status == status and change.name not in besides
        )
        return tuple(names)[:_MAX_NAMES]

    # A name both added and changed in one file is two definitions of one name (test callbacks
    # such as `start`): "changes `start`" would say an existing one changed. Judged false.
    added = named("added")

    renamed = tuple(
        dict.fromkeys(
            (change.old_name, change.name) for change in changes if change.status == "renamed"
        )
    )
    return FileDigest(
        diff.path, added, named("changed", added), named("removed"), renamed[:_MAX_NAMES]
    )


def touched_definitions(diff: FileDiff) -> set[str]:
    """Every definition of the product's source a file's change adds, renames or changes, by
    its qualified name, where the parser read the file: a card says a later PR touched it
    again. (Simple names from tests and the line rule's hunk headers, a test callback's
    `start` or a function named above a hunk, made such sentences false.)"""
    if diff.parsed is None or file_kind(diff.path) != "source":
        return set()
    return {change.qualified for change in diff.parsed.definitions if change.status != "removed"}


def holder(name: str, definitions: set[str]) -> str | None:
    """The one of `definitions` that the qualified `name` is, or is inside (`Greeter.greet` is
    inside `Greeter`, which a PR that adds the class touched whole): the name as this PR
    writes it, the only one its card may cite."""
    if name in definitions:
        return name
    holders = [
        outer
        for outer in definitions
        for separator in (".", "::")
        if name.startswith(f"{outer}{separator}")
    ]
    return max(holders, key=len, default=None)  # the innermost


# --- the parser's account -------------------------------------------------------------------


def blob_names(patch: str) -> tuple[str, str] | None:
    """The blobs of a file's old and new version, named by its patch's `index` line (all
    zeros for a side that does not exist); None without one."""
    blobs = _BLOBS.search(patch)
    return (blobs.group(1), blobs.group(2)) if blobs else None


def hunks(patch: str) -> list[list[str]]:
    r"""A patch's hunks, each its lines (` `, `-` or `+` and the text), the header and `\ No
    newline` notes left out."""
    found: list[list[str]] = []
    for line in patch.split("\n"):  # not splitlines(): a U+2028 or a form feed inside code
        if line.startswith("@@"):
            found.append([])
        elif found and not line.startswith("\\"):
            found[-1].append(line.removesuffix("\r"))
    return found


def side_text(blob: str, read_blob: BlobReader, max_bytes: int) -> str | None:
    """The text of one side of a file's patch, read whole: "" for a side that does not exist
    (an all-zero blob name); None where the clone lacks it, it is larger than `max_bytes` or
    it is no UTF-8 text."""
    if _ABSENT.match(blob):
        return ""
    data = read_blob(blob, max_bytes)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def with_definitions(diffs: tuple[FileDiff, ...], read_blob: BlobReader) -> tuple[FileDiff, ...]:
    """The diffs, each with what its change does to the file's definitions where a grammar
    reads both versions of the file (blobs named by the patch's `index` line)."""
    return tuple(_with_parsed(diff, read_blob) for diff in diffs)


def _with_parsed(diff: FileDiff, read_blob: BlobReader) -> FileDiff:
    language = language_of(diff.path)
    if language is None or file_kind(diff.path) in ("lock", "vendored") or is_generated(diff.path):
        return diff
    header, first_hunk, _ = diff.patch.partition("\n@@ ")
    blobs = blob_names(header)
    if not first_hunk or blobs is None:
        return diff  # a rename, a mode change or a binary file: no lines to place
    sides: list[Outline] = []
    for sha in blobs:
        if not sha.strip("0"):
            sides.append(EMPTY)  # an added file has no old version, a deleted one no new
            continue
        source = read_blob(sha, MAX_SOURCE_BYTES)
        parsed = outline(source, language) if source is not None else None
        if parsed is None:
            return diff
        sides.append(parsed)
    old, new = sides
    return replace(diff, parsed=_attribute(diff.patch, old, new))


def changed_lines(patch: str) -> tuple[list[int], list[int]]:
    """The numbers of the lines a patch removes (in the old version) and adds (in the new),
    blank lines aside: they change no definition."""
    removed: list[int] = []
    added: list[int] = []
    old_line = new_line = 0
    in_hunk = False
    for line in patch.splitlines():
        start = HUNK_START.match(line)
        if start:
            old_line, new_line = int(start.group(1)), int(start.group(2))
            in_hunk = True
        elif not in_hunk or line.startswith("\\"):
            continue  # the file's header, or "\ No newline at end of file"
        elif line.startswith("-"):
            if line[1:].strip():
                removed.append(old_line)
            old_line += 1
        elif line.startswith("+"):
            if line[1:].strip():
                added.append(new_line)
            new_line += 1
        else:
            old_line += 1
            new_line += 1
    return removed, added


def _owned(found: Outline, lines: list[int]) -> tuple[Counter[int], int]:
    """How many of `lines` each definition holds as the innermost one spanning them, and how
    many no definition holds."""
    if not lines:
        return Counter(), 0
    size = max(lines) + 1
    owner = [-1] * size
    for index, definition in enumerate(found.definitions):  # parents first: children overwrite
        stop = min(definition.end, size - 1) + 1
        if definition.start < stop:
            owner[definition.start : stop] = [index] * (stop - definition.start)
    counts = Counter(owner[line] for line in lines)
    return counts, counts.pop(-1, 0)


def _subtree_lines(found: Outline, counts: Counter[int]) -> list[int]:
    """Each definition's changed lines with those of the definitions inside it."""
    totals = [counts[index] for index in range(len(found.definitions))]
    for index in reversed(range(len(found.definitions))):
        parent = found.definitions[index].parent
        if parent is not None:
            totals[parent] += totals[index]
    return totals


def _similarity(old: Counter[int], new: Counter[int]) -> float:
    total = sum(old.values()) + sum(new.values())
    return 2 * sum((old & new).values()) / total if total else 0.0


@dataclass
class _Pairing:
    """Which definitions of the two versions are one: by name among siblings, else (renamed)
    by body; the rest are added or removed."""

    old: Outline
    new: Outline
    pairs: dict[int, int]  # new index -> old index
    renamed: set[int]  # new indexes paired by body
    added: list[int]
    removed: list[int]

    @classmethod
    def of(cls, old: Outline, new: Outline) -> _Pairing:
        pairing = cls(old, new, {}, set(), [], [])
        old_children = _children(old)
        new_children = _children(new)
        pending: list[tuple[int | None, int | None, bool]] = [(None, None, False)]
        while pending:
            old_parent, new_parent, parent_renamed = pending.pop()
            pending += pairing._siblings(
                old_children.get(old_parent, []),
                new_children.get(new_parent, []),
                parent_renamed,
            )
        return pairing

    def _key(self, found: Outline, index: int, by_name: bool) -> tuple[str, str]:
        definition = found.definitions[index]
        return definition.kind, definition.name if by_name else definition.qualified

    def _siblings(
        self, olds: list[int], news: list[int], by_name: bool
    ) -> list[tuple[int | None, int | None, bool]]:
        """Pair one parent's children; the pairs whose children are to be paired next."""
        free = list(olds)
        unmatched: list[int] = []
        nested: list[tuple[int | None, int | None, bool]] = []
        for new_index in news:
            key = self._key(self.new, new_index, by_name)
            match = next((o for o in free if self._key(self.old, o, by_name) == key), None)
            if match is None:
                unmatched.append(new_index)
                continue
            free.remove(match)
            self.pairs[new_index] = match
            nested.append((match, new_index, by_name))
        for new_index in unmatched:
            match = self._renamed_from(new_index, free)
            if match is None:
                self.added.append(new_index)
                continue
            free.remove(match)
            self.pairs[new_index] = match
            self.renamed.add(new_index)
            nested.append((match, new_index, True))
        self.removed += free
        return nested

    def _renamed_from(self, new_index: int, free: list[int]) -> int | None:
        """The old definition of the same kind whose body this one's is, or nearly, both
        names masked."""
        after = self.new.definitions[new_index]
        best, best_score = None, _RENAME_SIMILARITY
        for old_index in free:
            before = self.old.definitions[old_index]
            spans = sorted((before.end - before.start, after.end - after.start))
            if before.kind != after.kind or 2 * (spans[0] + 1) < spans[1] + 1:
                continue  # another kind, or too different in length to be this alike
            names = (before.name, after.name)
            score = _similarity(self.old.body(old_index, names), self.new.body(new_index, names))
            if score >= best_score:
                best, best_score = old_index, score
        return best


def _children(found: Outline) -> dict[int | None, list[int]]:
    children: dict[int | None, list[int]] = {}
    for index, definition in enumerate(found.definitions):
        children.setdefault(definition.parent, []).append(index)
    return children


def _attribute(patch: str, old: Outline, new: Outline) -> ParsedChange:
    """What a patch does to the definitions of a file, given both versions' outlines."""
    removed_lines, added_lines = changed_lines(patch)
    old_counts, old_free = _owned(old, removed_lines)
    new_counts, new_free = _owned(new, added_lines)
    pairing = _Pairing.of(old, new)
    changes: list[DefinitionChange] = []
    for new_index, old_index in pairing.pairs.items():
        before, after = old.definitions[old_index], new.definitions[new_index]
        lines = old_counts[old_index] + new_counts[new_index]
        if new_index in pairing.renamed:
            changes.append(
                DefinitionChange(
                    "renamed",
                    after.name,
                    after.qualified,
                    after.kind,
                    lines,
                    before.public,
                    before.name,
                    before.qualified,
                )
            )
        elif lines:
            changes.append(
                DefinitionChange(
                    "changed", after.name, after.qualified, after.kind, lines, after.public
                )
            )
    unpaired: tuple[tuple[DefinitionStatus, Outline, list[int], Counter[int]], ...] = (
        ("added", new, pairing.added, new_counts),
        ("removed", old, pairing.removed, old_counts),
    )
    for status, found, indexes, counts in unpaired:
        totals = _subtree_lines(found, counts)
        for index in indexes:
            definition = found.definitions[index]
            changes.append(
                DefinitionChange(
                    status,
                    definition.name,
                    definition.qualified,
                    definition.kind,
                    totals[index],
                    definition.public,
                )
            )
    changes.sort(key=lambda change: -change.lines)
    return ParsedChange(tuple(changes), old_free + new_free)


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
