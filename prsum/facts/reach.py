"""Where the code a PR changes is used beyond the PR: the files, left unchanged by it, that
import a top-level function whose body it changes and use it (read at the PR's commit).

A fix to `checkOptionalParameter` reaches every router that imports it; a reviewer checks
those, and the diff does not name them. The sentence must be true, so a file counts only
where it imports the name from the changed file, resolved as the language resolves it
(Python's modules, JavaScript/TypeScript's relative specifiers, Go's module path from
`go.mod`), and uses it in code outside the import: a name matched by its spelling alone
(another module's `fetch`), a re-export, a docstring's example, a comment or a string is no
use, and neither is a file that binds the name to something else too (its own `def`, a
parameter, a second import). Same-package calls in Go carry no import and are not read, nor
are other languages. Git is reached only through the callables passed in (prsum.history reads
the repository).
"""

from __future__ import annotations

import bisect
import io
import posixpath
import re
import sys
import tokenize
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import PurePosixPath

from prsum.digest import HUNK_START
from prsum.filekinds import file_kind, is_auxiliary, is_generated
from prsum.syntax import language_of, outline
from prsum.types import FileDiff, Reach

# Search the PR's commit for fixed strings: (path, line number, line) of each line that holds
# any of them.
Grep = Callable[[Sequence[str]], tuple[tuple[str, int, str], ...]]
# A file of the PR's commit by its path: at most `max_bytes` of it, or None where the clone
# cannot give it.
ReadFile = Callable[[str, int], bytes | None]

_MIN_NAME = 4  # characters: shorter names (`run`, `get`) are everybody's
_MAX_NAMES = 10  # definitions searched a PR, the most changed first
_MAX_READ = 40  # files read a PR: a name more files hold is not told (no count could be stood by)
_MAX_BYTES = 1 << 20
_MAX_KEYS = 50  # `name:` places looked into for a parameter; a file with more counts as shadowed
_PYTHON = frozenset({".py", ".pyi"})
_SCRIPT = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")  # resolution order
_GO = frozenset({".go"})
# The node types of functions (and JS/TS `const` bindings, arrow functions mostly): a change to
# one's body reaches every caller. A class's or a type's change is mostly a field or a method,
# whose callers an import does not show ("`HFModelConfig` is used in …" was judged empty).
_FUNCTIONS = frozenset(
    {
        "function_definition",
        "function_declaration",
        "generator_function_declaration",
        "variable_declarator",
    }
)

_COMMENT_LINE = re.compile(r"^\s*(?:#|//|/\*|\*)")
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.M)
_JS_IMPORT = re.compile(  # a default, a namespace or braces (or a default and one of them)
    r"\bimport\s+(?:type\s+)?"
    r"(\*\s*as\s+[\w$]+|\{[^}]{0,4000}\}|[\w$]+(?:\s*,\s*(?:\{[^}]{0,4000}\}|\*\s*as\s+[\w$]+))?)"
    r"\s*from\s*(['\"])([^'\"\n]+)\2"
)
_JS_NAMESPACE = re.compile(r"\*\s*as\s+([A-Za-z_$][\w$]*)")
_JS_REEXPORT = re.compile(r"\bexport\s*(?:type\s*)?\{[^}]*\}|\bexport\s+default\s+[\w$]+\s*;?")
# `export default { … }`, `export const Jwt = { sign, verify }`: objects that re-export names
_JS_EXPORTED_OBJECT = re.compile(
    r"\bexport\s+(?:default\s*|(?:const|let|var)\s+[\w$]+\s*(?::[^=\n]+)?=\s*)\{"
)
_GO_MODULE = re.compile(r"^module\s+(\S+)", re.M)
_GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
_GO_IMPORT_BLOCK = re.compile(r"^import\s*(?:\([^)]*\)|[^\n]*)", re.M)
_GO_IMPORT_SPEC = re.compile(r"(?:^|[\s(])([\w.]+\s+)?\"([^\"\n]+)\"")


