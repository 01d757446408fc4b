"""Facts about a PR that need no model: category, breaking signals, what its diff does.

The title is the author's word and the diff is what happened; both are read, and where they
disagree about whether code changed at all (a `feat` that only adds docs, a `fix` that only
strips trailing whitespace), the diff wins.

Title conventions understood: `[module] type: …` and `[BREAKING][module] …`, conventional
commits with scopes and `!` (`fix(router)!: …`, `build(deps): …`, `fix[build]: …`), gitmoji
(unicode and `:code:`), a bare version (`4.13.3`, `v2.0.0`), and plain leading verbs (Add, Fix,
Bump, Refactor, …). The title of a GitHub merge commit is the body's first line (history/).

Diff-derived rules, for titles that name nothing or mislead:

| the diff                                                        | category |
| --------------------------------------------------------------- | -------- |
| docs only, or docs plus source changes only in comments/docstrings | docs  |
| tests only                                                      | test     |
| CI files (and no program source)                                | ci       |
| only locks, or manifests/locks whose changed lines are versions | deps     |
| the project's own version (+ changelog, locks)                  | release  |
| only whitespace in code                                         | chore    |
| a typo fixed in a code string (user-visible text)               | fix      |
| new public definitions (by the language's visibility rule)       | feature  |
| a changelog entry under Added/Features or Fixed/Bugfixes        | feature / fix |
| only removed code                                               | refactor |
| existing code changed, tests added, nothing new defined         | fix      |
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from prsum.digest import definition_name
from prsum.filekinds import FileKind, file_kind, is_auxiliary, is_generated, is_manifest
from prsum.types import Breaking, Category, Facts, FileChange, FileDiff, ParsedChange, PullRequest

_MAX_LINES_PER_FILE = 20_000
_TODO = re.compile(r"\b(TODO|FIXME|XXX|HACK)\b")
_NEW_OPTION = re.compile(r"""["'](--[a-z][a-z0-9-]+)["']""")
_NEW_ENV_VAR = re.compile(
    r"""(?:environ(?:\.get)?|getenv|Getenv|env::var)\s*[(\[]\s*["']([A-Z][A-Z0-9_]{2,})["']"""
)
_NEW_CONFIG_KEY = re.compile(r"^([a-z][a-z0-9_-]*)\s*=")
# A Rust clap field declared `#[arg(long)]` (or `#[clap(long)]`) right above `pub name: T`.
_CLAP_LONG = re.compile(r"#\[(?:arg|clap)\([^\]]*\blong\b(?!\s*=)")
_RUST_FIELD = re.compile(r"^\s*pub\s+([a-z][a-z0-9_]*)\s*:")

# --- titles ---------------------------------------------------------------------------------

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
_BREAKING_TAG = re.compile(r"\[\s*breaking\s*\]", re.IGNORECASE)
_BARE_VERSION = re.compile(r"^v?\d+\.\d+(?:\.\d+)*(?:[-.+][0-9A-Za-z.]+)?$")
_VERSION_TITLE = re.compile(
    r"\b(release|releasing|version|prepare for|bump version to)\s+v?\d+\.\d+", re.IGNORECASE
)
_DEPS_TITLE = re.compile(
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


def _words_category(text: str) -> Category | None:
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
    if _DEPS_TITLE.search(text):
        return "deps"
    first = re.match(r"[`'\"]?([A-Za-z]+)", text)
    if first and first.group(1).lower() in _LEADING_VERBS:
        return _LEADING_VERBS[first.group(1).lower()]
    return None


# --- the diff, line by line -----------------------------------------------------------------

_HASH_COMMENT = {".py", ".pyi", ".sh", ".bash", ".zsh", ".rb", ".pl", ".r", ".jl", ".nim", ".ex"}
_SLASH_COMMENT = {
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".hh",
    ".m",
    ".mm",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".ts",
    ".tsx",
    ".mts",
    ".cts",
    ".go",
    ".rs",
    ".java",
    ".kt",
    ".kts",
    ".swift",
    ".cs",
    ".scala",
    ".php",
    ".dart",
    ".zig",
    ".proto",
    ".css",
    ".scss",
}
_DASH_COMMENT = {".lua", ".sql", ".hs", ".elm"}
_TRIPLE_QUOTE = re.compile(r"\"\"\"|'''")
_DOCSTRING_START = re.compile(r"^[rRbBuUfF]{0,2}(\"\"\"|''')")
_VERSIONISH = re.compile(
    r"v?\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z]+)*|\bv\d+\b|\b[0-9a-f]{7,64}\b|\bdev\d+\b|\brc\d+\b"
)
_WORD = re.compile(r"[A-Za-z]+|[^A-Za-z\s]")
# Code that makes a reader slow down, by what it asks of them.
_TRICKY: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "concurrency",
        re.compile(
            r"\b(async|await|threads?|threading|Thread|[Ll]ock|[Mm]utex|RwLock|[Ss]emaphore"
            r"|[Aa]tomic\w*|goroutines?|chan|WaitGroup|sync\.\w+|Promise|Condvar|spawn"
            r"|[Ee]xecutor|[Bb]arrier|all_reduce|all_gather|broadcast|dist\.\w+|ray\.\w+)\b"
        ),
    ),
    (
        "ownership",
        re.compile(
            r"\b(subarray|ArrayBuffer|[Bb]uffers?|Arc|Rc|RefCell|unsafe|weakref|memoryview"
            r"|pin_memory|offload\w*|\w+_to_(?:cpu|gpu|device)|borrow\w*|ptr)\b|&mut\b|'static\b"
        ),
    ),
    (
        "lifecycle",
        re.compile(
            r"\b(defer|Drop|finally|__del__|__enter__|__exit__|close|dispose|shutdown|teardown"
            r"|cancel\w*|Cancel\w*|context\.Context|ctx\.Done|timeouts?|[Tt]imeout|atexit)\b"
        ),
    ),
)
_BRANCH = re.compile(
    r"^\s*(?:\}\s*)?(?:if|elif|else|for|while|match|switch|case|catch|except|try|loop|select)\b"
    r"|\?\s*[^:]+:|&&|\|\|"
)


