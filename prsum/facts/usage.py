"""Which files import the packages a dependency bump moves.

A bump's diff is a pair of version numbers; a reviewer's question of it is where the project
would feel the new version: the files that import the package. `git grep` over the PR's tree
answers it, true by construction: the files whose code names the package the way the
language imports it (`etcetera::` in Rust, `import yaml` in Python, `from 'hono/jsx'`,
a Go import path). A package the code does not name that way (a tool, a transitive
dependency, a distribution whose module has another name) gets no sentence.

Git is reached only through the callable passed in (prsum.history reads the repository).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

from prsum.filekinds import file_kind
from prsum.types import Category, LockChange, Usage

# (path, line number, line) of each line of the PR's tree holding any of the fixed strings.
Grep = Callable[[Sequence[str]], Sequence[tuple[str, int, str]]]

_MOVED = 3  # packages looked up where the title names none of those moved
# A line that begins a comment in the languages read here imports nothing ("imports" of a
# file that only mentions the package in a comment would be false).
_COMMENTS = ("//", "/*", "*", "#")


def _rust(name: str) -> tuple[list[str], re.Pattern[str], frozenset[str]]:
    crate = re.escape(name.replace("-", "_"))
    return (
        [f"{name.replace('-', '_')}::", f"extern crate {name.replace('-', '_')}"],
        re.compile(rf"(?<![\w:]){crate}::|^\s*extern\s+crate\s+{crate}\b"),
        frozenset({".rs"}),
    )


def _python(name: str) -> tuple[list[str], re.Pattern[str], frozenset[str]]:
    module = name.lower().replace("-", "_")
    escaped = re.escape(module)
    return (
        [f"import {module}", f"from {module}"],
        re.compile(rf"^\s*(?:import|from)\s+{escaped}(?:[\s.,]|$)"),
        frozenset({".py", ".pyi"}),
    )


def _javascript(name: str) -> tuple[list[str], re.Pattern[str], frozenset[str]]:
    escaped = re.escape(name)
    return (
        [f"'{name}", f'"{name}'],
        re.compile(
            rf"""(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*|^\s*import\s+)(['"]){escaped}(?:/[^'"]*)?\1"""
        ),
        frozenset(
            {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".vue", ".svelte"}
        ),
    )


def _go(name: str) -> tuple[list[str], re.Pattern[str], frozenset[str]]:
    escaped = re.escape(name)
    return (
        [f'"{name}'],
        re.compile(rf'^\s*(?:import\s+)?(?:[\w.]+\s+)?"{escaped}(?:/[^"]*)?"'),
        frozenset({".go"}),
    )


# How each lock file's packages are imported by the code of its ecosystem.
_IMPORTS: dict[str, Callable[[str], tuple[list[str], re.Pattern[str], frozenset[str]]]] = {
    "Cargo.lock": _rust,
    "uv.lock": _python,
    "poetry.lock": _python,
    "pdm.lock": _python,
    "package-lock.json": _javascript,
    "bun.lock": _javascript,
    "go.sum": _go,
}


def package_usage(
    category: Category, locks: Sequence[LockChange], title: str, grep: Grep
) -> tuple[Usage, ...]:
    """For a dependency bump, the files whose code imports each package it moves (those the
    title names, else all of them where they are few)."""
    if category != "deps":
        return ()
    moved = [
        change
        for change in locks
        if change.before and change.after and PurePosixPath(change.path).name in _IMPORTS
    ]
    lowered = title.lower()
    named = [change for change in moved if change.name.lower() in lowered]
    chosen = named or (moved if len(moved) <= _MOVED else [])
    found = []
    for change in {change.name: change for change in chosen}.values():
        texts, pattern, suffixes = _IMPORTS[PurePosixPath(change.path).name](change.name)
        paths = {
            path
            for path, _, line in grep(texts)
            if PurePosixPath(path).suffix in suffixes
            and pattern.search(line)
            and not line.lstrip().startswith(_COMMENTS)
        }
        if paths:
            # The program's own files first, tests and examples after; then by name.
            order = sorted(paths, key=lambda path: (file_kind(path) != "source", path))
            found.append(Usage(change.name, tuple(order)))
    return tuple(found)