@dataclass(frozen=True)
class _Definition:
    name: str
    path: str
    lines: int


def definition_reach(
    diffs: tuple[FileDiff, ...], pr_paths: frozenset[str], grep: Grep, read_file: ReadFile
) -> tuple[Reach, ...]:
    """Each top-level function whose code the PR changes, with the product's files outside the
    PR (`pr_paths`) that import and use it; functions no such file uses are left out, and so
    are those whose every holder could not be read within the budget."""
    tree = _Tree(read_file)
    candidates = sorted(_changed_definitions(diffs, tree), key=lambda d: -d.lines)[:_MAX_NAMES]
    # A name two changed files define would make "`x` is used in …" ambiguous.
    defined = Counter(definition.name for definition in candidates)
    candidates = [definition for definition in candidates if defined[definition.name] == 1]
    if not candidates:
        return ()
    names = [definition.name for definition in candidates]
    holders: dict[str, set[str]] = {}
    for path, _, line in grep(names):
        if path in pr_paths or not _product(path):
            continue
        for name in names:
            if re.search(_word(name), line):
                holders.setdefault(name, set()).add(path)
    found = []
    for definition in candidates:
        family = _family(definition.path)
        held = sorted(user for user in holders.get(definition.name, ()) if _family(user) == family)
        if not held or not tree.affords(held):
            continue
        users = tuple(user for user in held if _uses(tree, user, definition))
        if users:
            found.append(Reach(definition.name, definition.path, users))
    return tuple(found)


def _changed_definitions(diffs: tuple[FileDiff, ...], tree: _Tree) -> Iterator[_Definition]:
    """Each top-level function of the product's source whose code (not only its docstring or
    comments: a docstring rewritten changes no caller) the PR changes."""
    for diff in diffs:
        if diff.parsed is None or not _product(diff.path) or _family(diff.path) is None:
            continue
        names = {
            change.name: change.lines
            for change in diff.parsed.definitions
            if change.status == "changed"
            and change.qualified == change.name
            and change.kind in _FUNCTIONS
            and len(change.name) >= _MIN_NAME
            and not change.name.startswith("__")
        }
        text = tree.text(diff.path) if names else None
        language = language_of(diff.path)
        found = outline(text.encode(), language) if text is not None and language else None
        code = _code(text, diff.path) if text is not None else None
        if found is None or code is None:
            continue
        lines = {n for n in _changed_positions(diff.patch) if 0 < n <= len(code) and code[n - 1]}
        for definition in found.definitions:
            if (
                definition.parent is None
                and definition.name in names
                and any(definition.start <= number <= definition.end for number in lines)
            ):
                yield _Definition(definition.name, diff.path, names[definition.name])


def _code(text: str, path: str) -> list[str] | None:
    """The file's lines with comments and strings blanked (a docstring's line is empty)."""
    code = _python_code(text) if _family(path) == "python" else _c_like_code(text, "`")
    return [line.strip() for line in code.split("\n")] if code is not None else None


def _changed_positions(patch: str) -> set[int]:
    """The lines of the new version a patch changes: the lines a run of changes adds, or for a
    run that only removes (a removed comment or blank line aside), the lines on either side of
    where it was."""
    found: set[int] = set()
    number = 0
    added: list[int] = []
    removed = False
    for text in [*patch.split("\n"), " "]:  # a context line ends the last run
        if text.startswith("+") and number:
            added.append(number)
            number += 1
            continue
        if text.startswith("-") and number:
            removed = removed or bool(text[1:].strip() and not _COMMENT_LINE.match(text[1:]))
            continue
        found |= set(added) if added else ({number - 1, number} if removed else set())
        added, removed = [], False
        if hunk := HUNK_START.match(text):
            number = int(hunk.group(2))
        elif text.startswith(" ") and number:
            number += 1
    return found


def _product(path: str) -> bool:
    """The product's own source: no test (nor pytest's `conftest.py`), example or tool output."""
    return (
        file_kind(path) == "source"
        and PurePosixPath(path).name != "conftest.py"
        and not (is_generated(path) or is_auxiliary(path))
    )