def _comment_style(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _HASH_COMMENT or file_kind(path) in ("config", "ci"):
        return "#"
    if suffix in _SLASH_COMMENT:
        return "//"
    if suffix in _DASH_COMMENT:
        return "--"
    return ""


@dataclass
class _Side:
    """Block-comment and docstring state of one side (old or new) of a hunk."""

    docstring: str = ""  # the open docstring's quote, while inside one
    string: str = ""  # the open triple-quoted string's quote (code, not prose)
    block: bool = False  # inside /* … */

    def role(self, text: str, style: str) -> str:
        """`blank`, `comment` (prose: comments, docstrings) or `code`; updates the state."""
        stripped = text.strip()
        if not stripped:
            return "blank"
        if style == "#" and self.docstring:
            if self.docstring in stripped:
                self.docstring = ""
            return "comment"
        if style == "#" and self.string:
            if self.string in stripped:
                self.string = ""
            return "code"
        if style == "//" and self.block:
            if "*/" in stripped:
                self.block = False
            return "comment"
        if style and stripped.startswith(style):
            return "comment"
        if style == "#":
            start = _DOCSTRING_START.match(stripped)
            quotes = _TRIPLE_QUOTE.findall(stripped)
            if start:
                if len(quotes) % 2 == 1:
                    self.docstring = start.group(1)
                return "comment"
            if len(quotes) % 2 == 1:
                self.string = quotes[-1]
            return "code"
        if style == "//" and stripped.startswith("/*"):
            self.block = "*/" not in stripped[2:]
            return "comment"
        if style == "//" and stripped.startswith("*") and not stripped.startswith("*/"):
            return "comment"
        return "code"


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


def _version_change(old: str, new: str) -> bool:
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
    style = _comment_style(diff.path)
    old, new = _Side(), _Side()
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
    for line in diff.patch.splitlines()[:_MAX_LINES_PER_FILE]:
        if line.startswith("@@"):
            flush()
            old, new, in_hunk = _Side(), _Side(), True
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


# --- public definitions ---------------------------------------------------------------------

_PUBLIC_RUST = re.compile(
    r"^\s*pub\s+(?:async\s+)?(?:unsafe\s+)?(?:fn|struct|enum|trait|type|const|static|mod)\s+(\w+)"
)
_PUBLIC_JS = re.compile(
    r"^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(?:function\*?|class|const|let|var|interface|type|enum)\s+([A-Za-z_$][\w$]*)"
)
_PUBLIC_JAVA = re.compile(r"^\s*public\s+(?:[\w<>\[\],\s]+\s+)?(\w+)\s*[({]")
_PY_DEF = re.compile(r"^(\s*)(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")


def _api_path(path: str) -> bool:
    """Whether a file can define public API at all: not a private Python module (a part of
    its path starts with `_`), not a Go `internal` package."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix == ".go":
        return "/internal/" not in f"/{path}"
    if suffix in (".py", ".pyi"):
        parts = PurePosixPath(path).parts
        return not any(part.startswith("_") and not part.startswith("__") for part in parts)
    return True


def public_definition(text: str, path: str) -> str | None:
    """The public API name a line defines, by the language's rule of visibility, if any: the
    line rule, for files no grammar read."""
    suffix = PurePosixPath(path).suffix.lower()
    if not _api_path(path):
        return None
    if suffix == ".rs":
        match = _PUBLIC_RUST.match(text)
        return match.group(1) if match else None
    if suffix in (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"):
        match = _PUBLIC_JS.match(text)
        return match.group(1) if match else None
    if suffix == ".go":
        name = definition_name(text, path)
        top_level = text.startswith(("func", "type", "var", "const"))
        if name and top_level and name[0].isupper():
            return name
        return None
    if suffix in (".java", ".kt", ".cs", ".scala"):
        match = _PUBLIC_JAVA.match(text)
        return match.group(1) if match else None
    if suffix in (".py", ".pyi"):
        match = _PY_DEF.match(text)
        if not match:
            return None
        indent, name = match.groups()
        if name.startswith("_") or len(indent) > 4:  # private, or nested in a function
            return None
        return name
    return None


def _public_definitions(stats: Iterable[FileStats], added: bool) -> list[tuple[str, str]]:
    """(path, name) of the public definitions the PR adds, or of those whose name it removes
    (removed or renamed): the parser's where it read the file, else the line rule's."""
    found = []
    for item in stats:
        if item.kind != "source" or is_auxiliary(item.path) or is_generated(item.path):
            continue
        if item.parsed is not None:
            if _api_path(item.path):
                found += [
                    (item.path, change.old_name or change.name)
                    for change in item.parsed.definitions
                    if change.public
                    and change.status in (("added",) if added else ("removed", "renamed"))
                ]
            continue
        for text in item.code_added if added else item.code_removed:
            name = public_definition(text, item.path)
            if name:
                found.append((item.path, name))
    return found


def _defined_names(stats: Iterable[FileStats]) -> set[str]:
    """The names the PR defines anew: added or renamed to (parsed), or on added lines."""
    names: set[str] = set()
    for item in stats:
        if item.parsed is not None:
            names.update(
                change.name
                for change in item.parsed.definitions
                if change.status in ("added", "renamed")
            )
            continue
        names.update(name for text in item.code_added if (name := definition_name(text, item.path)))
    return names


# --- breaking signals -----------------------------------------------------------------------

_BREAKING_FOOTER = re.compile(r"^(BREAKING[ -]CHANGES?)\s*:", re.MULTILINE)
_BANG_LINE = re.compile(r"^\s*(?:[-*]\s+)?([a-z]+(?:\([^)]*\))?!):", re.MULTILINE)
_PY_SIGNATURE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z]\w*)\s*\((.*)")
_DEFAULT = re.compile(r"(\w+)\s*(?::[^=,]+)?=\s*([^,)]+)")
# Minimum versions a manifest declares: (pattern, what it names).
_MINIMUMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s*rust-version\s*=\s*[\"']([\d.]+)"), "minimum Rust version"),
    (re.compile(r"^\s*requires-python\s*=\s*[\"']\s*>=?\s*([\d.]+)"), "minimum Python version"),
    (re.compile(r"python_requires\s*=\s*[\"']\s*>=?\s*([\d.]+)"), "minimum Python version"),
    (re.compile(r"^go\s+([\d.]+)\s*$"), "minimum Go version"),
    (re.compile(r"^\s*\"node\"\s*:\s*\"\s*>=?\s*([\d.]+)"), "minimum Node version"),
    (re.compile(r"^\s*minSdk(?:Version)?\s*[= ]\s*(\d+)"), "minimum SDK"),
    (re.compile(r"^\s*cmake_minimum_required\s*\(\s*VERSION\s+([\d.]+)", re.I), "minimum CMake"),
)
_PLATFORM_TARGET = re.compile(
    r"\b((?:x86_64|i686|i586|aarch64|arm|armv7|powerpc64le|s390x|riscv64gc)(?:-[a-z0-9_]+){2,3})"
    r"|Programming Language :: Python :: (\d\.\d+)\b|Operating System :: ([\w /]+)"
)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _raised_minimum(stats: Sequence[FileStats]) -> str | None:
    for item in stats:
        if item.kind not in ("config", "source") or not (
            is_manifest(item.path) or item.path.endswith(("CMakeLists.txt", ".gradle", ".kts"))
        ):
            continue
        for pattern, what in _MINIMUMS:
            old = [m.group(1) for line in item.code_removed if (m := pattern.search(line))]
            new = [m.group(1) for line in item.code_added if (m := pattern.search(line))]
            if old and new and _version_tuple(new[0]) > _version_tuple(old[0]):
                return f"{what} raised: {old[0]} -> {new[0]} in {item.path}"
    return None


def _dropped_platform(stats: Sequence[FileStats]) -> str | None:
    """A build target (a target triple in CI or a manifest) or a Python/OS classifier that the
    PR removes and does not add back."""
    removed: set[str] = set()
    added: set[str] = set()
    for item in stats:
        name = PurePosixPath(item.path).name
        if item.kind != "ci" and not (is_manifest(item.path) and "ocker" not in name):
            continue
        for lines, found in ((item.code_removed, removed), (item.code_added, added)):
            for line in lines:
                for match in _PLATFORM_TARGET.finditer(line):
                    if match.start() > 0 and line[match.start() - 1] in "/._-":
                        continue  # part of a path or a longer name, not a target
                    found.add(next(group for group in match.groups() if group).strip())
    gone = sorted(removed - added)
    return f"platform dropped: {', '.join(gone[:3])}" if gone else None


def _defaults(lines: Iterable[str]) -> dict[tuple[str, str], str]:
    """Keyword defaults of public Python functions on these lines, by (function, parameter)."""
    found = {}
    for text in lines:
        signature = _PY_SIGNATURE.match(text)
        if signature and not signature.group(1).startswith("_"):
            for parameter, value in _DEFAULT.findall(signature.group(2)):
                found[(signature.group(1), parameter)] = value.strip()
    return found


def breaking_signal(
    pr: PullRequest, diffs: tuple[FileDiff, ...], stats: Sequence[FileStats] | None = None
) -> Breaking:
    """Why the PR may break its users: a marker (in the title, or a `BREAKING CHANGE:` footer),
    a public definition removed (and defined nowhere in the PR's additions), a changed default,
    a raised minimum version of the language or toolchain, a dropped platform."""
    return _breaking(pr, diffs, stats)[0]


def _breaking(
    pr: PullRequest, diffs: tuple[FileDiff, ...], stats: Sequence[FileStats] | None
) -> tuple[Breaking, str]:
    """The breaking signal and its scope: `api` (code that calls it must change) or
    `environment` (where it runs must change)."""
    if stats is None:
        stats = _all_stats(pr, diffs)
    title = read_title(pr.title)
    if title.breaking:
        return Breaking(True, f"marked {title.breaking!r} in the title"), "api"
    body = pr.message.split("\n", 1)[1] if "\n" in pr.message else ""
    footer = _BREAKING_FOOTER.search(body) or _BANG_LINE.search(body)
    if footer:
        return Breaking(True, f"marked {footer.group(1)!r} in the message"), "api"
    removed = _public_definitions(stats, added=False)
    added_names = _defined_names(stats) | {name for _, name in _public_definitions(stats, True)}
    gone = sorted({name for _, name in removed} - added_names)
    # A PR that adds or renames files may have moved the definition there, out of sight of
    # the diff (git reports a copy, not the lines): only a PR that adds no file can tell.
    if gone and not any(change.status in ("A", "R") for change in pr.files):
        return Breaking(True, f"public definition removed: {', '.join(gone[:3])}"), "api"
    source = [item for item in stats if item.kind == "source" and not is_auxiliary(item.path)]
    old_defaults = _defaults(line for item in source for line in item.code_removed)
    for key, value in _defaults(line for item in source for line in item.code_added).items():
        if key in old_defaults and old_defaults[key] != value:
            why = f"default changed: {key[0]}({key[1]}={old_defaults[key]} -> {value})"
            return Breaking(True, why), "api"
    raised = _raised_minimum(stats)
    if raised:
        return Breaking(True, raised), "environment"
    dropped = _dropped_platform(stats)
    if dropped:
        return Breaking(True, dropped), "environment"
    return Breaking(False), ""


# --- what the diff does ---------------------------------------------------------------------

_CHANGELOG = re.compile(r"(^|/)(CHANGE(S|LOG)|HISTORY|NEWS|RELEASE[-_ ]?NOTES)[^/]*$", re.I)
_CHANGELOG_SECTION = re.compile(r"^\s*(#{1,6}|\*\*)\s*(?P<title>[^#*]+?)\s*(\*\*)?\s*$")
_FEATURE_SECTIONS = re.compile(r"\b(added|features?|new|enhancements?)\b", re.IGNORECASE)
_FIX_SECTIONS = re.compile(r"\b(fixed|fix(es)?|bug ?fix(es)?|bugs)\b", re.IGNORECASE)
_OWN_VERSION = re.compile(
    r"^(?:version\s*=\s*[\"'][^\"']+[\"']|\s{0,2}\"version\"\s*:\s*\"[^\"]+\""
    r"|\s*__version__\s*=|\s*(?:const\s+)?[Vv]ersion\s*(?::?=|=)\s*\"v?\d)"
)
_VERSION_FILE = re.compile(r"(^|/)(VERSION|version\.txt|_?version\.py|version\.go|version\.rs)$")


@dataclass(frozen=True)
class DiffProfile:
    """What a PR's diff does, measured: the facts the category and the rubric build on."""

    kinds: tuple[FileKind, ...]
    logic_lines: int  # code lines of the product's source: not comments, formatting, versions
    logic_files: int
    new_module_lines: int  # of logic_lines, those in files the PR adds
    logic_added: int  # product code lines added (0 with logic_lines: the PR only removes code)
    new_modules: tuple[str, ...]
    new_definitions: tuple[str, ...]
    removed_definitions: tuple[str, ...]
    tricky: tuple[str, ...]
    branches: int
    test_lines: int  # test code lines changed
    test_lines_added: int
    ci_lines: int  # CI lines added, not counting version bumps
    config_lines: int  # build/tool configuration lines changed, not counting version bumps
    mechanical: str
    changelog: Category | None  # the section a changelog entry was added under
    only_versions: bool  # every changed line of manifests/locks/CI is a version edit
    own_version: bool  # the project's own version changed, and no other code
    prose_only_source: bool  # source/test files changed only in comments or docstrings


def _all_stats(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> list[FileStats]:
    changes = {change.path: change for change in pr.files}
    return [file_stats(diff, changes.get(diff.path)) for diff in diffs]


def _changelog_section(stats: Sequence[FileStats], diffs: tuple[FileDiff, ...]) -> Category | None:
    """The kind of the section (Added / Fixed …) a changelog entry was added under."""
    for diff in diffs:
        if not _CHANGELOG.search(diff.path):
            continue
        section: str | None = None
        for line in diff.patch.splitlines():
            if line.startswith("@@"):
                section = None
                continue
            heading = _CHANGELOG_SECTION.match(line[1:]) if line[:1] in (" ", "-", "+") else None
            if heading:
                section = heading.group("title")
                continue
            if line.startswith("+") and not line.startswith("+++") and line[1:].strip():
                if section and _FIX_SECTIONS.search(section):
                    return "fix"
                if section and _FEATURE_SECTIONS.search(section):
                    return "feature"
    return None


def _mechanical(pr: PullRequest, stats: Sequence[FileStats]) -> str:
    """Why no line of the PR needs reading, if none does."""
    program = [item for item in stats if item.kind in ("source", "test")]
    code_files = [item for item in program if item.code_lines]
    if code_files and all(item.whitespace_only for item in code_files):
        return "whitespace"
    if code_files and all(
        item.pairs
        and item.typo_pairs() == len(item.pairs)
        and len(item.code_added) == len(item.code_removed) == len(item.pairs)
        for item in code_files
    ):
        return "typo"
    if program and not code_files:
        return "comments" if any(item.prose_lines for item in program) else "whitespace"
    if pr.files and all(
        change.status == "R" and change.added == change.deleted == 0 for change in pr.files
    ):
        return "rename"
    if pr.files and all(
        is_generated(change.path) or file_kind(change.path) in ("lock", "vendored")
        for change in pr.files
    ):
        return "generated"
    return ""


def _own_version_only(stats: Sequence[FileStats]) -> bool:
    """The project's own version changed (a manifest's `version`, `__version__`, a VERSION
    file), and no other code line of a manifest, config or source file."""
    found = False
    for item in stats:
        if item.kind in ("docs", "lock") or not item.code_lines:
            continue
        if item.kind not in ("config", "source") and not is_manifest(item.path):
            return False
        own = sum(
            1 for old, new in item.pairs if _OWN_VERSION.match(old) and _version_change(old, new)
        )
        if own * 2 != item.code_lines and not _VERSION_FILE.search(item.path):
            return False
        found = found or own > 0 or bool(_VERSION_FILE.search(item.path))
    return found


def profile(
    pr: PullRequest, diffs: tuple[FileDiff, ...], stats: Sequence[FileStats]
) -> DiffProfile:
    kinds = tuple(file_kind(change.path) for change in pr.files)
    core = [
        item
        for item in stats
        if item.kind == "source" and not is_auxiliary(item.path) and not is_generated(item.path)
    ]
    logic: dict[str, int] = {}
    tricky: Counter[str] = Counter()
    branches = new_module_lines = 0
    for item in core:
        if item.whitespace_only:
            continue
        lines = item.code_lines - 2 * (item.version_pairs() + item.typo_pairs())
        if lines > 0:
            logic[item.path] = lines
            new_module_lines += lines if item.status == "A" else 0
        for text in (*item.code_added, *item.code_removed):
            tricky.update(name for name, pattern in _TRICKY if pattern.search(text))
        branches += sum(1 for text in item.code_added if _BRANCH.search(text))
    added_defs = _public_definitions(stats, added=True)
    removed_defs = _public_definitions(stats, added=False)
    removed_names = {name for _, name in removed_defs}
    new_defs = tuple(dict.fromkeys(name for _, name in added_defs if name not in removed_names))
    added_names = {name for _, name in added_defs}
    new_modules = tuple(
        item.path for item in core if item.status == "A" and len(item.code_added) >= 20
    )
    program = [item for item in stats if item.kind in ("source", "test")]
    version_files = [
        item for item in stats if item.kind in ("config", "ci", "lock") or is_manifest(item.path)
    ]
    only_versions = bool(version_files) and all(
        item.kind == "lock" or (item.code_lines and item.version_pairs() * 2 == item.code_lines)
        for item in version_files
    )
    return DiffProfile(
        kinds=kinds,
        logic_lines=sum(logic.values()),
        logic_files=len(logic),
        new_module_lines=new_module_lines,
        logic_added=sum(len(item.code_added) for item in core if item.path in logic),
        new_modules=new_modules,
        new_definitions=new_defs,
        removed_definitions=tuple(sorted(removed_names - added_names)),
        tricky=tuple(name for name, _ in tricky.most_common()),
        branches=branches,
        test_lines=sum(item.code_lines for item in stats if item.kind == "test"),
        test_lines_added=sum(len(item.code_added) for item in stats if item.kind == "test"),
        ci_lines=sum(
            max(0, len(item.code_added) - item.version_pairs())
            for item in stats
            if item.kind == "ci"
        ),
        config_lines=sum(
            max(0, item.code_lines - 2 * item.version_pairs())
            for item in stats
            if item.kind == "config"
        ),
        mechanical=_mechanical(pr, stats),
        changelog=_changelog_section(stats, diffs),
        only_versions=only_versions,
        own_version=_own_version_only(stats),
        prose_only_source=bool(program)
        and not any(item.code_lines for item in program)
        and any(item.prose_lines for item in program),
    )


def _diff_category(pr: PullRequest, facts: DiffProfile) -> Category | None:
    """What the diff alone says the PR is, when it does not change the product's logic."""
    kinds = set(facts.kinds)
    if not kinds:
        return None
    if kinds <= {"docs"} or (kinds <= {"docs", "source", "test"} and facts.prose_only_source):
        return "docs"
    if facts.mechanical == "whitespace":
        return "chore"
    if kinds <= {"test"}:
        return "test"
    if kinds <= {"lock"}:
        return "deps"
    if (
        kinds <= {"source", "docs", "config", "lock"}
        and facts.own_version
        and not facts.logic_lines
    ):
        return "release"
    environment = kinds <= {"config", "lock", "docs", "ci"}
    if (
        environment
        and facts.only_versions
        and any(is_manifest(change.path) or file_kind(change.path) == "lock" for change in pr.files)
    ):
        return "deps"
    if "ci" in kinds and "source" not in kinds and facts.ci_lines + 2 >= facts.test_lines:
        return "ci"  # CI pipelines (with their config, docs, or a test touched along the way)
    return None


def _weak_diff_category(profile: DiffProfile) -> Category | None:
    """What the diff suggests when the title names nothing: new API, a changelog section,
    removals only, or a changed behaviour pinned by new tests."""
    if profile.mechanical == "typo":
        return "fix"  # a spelling fix in code strings: the program's output changes
    if profile.changelog is not None:
        return profile.changelog
    if profile.new_definitions or profile.new_modules:
        return "feature"
    if profile.logic_lines and not profile.logic_added:
        return "refactor"  # only removed code
    if profile.logic_lines and profile.test_lines_added:
        return "fix"
    return None


def categorize(pr: PullRequest, diffs: tuple[FileDiff, ...] = ()) -> Category:
    """The PR's category from its title and from what its diff does."""
    stats = _all_stats(pr, diffs)
    return _categorize(pr, profile(pr, diffs, stats))


def _categorize(pr: PullRequest, measured: DiffProfile) -> Category:
    """Revert and explicit bumps and releases first; then the diff where it shows that no
    product logic changed (it overrides a title claiming a feature or a fix); then the
    title's declared type, its words, and last what the diff suggests."""
    title = read_title(pr.title)
    if pr.kind == "revert" or title.category == "revert":
        return "revert"
    declared = title.category
    bot = any(author.endswith("[bot]") for author in pr.authors[:1])
    if declared is None and bot and "bump" in pr.title.lower():
        declared = "deps"
    if declared in ("release", "deps"):
        return declared
    environment = set(measured.kinds) <= {"config", "lock", "docs", "ci"}
    if environment and declared not in ("docs", "test") and _DEPS_TITLE.search(title.description):
        return "deps"  # "fix: upgrade torch versions in the image", and no program changed
    derived = _diff_category(pr, measured)
    if derived is not None:
        if declared in ("chore", "docs", "test", "ci") and derived in ("docs", "test"):
            return declared  # "chore: fix a typo in the tests" stays a chore
        return derived
    if declared is not None:
        return declared
    return _words_category(title.description) or _weak_diff_category(measured) or "chore"


# --- options, TODOs and the facts ----------------------------------------------------------


def _lines(diffs: Iterable[FileDiff], sign: str) -> Iterator[tuple[str, str]]:
    """(path, text) of the lines a diff adds ("+") or removes ("-"): the first lines of each
    file only, since facts about a huge (usually generated) file show in its first lines."""
    for diff in diffs:
        for line in diff.patch.splitlines()[:_MAX_LINES_PER_FILE]:
            if line.startswith(sign) and not line.startswith(sign * 3):
                yield diff.path, line[1:]


def _new_options(added: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    found: list[str] = []
    clap_pending = False
    for path, text in added:
        kind = file_kind(path)
        if kind == "source":
            found.extend(match.group(1) for match in _NEW_OPTION.finditer(text))
            found.extend(match.group(1) for match in _NEW_ENV_VAR.finditer(text))
            if _CLAP_LONG.search(text):
                clap_pending = True
                continue
            field_match = _RUST_FIELD.match(text) if clap_pending else None
            if field_match:
                found.append("--" + field_match.group(1).replace("_", "-"))
            if text.strip() and not text.strip().startswith(("#[", "///", "//")):
                clap_pending = False
        elif path.endswith(".toml") and (match := _NEW_CONFIG_KEY.match(text)):
            found.append(match.group(1))
    return tuple(dict.fromkeys(found))


def compute_facts(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> Facts:
    kinds = [file_kind(change.path) for change in pr.files]
    stats = _all_stats(pr, diffs)
    measured = profile(pr, diffs, stats)
    added = list(_lines(diffs, "+"))
    todos = tuple(
        dict.fromkeys(f"{path}: {text.strip()[:120]}" for path, text in added if _TODO.search(text))
    )
    options = _new_options(added)
    source_lines = sum(
        change.added + change.deleted
        for change, kind in zip(pr.files, kinds, strict=True)
        if kind == "source"
    )
    breaking, scope = _breaking(pr, diffs, stats)
    return Facts(
        category=_categorize(pr, measured),
        breaking=breaking,
        tests_touched=any(kind == "test" for kind in kinds),
        docs_only=bool(kinds) and all(kind == "docs" for kind in kinds),
        generated_or_vendored=tuple(
            change.path
            for change, kind in zip(pr.files, kinds, strict=True)
            if kind in ("lock", "vendored") or is_generated(change.path)
        ),
        todos_added=todos[:10],
        new_options=options[:10],
        files_changed=len(pr.files),
        lines_added=pr.added,
        lines_deleted=pr.deleted,
        source_lines_changed=source_lines,
        logic_lines=measured.logic_lines,
        logic_files=measured.logic_files,
        new_modules=measured.new_modules[:10],
        new_definitions=measured.new_definitions[:10],
        tricky=measured.tricky,
        branches=measured.branches,
        test_lines_added=measured.test_lines_added,
        ci_lines=measured.ci_lines,
        config_lines=measured.config_lines,
        test_lines=measured.test_lines,
        new_module_lines=measured.new_module_lines,
        mechanical=measured.mechanical,
        breaking_scope=scope,
    )
