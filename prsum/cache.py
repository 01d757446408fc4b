"""A content-addressed store of small JSON values in the user cache, written atomically."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from prsum.output import replace_file

# The package's own files that cached cards and chunk notes come from: its code (the cached form
# of a card included), the prompts' frames and the card schema. Not the adapters: the model's
# hash covers them.
_PACKAGE = Path(__file__).parent
_SOURCE_SUFFIXES = frozenset({".py", ".txt", ".json"})


@functools.cache
def package_digest(root: Path = _PACKAGE) -> str:
    """A digest of every source, prompt and schema file under `root`, by path and content, read
    once per process: in the card cache key, a change to any of them is a new card."""
    paths = sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.suffix in _SOURCE_SUFFIXES and path.is_file()
    )
    return content_key(
        *(f"{path} {hashlib.sha256((root / path).read_bytes()).hexdigest()}" for path in paths)
    )


def content_key(*parts: str) -> str:
    """A key that changes whenever any part of what produced a value changes."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


class JsonStore:
    """`get`/`put` by content key; an unwritable or corrupt store acts as an empty one."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: Any) -> bool:
        """Store `value`; False when the store cannot be written (the caller goes on without)."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Private: cards say what private code does.
            replace_file(path, json.dumps(value, ensure_ascii=False), private=True)
        except OSError:
            return False
        return True


def store_size(folder: Path) -> tuple[int, int]:
    """(entries, bytes) of a store folder; (0, 0) when it does not exist."""
    entries = size = 0
    if folder.is_dir():
        for path in folder.rglob("*.json"):
            entries += 1
            size += path.stat().st_size
    return entries, size


def clear_store(folder: Path) -> int:
    """Remove a store's entries; the number removed."""
    removed = 0
    if folder.is_dir():
        for path in folder.rglob("*.json"):
            path.unlink(missing_ok=True)
            removed += 1
    return removed