def _family(path: str) -> str | None:
    """The language whose imports resolve a file's names: python, script (JS/TS) or go."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _PYTHON:
        return "python"
    if suffix in _SCRIPT:
        return "script"
    return "go" if suffix in _GO else None


class _Tree:
    """The files of the PR's commit, read once each, within the PR's budget of reads."""

    def __init__(self, read_file: ReadFile) -> None:
        self._read_file = read_file
        self._texts: dict[str, str | None] = {}

    def affords(self, paths: Sequence[str]) -> bool:
        """Whether all of `paths` can be read within the budget."""
        return len(self._texts.keys() | set(paths)) <= _MAX_READ

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            data = self._read_file(path, _MAX_BYTES)
            self._texts[path] = data.decode("utf-8", errors="replace") if data is not None else None
        return self._texts[path]

    def exists(self, path: str) -> bool:
        return self.text(path) is not None


def _uses(tree: _Tree, user: str, definition: _Definition) -> bool:
    """Whether the file `user` imports the definition from its file and uses it."""
    text = tree.text(user)
    if text is None:
        return False
    family = _family(user)
    if family == "python":
        return _python_uses(tree, text, user, definition)
    if family == "script":
        return _script_uses(tree, text, user, definition)
    return _go_uses(tree, text, definition)


def _word(name: str) -> str:
    return rf"(?<![\w$]){re.escape(name)}(?![\w$])"


def _alone(name: str) -> str:
    """The name as a word of its own, no attribute of something else (`x.name` is another)."""
    return rf"(?<![\w$.]){re.escape(name)}(?![\w$])"


def _member(owner: str, name: str) -> str:
    """`owner.name`: a name reached through the module (or package) it was imported as."""
    return rf"(?<![\w$.]){re.escape(owner)}\s*\.\s*{re.escape(name)}(?![\w$])"


def _used(code: str, spans: Sequence[tuple[int, int]], pattern: str | re.Pattern[str]) -> bool:
    """Whether `pattern` matches in `code` (comments and strings blanked) outside `spans`
    (the import statements, re-exports)."""
    ordered = sorted(spans)
    starts = [start for start, _ in ordered]
    for match in re.finditer(pattern, code):
        index = bisect.bisect_right(starts, match.start()) - 1
        if index < 0 or match.start() >= ordered[index][1]:
            return True
    return False


def _blank(text: str, spans: Iterator[tuple[int, int]]) -> str:
    """`text` with the characters of `spans` as spaces, line breaks kept (offsets hold)."""
    chars = list(text)
    for start, end in spans:
        for index in range(start, end):
            if chars[index] != "\n":
                chars[index] = " "
    return "".join(chars)


# --- Python -----------------------------------------------------------------------------------


def _python_code(text: str) -> str | None:
    """The file with its strings (docstrings, f-strings' text) and comments blanked; None
    where it does not tokenize."""
    starts = [0]
    for line in io.StringIO(text):  # the lines as tokenize reads them
        starts.append(starts[-1] + len(line))
    quiet = {tokenize.STRING, tokenize.COMMENT}
    quiet |= {getattr(tokenize, kind) for kind in ("FSTRING_MIDDLE",) if hasattr(tokenize, kind)}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return _blank(
        text,
        (
            (starts[token.start[0] - 1] + token.start[1], starts[token.end[0] - 1] + token.end[1])
            for token in tokens
            if token.type in quiet
        ),
    )


def _module_parts(path: str) -> tuple[str, ...]:
    """A Python file's module as path parts: `src/click/core.py` is (src, click, core); a
    package's `__init__.py` is the package."""
    pure = PurePosixPath(path)
    parts = pure.with_suffix("").parts
    return parts[:-1] if pure.stem == "__init__" else parts


def _python_module(user: str, dots: str, module: str) -> tuple[str, ...] | None:
    """The parts of the module an import of `user` names, relative ones resolved from its
    package; None where the dots climb out of the tree."""
    words = tuple(word for word in module.split(".") if word)
    if not dots:
        return words
    package = PurePosixPath(user).parent.parts
    up = len(dots) - 1
    if up > len(package):
        return None
    return package[: len(package) - up] + words


def _same_module(
    tree: _Tree,
    named: tuple[str, ...] | None,
    relative: bool,
    user: str,
    defined: tuple[str, ...],
) -> bool:
    """Whether an import of `user` names the module `defined`: a relative one exactly; an
    absolute one as the tail of its path, two parts at least, where the folder above that
    tail can be where imports start (`src/`, not a package: `myapp/email/utils.py` is no
    `email.utils`), that folder holds `user` too (another service's `app.utils` is another
    module), and the name is no module of the standard library."""
    if not named:
        return False
    if relative:
        return named == defined
    if len(named) < min(2, len(defined)) or defined[-len(named) :] != named:
        return False
    if named[0] in sys.stdlib_module_names:
        return False
    root = defined[: len(defined) - len(named)]
    if root and tree.exists(posixpath.join(*root, "__init__.py")):
        return False
    return PurePosixPath(user).parts[: len(root)] == root


def _imported(clause: str) -> Iterator[tuple[str, str]]:
    """(name, the name it is bound to) of each item of an import's clause: `a as b, c`."""
    for item in clause.strip().strip("()").split(","):
        words = item.split()
        if len(words) == 1:
            yield words[0], words[0]
        elif len(words) == 3 and words[1] == "as":
            yield words[0], words[2]


def _python_binds(code: str, spans: Sequence[tuple[int, int]], name: str) -> bool:
    """Whether the file binds `name` outside its imports: a `def` or `class`, an assignment,
    a loop or `with … as` target, a parameter."""
    word = re.escape(name)
    binding = (
        rf"\b(?:def|class)\s+{word}\b"
        rf"|(?:^|[,;])[ \t]*{word}\s*(?::[^=\n]*)?=(?!=)|(?<![\w.]){word}\s*:="
        rf"|\b(?:for|as|global|nonlocal|lambda)\s+{word}\b"
        rf"|\bdef\s+\w+\s*\((?:[^)]*?[,*])?\s*{word}\s*[:=,)]"
    )
    return _used(code, spans, re.compile(binding, re.MULTILINE))


def _python_uses(tree: _Tree, text: str, user: str, definition: _Definition) -> bool:
    code = _python_code(text)
    if code is None:
        return False
    defined = _module_parts(definition.path)
    spans = []
    direct: set[str] = set()  # names the definition is bound to
    owners: set[str] = set()  # modules it is reached through
    elsewhere: set[str] = set()  # names bound by imports of other modules
    for match in _PY_FROM.finditer(code):
        spans.append(match.span())
        dots, module, clause = match.groups()
        named = _python_module(user, dots, module)
        for imported, bound in _imported(clause):
            if imported == definition.name and _same_module(tree, named, bool(dots), user, defined):
                direct.add(bound)
            elif named is not None and _same_module(
                tree, (*named, imported), bool(dots), user, defined
            ):
                owners.add(bound)  # `from pkg import mod as m` … `m.name`
            else:
                elsewhere.add(bound)
    for match in _PY_IMPORT.finditer(code):
        spans.append(match.span())
        for imported, bound in _imported(match.group(1)):
            if _same_module(tree, tuple(imported.split(".")), False, user, defined):
                owners.add(bound)  # `import a.b as m` … `m.name`
            else:
                elsewhere.add(bound.split(".")[0])
    patterns = [_alone(name) for name in direct] + [_member(m, definition.name) for m in owners]
    names = direct | owners
    if names & elsewhere or any(_python_binds(code, spans, name) for name in names):
        return False
    if _patched(code, spans, owners, definition.name):
        return False
    # `return name` hands the function on (a module's `__getattr__` shim), it does not use it
    handed = "|".join(re.escape(name) for name in direct) or "(?!)"
    spans += [
        match.span()
        for match in re.finditer(rf"^[ \t]*return[ \t]+(?:{handed})[ \t]*$", code, re.M)
    ]
    return any(_used(code, spans, pattern) for pattern in patterns)


def _patched(code: str, spans: Sequence[tuple[int, int]], owners: set[str], name: str) -> bool:
    """Whether the file assigns the function through its module (`_compat.f = fake`): a file
    that swaps it out saves and restores it, it does not call it."""
    return any(_used(code, spans, _member(owner, name) + r"\s*=(?!=)") for owner in owners)


# --- JavaScript and TypeScript ----------------------------------------------------------------


def _c_like_code(text: str, raw_quote: str, regex_literals: bool = False) -> str:
    """The file with its comments and string literals blanked: `//` and `/* */` comments,
    '…' and "…" strings, `raw_quote` strings (JS template literals, Go raw strings) whole,
    and with `regex_literals` JavaScript's `/…/` (a quote or `/*` inside one is no string or
    comment)."""
    spans = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if regex_literals and char == "/" and (end := _regex_end(text, index)):
            pass
        elif text.startswith("//", index):
            end = text.find("\n", index)
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            end = end + 2 if end >= 0 else -1
        elif char in "'\"" or char == raw_quote:
            end = index + 1
            while end < length and text[end] != char:
                if text[end] == "\\" and char != raw_quote:
                    end += 1
                elif text[end] == "\n" and char != raw_quote:
                    break  # an unclosed quote: a regex literal or a rune, not a string
                end += 1
            end = min(end + 1, length)
        else:
            index += 1
            continue
        end = length if end < 0 else end
        spans.append((index, end))
        index = end
    return _blank(text, iter(spans))


def _regex_end(text: str, index: int) -> int:
    """Where the JavaScript regex literal that starts at `index` ends, or 0 where the `/` is
    no regex's (a division, a comment): a regex follows an operator, a bracket or `return`,
    and ends on its line at a `/` outside a character class."""
    if text.startswith(("//", "/*"), index):
        return 0
    last = index - 1
    while last >= 0 and text[last] in " \t\r\n":
        last -= 1
    operand = last >= 0 and text[last] not in "(,=:[!&|?{};+-*%<>~^"
    if operand and not text.endswith("return", 0, last + 1):
        return 0  # after a name, a number or a bracket closed: a division
    end, in_class = index + 1, False
    while end < len(text) and text[end] != "\n":
        char = text[end]
        if char == "\\":
            end += 1
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            return end + 1
        end += 1
    return 0


def _script_target(tree: _Tree, user: str, spec: str) -> str | None:
    """The file a relative import specifier of `user` resolves to, as Node and TypeScript
    look for it: the file as written, with an extension added (`./url.js` may stand for
    `url.ts`), then the folder's `index`; None for a package or a bundler's alias."""
    if not spec.startswith("."):
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(user), spec))
    suffix = PurePosixPath(target).suffix
    stem = posixpath.splitext(target)[0] if suffix in _SCRIPT else target
    folder = spec in (".", "..") or spec.endswith("/")  # `.`, `..`, `./lib/` are folders only
    candidates = [target] if suffix in _SCRIPT and not folder else []
    candidates += [] if folder else [stem + extension for extension in _SCRIPT]
    candidates += [posixpath.join(target, "index" + extension) for extension in _SCRIPT]
    return next((path for path in candidates if tree.exists(path)), None)


