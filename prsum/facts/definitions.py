"""The public definitions a PR adds or removes, by each language's rule of visibility."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from prsum.digest import definition_name
from prsum.facts.stats import FileStats
from prsum.filekinds import is_auxiliary, is_generated

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


def public_definitions(stats: Iterable[FileStats], added: bool) -> list[tuple[str, str]]:
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


def defined_names(stats: Iterable[FileStats]) -> set[str]:
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
