"""What the repository at a PR's commit says of the PR's quoted edits, beyond its diff.

A reviewer reading a one-line fix asks two questions the diff alone cannot answer: is the new
form how this code already does it (`device=scores.device` where the call above it already
passed `as_torch_index(index, device=scores.device)`), and is the old form still elsewhere
(the same `attn_qkv_flops = 12 * seqlen_square_sum` left in another model's branch)? Both are
answered by lines of the repository, quoted: a *precedent* is an unchanged line of the edited
file that already holds the edit's new text; a *leftover* is a line of the product's code that
still holds the text the edit replaced. Neither says whether that is right: the reader judges.

Git is reached only through the callables passed in (prsum.history reads the repository).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from prsum.digest import BlobReader, blob_names
from prsum.facts.edits import balanced, written_part
from prsum.filekinds import file_kind, is_generated
from prsum.types import Echo, FileDiff, LineEdit

# Search the PR's commit for fixed strings: (path, line) of each line that holds any of them.
Grep = Callable[[Sequence[str]], tuple[tuple[str, str], ...]]

_MIN_TEXT = 10  # characters: shorter text (`x + 1`, `segment`) is written everywhere
_CODE_MARK = re.compile(r"[.=(]")  # a call, an attribute or an assignment: code, not a word
_NAME = re.compile(r"[A-Za-z_]\w{2,}")
_MAX_PRECEDENTS = 3  # lines: text found in more is an idiom of the file, not a precedent
_MAX_LINE = 100  # characters of a line quoted whole
_MAX_BYTES = 1 << 20
_COMMENT = re.compile(r"^(?:#|//|/\*|\*|--|\"\"\"|''')")


def edit_echoes(
    edits: tuple[LineEdit, ...], diffs: tuple[FileDiff, ...], read_blob: BlobReader, grep: Grep
) -> tuple[Echo, ...]:
    """The precedent and the leftover of each edit that replaces a line, where there is one."""
    patches = {diff.path: diff.patch for diff in diffs}
    added = {
        line[1:].strip()
        for diff in diffs
        for line in diff.patch.split("\n")
        if line.startswith("+") and not line.startswith("+++")
    }
    replaced = [edit for edit in edits if edit.before and edit.after and edit.path in patches]
    # One pass over the tree for every edit's old text (a grep an edit would cost seconds on
    # a large repository for a PR of many edits). An edit that keeps its old text (`x` became
    # `x = []`) leaves nothing behind.
    old_texts = [e.before for e in replaced if _specific(e.before) and e.before not in e.after]
    lines = grep(old_texts) if old_texts else ()
    found: list[Echo] = []
    for edit in replaced:
        if precedent := _precedent(edit, patches[edit.path], added, read_blob):
            found.append(precedent)
        if edit.before in old_texts and (leftover := _leftover(edit, added, lines)):
            found.append(leftover)
    return tuple(found)


def _specific(text: str) -> bool:
    """Long and code-like enough that finding it elsewhere means something, and whole (no
    bracket left open: `slice(0, -1` is no code anyone wrote)."""
    return (
        len(text) >= _MIN_TEXT
        and bool(_CODE_MARK.search(text) and _NAME.search(text))
        and balanced(text)
    )


def _precedent(edit: LineEdit, patch: str, added: set[str], read_blob: BlobReader) -> Echo | None:
    """The unchanged line of the edited file that already wrote what the edit writes."""
    text = written_part(edit).lstrip(" ,;=").rstrip(" ,;")
    blobs = blob_names(patch)
    if not _specific(text) or blobs is None or not blobs[1].strip("0"):
        return None
    source = read_blob(blobs[1], _MAX_BYTES)
    if source is None:
        return None
    lines = [
        line.strip()
        for line in source.decode("utf-8", errors="replace").split("\n")
        if text in line and line.strip() not in added and not _COMMENT.match(line.strip())
    ]
    if not 0 < len(lines) <= _MAX_PRECEDENTS or len(lines[0]) > _MAX_LINE or "`" in lines[0]:
        return None
    return Echo(edit, "precedent", text, edit.path, lines[0])


def _leftover(edit: LineEdit, added: set[str], lines: tuple[tuple[str, str], ...]) -> Echo | None:
    """Where the product's code still holds the text the edit replaced (`lines`: the
    repository's lines that hold any edit's old text)."""
    text = edit.before
    places = Counter(
        path
        for path, line in lines
        if text in line
        and file_kind(path) == "source"
        and not is_generated(path)
        and line.strip() not in added
        and not _COMMENT.match(line.strip())
    )
    if not places:
        return None
    path, _ = places.most_common(1)[0]
    return Echo(edit, "leftover", text, path, count=places.total(), files=len(places))