def _script_uses(tree: _Tree, text: str, user: str, definition: _Definition) -> bool:
    code = _c_like_code(text, "`", regex_literals=True)
    spans = [match.span() for match in _JS_REEXPORT.finditer(code)]
    # an exported object re-exports too: the object's whole text
    objects = _JS_EXPORTED_OBJECT.finditer(code)
    spans += [(match.start(), _closing(code, match.end() - 1)) for match in objects]
    direct: set[str] = set()
    owners: set[str] = set()
    elsewhere: set[str] = set()
    for match in _JS_IMPORT.finditer(text):
        if code[match.start() : match.start() + 6] != "import":
            continue  # inside a comment or a string
        spans.append(match.span())
        clause, _, spec = match.groups()
        here = _script_target(tree, user, spec) == definition.path
        namespace = _JS_NAMESPACE.search(clause)
        braces = re.search(r"\{([^}]*)\}", clause)
        default = re.match(r"\s*([A-Za-z_$][\w$]*)\s*(?:,|$)", clause)
        bound = {namespace.group(1)} if namespace else set()
        bound |= {default.group(1)} if default else set()
        for item in (braces.group(1) if braces else "").split(","):
            words = [word for word in item.split() if word != "type"]
            if not words:
                continue
            binding = words[2] if len(words) == 3 and words[1] == "as" else words[0]
            if here and words[0] == definition.name:
                direct.add(binding)
            else:
                bound.add(binding)
        if here and namespace:
            owners.add(namespace.group(1))
        elsewhere |= bound - owners
    names = direct | owners
    if not names or names & elsewhere:
        return False
    patterns = [_alone(name) for name in direct] + [_member(m, definition.name) for m in owners]
    shadowed = "|".join(re.escape(name) for name in names)
    declared = rf"\b(?:function\*?|class|const|let|var|enum|interface|type)\s+(?:{shadowed})\b"
    typed = rf"(?<![\w$.])(?:{shadowed})\s*(?:\?\s*)?:(?!:)"  # a parameter, or an object's key
    keys = [key.start() for key in islice(re.finditer(typed, code), _MAX_KEYS + 1)]
    parameter = len(keys) > _MAX_KEYS or "(" in _innermost_openers(code, keys)
    if parameter or _used(code, spans, declared) or _patched(code, spans, owners, definition.name):
        return False
    return any(_used(code, spans, pattern) for pattern in patterns)


