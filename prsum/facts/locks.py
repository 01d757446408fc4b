"""What a PR changes in its lock files: the packages whose pinned versions it moves, adds or
drops.

A dependency bump's manifest names one package; its lock file tells what really moved (a
transitive dependency dropped, a group of updates in one `uv.lock`). Both versions of the lock
file are read whole, through the blobs its patch names, and compared package by package, so
what is said is what the lock files pin. Formats read: TOML `[[package]]` tables (Cargo, uv,
Poetry, PDM), npm's `package-lock.json`, Bun's `bun.lock` and Go's `go.sum`; any other lock
file gives nothing.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from pathlib import PurePosixPath

from prsum.digest import BlobReader, blob_names, side_text
from prsum.types import FileDiff, LockChange

_MAX_BYTES = 16 << 20  # a lock file larger than this is not read
# Bun's text lock file: `"name": ["name@version", …` per package (JSON with trailing commas).
_BUN_ENTRY = re.compile(r'^\s*"[^"]+": \["((?:@[^@"/]+/)?[^@"]+)@([^"]+)"', re.MULTILINE)
# `go.sum`: a module's own hash per version it builds with; its `/go.mod` hashes stay behind
# for versions the module graph only reads, so they tell no pin.
_GO_SUM_LINE = re.compile(r"^(\S+) (v[^/\s]+) h1:", re.MULTILINE)
_GO_SUM_ANY = re.compile(r"^\S+ v\S+ h1:\S+$")

Pins = dict[str, frozenset[str]]  # package name -> the versions pinned


def lock_changes(diffs: tuple[FileDiff, ...], read_blob: BlobReader) -> tuple[LockChange, ...]:
    """Each package whose pinned versions a lock file of the PR changes, by file, in the
    order of the packages' names."""
    changes: list[LockChange] = []
    for diff in diffs:
        reader = _READERS.get(PurePosixPath(diff.path).name)
        blobs = blob_names(diff.patch)
        if reader is None or blobs is None:
            continue
        old, new = (_pins(reader, blob, read_blob) for blob in blobs)
        if old is None or new is None:
            continue  # a side the clone lacks, or one no reader can read: nothing is said
        for name in sorted(old.keys() | new.keys()):
            before, after = old.get(name, frozenset()), new.get(name, frozenset())
            if before != after:
                changes.append(LockChange(diff.path, name, _versions(before), _versions(after)))
    return tuple(changes)


def _versions(versions: frozenset[str]) -> str:
    return ", ".join(sorted(versions))


def _pins(reader: Callable[[str], Pins], blob: str, read_blob: BlobReader) -> Pins | None:
    """The packages a version of a lock file pins; empty for a side that does not exist."""
    text = side_text(blob, read_blob, _MAX_BYTES)
    if not text:
        return None if text is None else {}
    try:
        return reader(text)
    except (ValueError, KeyError, TypeError, AttributeError):
        # Not the format its name promises (npm's lockfile v1 has no `packages`): read as
        # empty, it would make every package of the other side "added".
        return None


def _gathered(pairs: list[tuple[str, str]]) -> Pins:
    pins: dict[str, set[str]] = {}
    for name, version in pairs:
        pins.setdefault(name, set()).add(version)
    return {name: frozenset(versions) for name, versions in pins.items()}


def _toml_packages(text: str) -> Pins:
    """Cargo, uv, Poetry and PDM: a `[[package]]` table with `name` and `version` each."""
    table = tomllib.loads(text)
    if not table.keys() & {"package", "version", "metadata"}:
        raise ValueError("no lock file's table")  # some other TOML: nothing to compare
    packages = table.get("package", [])
    return _gathered(
        [(str(p["name"]), str(p["version"])) for p in packages if "name" in p and "version" in p]
    )


def _npm_packages(text: str) -> Pins:
    """npm's lockfile v2 and v3: `packages`, keyed by install path; those outside
    `node_modules` (the root, workspaces) are the project's own, not pinned dependencies."""
    packages = json.loads(text)["packages"]
    return _gathered(
        [
            (path.rpartition("node_modules/")[2], str(entry["version"]))
            for path, entry in packages.items()
            if "node_modules/" in path and isinstance(entry, dict) and "version" in entry
        ]
    )


def _bun_packages(text: str) -> Pins:
    if '"packages"' not in text:
        raise ValueError("no packages table")
    return _gathered(_BUN_ENTRY.findall(text))


def _go_sum_packages(text: str) -> Pins:
    if any(line and not _GO_SUM_ANY.match(line) for line in text.splitlines()):
        raise ValueError("not go.sum")  # a Git LFS pointer, a conflict left in
    return _gathered(_GO_SUM_LINE.findall(text))


_READERS: dict[str, Callable[[str], Pins]] = {
    "Cargo.lock": _toml_packages,
    "uv.lock": _toml_packages,
    "poetry.lock": _toml_packages,
    "pdm.lock": _toml_packages,
    "package-lock.json": _npm_packages,
    "bun.lock": _bun_packages,
    "go.sum": _go_sum_packages,
}
