"""What the repository at a PR's commit says of the PR's quoted edits, beyond its diff.

A reviewer reading a one-line fix asks two questions the diff alone cannot answer: is the new
form how this code already does it (`device=scores.device` where the call above it already
passed `as_torch_index(index, device=scores.device)`), and is the old form still elsewhere
(the same `attn_qkv_flops = 12 * seqlen_square_sum` left in another model's branch)? Both are
answered by lines of the repository, quoted: a *precedent* is an unchanged line of the edited
file that already has the edit's new text; a *leftover* is a line of the product's code that
still is, whole, the line the edit replaced. Neither says whether that is right: the reader
judges.

Lines the PR adds are told apart by their numbers in the patch's hunks, not by their text
(a masked secret or a moved line makes text comparisons lie). Git is reached only through the
callables passed in (prsum.history reads the repository).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from prsum.digest import HUNK_START, BlobReader, blob_names
from prsum.facts.edits import balanced, removed_code, written_part
from prsum.filekinds import file_kind, is_auxiliary, is_generated
from prsum.types import Echo, FileDiff, Leftover, LineEdit, Precedent

# Search the PR's commit for fixed strings: (path, line number, line) of each line that holds
# any of them.
Grep = Callable[[Sequence[str]], tuple[tuple[str, int, str], ...]]

_MIN_TEXT = 10  # characters: shorter text (`x + 1`, `segment`) is written everywhere
_CODE_MARK = re.compile(r"[.=(]")  # a call, an attribute or an assignment: code, not a word
_NAME = re.compile(r"[A-Za-z_]\w{2,}")
_MAX_PRECEDENTS = 3  # lines: text found in more is an idiom of the file, not a precedent
_MAX_LINE = 100  # characters of a line quoted whole
_MAX_BYTES = 1 << 20
_MAX_SEARCHED = 50  # old texts searched a PR: a card quotes two edits, a huge PR has thousands
_COMMENT = re.compile(r"^(?:#|//|/\*|\*|--|\"\"\"|''')")


def edit_echoes(
    edits: tuple[LineEdit, ...], diffs: tuple[FileDiff, ...], read_blob: BlobReader, grep: Grep
) -> tuple[Echo, ...]:
    """The precedent and the leftover of each edit that replaces a line, where there is one.
    `diffs` are the PR's patches as git wrote them (not masked: their line numbers must hold)."""
    patches = {diff.path: diff.patch for diff in diffs}
    added = {diff.path: added_line_numbers(diff.patch) for diff in diffs}
    replaced = [edit for edit in edits if edit.before and edit.after and edit.path in patches]
    # A leftover is the whole line the edit replaced, standing as it was: a line that only
    # begins the same (`return f()` in `return f().g()`) says something else.
    old_lines = {edit: _replaced_line(edit, patches[edit.path]) for edit in replaced}
    searched = list(dict.fromkeys(line for line in old_lines.values() if line))[:_MAX_SEARCHED]
    # One pass over the tree for all of them (a grep an edit cost seconds a PR on a large
    # repository).
    found_lines = grep(searched) if searched else ()
    sources: dict[str, list[str] | None] = {}
    found: list[Echo] = []
    for edit in replaced:
        if edit.path not in sources:
            sources[edit.path] = _new_lines(patches[edit.path], read_blob)
        lines = sources[edit.path]
        if lines is not None and (precedent := _precedent(edit, lines, added[edit.path])):
            found.append(precedent)
        line = old_lines[edit]
        if line in searched and (leftover := _leftover(edit, line, found_lines, added)):
            found.append(leftover)
    return tuple(found)


def _replaced_line(edit: LineEdit, patch: str) -> str:
    """The whole line an edit replaced (its quote may be cut around the change), where one
    removed line alone holds it and is worth searching for: specific, short enough to quote
    whole, not kept by the edit (`x` became `x = []`)."""
    holding = {line for line in removed_code(edit.path, patch) if edit.before in line}
    if len(holding) != 1:
        return ""
    (line,) = holding
    keeps = line in edit.after or edit.before in edit.after
    return line if _specific(line) and len(line) <= _MAX_LINE and not keeps else ""


def added_line_numbers(patch: str) -> frozenset[int]:
    """The numbers, in the new version, of the lines a file's patch adds."""
    numbers: set[int] = set()
    line = 0
    in_hunk = False
    for text in patch.split("\n"):
        if hunk := HUNK_START.match(text):
            line, in_hunk = int(hunk.group(2)), True
        elif in_hunk and text.startswith("+"):
            numbers.add(line)
            line += 1
        elif in_hunk and text.startswith(" "):
            line += 1
    return frozenset(numbers)


def _specific(text: str) -> bool:
    """Long and code-like enough that finding it elsewhere means something, and whole (no
    bracket left open: `slice(0, -1` is no code anyone wrote)."""
    return (
        len(text) >= _MIN_TEXT
        and bool(_CODE_MARK.search(text) and _NAME.search(text))
        and balanced(text)
    )


def _holds(line: str, text: str) -> bool:
    """Whether `line` has `text` as written, not inside a longer name (`row = f()` is no
    part of `borrow = f()`)."""
    start = r"(?<!\w)" if text[:1].isalnum() or text[:1] == "_" else ""
    end = r"(?!\w)" if text[-1:].isalnum() or text[-1:] == "_" else ""
    return re.search(start + re.escape(text) + end, line) is not None


def _code(line: str) -> bool:
    return bool(line.strip()) and not _COMMENT.match(line.strip())


def _new_lines(patch: str, read_blob: BlobReader) -> list[str] | None:
    """The lines of a file's new version, where the clone has it."""
    blobs = blob_names(patch)
    if blobs is None or not blobs[1].strip("0"):
        return None
    source = read_blob(blobs[1], _MAX_BYTES)
    return source.decode("utf-8", errors="replace").split("\n") if source is not None else None


def _precedent(edit: LineEdit, lines: list[str], added: frozenset[int]) -> Precedent | None:
    """The unchanged line of the edited file that already has what the edit wrote."""
    text = written_part(edit).lstrip(" ,;=").rstrip(" ,;")
    if not _specific(text):
        return None
    holding = [
        line.strip()
        for number, line in enumerate(lines, start=1)
        if number not in added and _code(line) and _holds(line, text)
    ]
    if not 0 < len(holding) <= _MAX_PRECEDENTS or len(holding[0]) > _MAX_LINE:
        return None
    return Precedent(edit, text, holding[0])


def _leftover(
    edit: LineEdit,
    line: str,
    found_lines: tuple[tuple[str, int, str], ...],
    added: dict[str, frozenset[int]],
) -> Leftover | None:
    """Where the product's code still has, whole, the line the edit replaced (`found_lines`:
    the repository's lines that have any edit's replaced line), the PR's own lines aside."""
    places = Counter(
        path
        for path, number, text in found_lines
        if text.strip() == line
        and file_kind(path) == "source"
        and not (is_generated(path) or is_auxiliary(path))
        and number not in added.get(path, frozenset())
    )
    if not places:
        return None
    path, _ = places.most_common(1)[0]
    return Leftover(edit, line, path, places.total(), len(places))