def _closing(code: str, opening: int) -> int:
    """The offset just past the brace that closes the one at `opening` (the end of the file
    where none does)."""
    depth = 0
    for index in range(opening, len(code)):
        if code[index] == "{":
            depth += 1
        elif code[index] == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(code)


def _innermost_openers(code: str, positions: Sequence[int]) -> list[str]:
    """The innermost bracket open at each of `positions` (ascending), "" where none is, in
    one pass: `name: T` inside a parenthesis is a parameter, which shadows the import; inside
    braces it is a key, which does not."""
    openers: list[str] = []
    found = []
    targets = iter(positions)
    target = next(targets, None)
    for index, char in enumerate(code):
        while target is not None and target == index:
            found.append(openers[-1] if openers else "")
            target = next(targets, None)
        if target is None:
            break
        if char in "([{":
            openers.append(char)
        elif char in ")]}" and openers:
            openers.pop()
    return found


# --- Go ---------------------------------------------------------------------------------------


def _go_uses(tree: _Tree, text: str, definition: _Definition) -> bool:
    """`pkg.Name` from a file that imports the definition's package by the module's own path
    (`go.mod`): an exported name of another package is reached only through its import."""
    module_file = tree.text("go.mod")
    defining = tree.text(definition.path)
    if not definition.name[:1].isupper() or module_file is None or defining is None:
        return False
    module = _GO_MODULE.search(module_file)
    package = _GO_PACKAGE.search(_c_like_code(defining, "`"))
    if module is None or package is None:
        return False
    folder = posixpath.dirname(definition.path)
    wanted = f"{module.group(1)}/{folder}" if folder else module.group(1)
    code = _c_like_code(text, "`")
    spans = [match.span() for match in _GO_IMPORT_BLOCK.finditer(code)]
    owners = {
        (alias or package.group(1)).strip()
        for start, end in spans
        for alias, path in _GO_IMPORT_SPEC.findall(text[start:end])
        if path == wanted
    }
    return any(_used(code, spans, _member(owner, definition.name)) for owner in owners - {"_", "."})
