"""Parsing git's output: the `--raw --numstat -z` file lists and unified diffs. No git here."""

from __future__ import annotations

import re

from prsum.types import FileChange, FileDiff


def _parse_token(
    tokens: list[str],
    index: int,
    token: str,
    statuses: dict[str, tuple[str, str | None]],
    counts: dict[str, tuple[int, int, bool]],
    order: list[str],
) -> int:
    """Read one entry starting at `tokens[index]`; the index of the next entry."""
    if not token:
        return index + 1
    if token.startswith(":"):
        letter = token.split()[-1][:1]
        if letter in "RC":
            old, new = tokens[index + 1], tokens[index + 2]
            step = 3
        else:
            old, new = None, tokens[index + 1]
            step = 2
        statuses[new] = ({"A": "A", "D": "D", "R": "R", "C": "A"}.get(letter, "M"), old)
        order.append(new)
        return index + step
    added_text, deleted_text, path = token.split("\t", 2)
    step = 1
    if not path:  # a rename: the two paths follow as their own tokens
        path = tokens[index + 2]
        step = 3
    binary = added_text == "-"
    counts[path] = (
        0 if binary else _count(added_text),
        0 if binary else _count(deleted_text),
        binary,
    )
    return index + step


def _count(text: str) -> int:
    value = int(text)
    if value < 0 or not text.isdigit():
        raise ValueError(f"not a line count: {text!r}")
    return value


def parse_changes(tokens: list[str]) -> tuple[FileChange, ...]:
    """Parse the NUL-separated `--raw --numstat -z` section of one commit."""
    statuses: dict[str, tuple[str, str | None]] = {}
    counts: dict[str, tuple[int, int, bool]] = {}
    order: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip("\n")
        try:
            index = _parse_token(tokens, index, token, statuses, counts, order)
        except (ValueError, IndexError):
            index += 1  # not the shape git writes: skip it rather than misread what follows
    changes = []
    for path in order:
        status, old = statuses[path]
        added, deleted, binary = counts.get(path, (0, 0, False))
        changes.append(
            FileChange(path, status, added, deleted, old, binary)  # type: ignore[arg-type]
        )
    return tuple(changes)


_DIFF_HEADER = re.compile(r"^diff --git ", re.MULTILINE)


def split_patch(text: str, files: tuple[FileChange, ...]) -> tuple[FileDiff, ...]:
    """Split a unified diff into per-file patches, named by the PR's file list where possible."""
    blocks = [block for block in _DIFF_HEADER.split(text) if block.strip()]
    known = [change.path for change in files]
    diffs = []
    for position, block in enumerate(blocks):
        path = _path_of_block(block)
        if path is None and position < len(known):
            path = known[position]
        diffs.append(FileDiff(path or f"file-{position}", "diff --git " + block))
    return tuple(diffs)


def _path_of_block(block: str) -> str | None:
    candidate = None
    for line in block.splitlines():
        for prefix in ("+++ b/", "rename to ", "copy to "):
            if line.startswith(prefix):
                return _unquote(line[len(prefix) :])
        if line.startswith("--- a/"):
            candidate = _unquote(line[len("--- a/") :])
        elif line.startswith("+++ /dev/null"):
            return candidate
        elif line.startswith("@@"):
            break
    header = block.splitlines()[0] if block else ""
    match = re.match(r"a/(.+) b/(.+)$", header)
    return _unquote(match.group(2)) if match else None


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of unusual file names."""
    path = path.rstrip("\t")
    if not (path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", errors="backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", errors="replace").decode("utf-8", errors="replace")
