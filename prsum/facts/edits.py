"""The code a PR edits in place, and the checks its tests add, quoted from its diff: true by
construction.

A reviewer's first question of a small fix is what exactly changed: `join(',')` became
`join('; ')`, a regex gained `OPTIONS`, a check `if cmd.ctx == nil` was added. The diff says it
verbatim, so prsum quotes it rather than have a model paraphrase it (the model's paraphrases
were the card's false claims: README, "Card quality, measured").

An edit is read only where the diff leaves no doubt about it: in a run of a few changed code
lines, a line replaced by a similar one (quoted where they differ), or a line of control flow
(`if`, `raise`, `catch` …) added to or removed from code that stays. Comments, imports, reordered or
reformatted lines, and files the PR adds or deletes whole are not edits, except that where no
code line changes the comments and docstrings rewritten are quoted (a docstring's parameter
renamed).

A check a test adds (`assert bar.pos == 20`, `expect(expandIPv6('::1')).toBe(…)`) says what
behaviour the PR pins, often with the values that show it; prsum quotes it the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from difflib import SequenceMatcher
from pathlib import PurePosixPath
from typing import Literal

from prsum.digest import hunks
from prsum.facts.lexing import TRIPLE_QUOTE, Side, comment_style
from prsum.filekinds import file_kind, is_auxiliary, is_changelog, is_generated
from prsum.types import Assertion, FileDiff, LineEdit, PullRequest

Role = Literal["code", "comment"]  # the lines of a file an edit is read from
_KINDS = frozenset({"source", "config", "ci"})  # where a line's change is behaviour
_MAX_BLOCK = 3  # code lines on a side of a change block read as pairs or as added lines
_MAX_QUOTE = 80  # characters of code quoted for one side of an edit
_CONTEXT_TOKENS = 2  # unchanged tokens quoted on each side of the change
_MAX_PER_FILE = 3
_SIMILAR = 0.5  # a pair of lines at least this similar is one line edited, not two lines
_MAX_LINE = 400  # longer lines (data, minified code) are not compared: it costs too much
_TOKEN = re.compile(r"\w+|\S")
_IMPORT = re.compile(
    r"^(?:(?:import|from\s+\S+\s+import|use|#include|require|package|extern crate)\b"
    r"|export\s+(?:type\s+)?[{*])"  # a re-export list is an import list
)
_WORD = re.compile(r"\w")
_STRING = re.compile(r"(\"|')[^\"'\\]*\1")  # a string literal without escapes
# A line of control flow: what it adds or removes is a path through the code (a plain `return`
# is most often the body of the `if` quoted before it).
_CONTROL = re.compile(
    r"^(?:(?:if|elif|else if|}\s*else if|unless|while|for|guard|raise|throw|return Err|except|"
    r"catch|}\s*catch)\b|panic!)"
)
# A triple quote that opens a string: at the start of a line, or after `=`, `(`, `,` …; one
# elsewhere closes a string that the hunk began inside of.
_OPENING_QUOTE = re.compile(r"""(?:^|[=(\[{,:]\s*)[rRbBuUfF]{0,2}(\"\"\"|''')""")
# What formatting changes and behaviour does not: spaces, a trailing comma or semicolon.
_SPACE = re.compile(r"\s+")
_COMMENT_MARKER = re.compile(r"^(?:#+|//+|/\*+|\*+|\"{3}|'{3})|(?:\*/|\"{3}|'{3})$")
# A line that checks a test's outcome, in the frameworks of the languages prsum reads: pytest,
# unittest, Jest/Vitest, Rust, Go (testing, testify), JUnit.
_ASSERTION = re.compile(
    r"^(?:assert\b|self\.assert[A-Z]\w*\(|(?:await\s+)?expect\(|(?:assert|assert_eq|assert_ne)!\("
    r"|t\.(?:Error|Fatal)f?\(|(?:require|assert)\.[A-Z]\w*\(|Assert\.\w+\(|assert[A-Z]\w*\()"
)
_MAX_ASSERTION = 100  # characters: a check is quoted whole or not at all (cut, it pins nothing)
_MAX_ASSERTIONS = 20
_HEADING = re.compile(r"^#{2,6}\s+\w")
_URL = re.compile(r"https?://[^\s<>\[\]\"'`]+")
# An image's address: Markdown's `![alt](url)`, HTML's `src="url"`, reST's `.. image:: url`.
_IMAGE = re.compile(
    r"!\[[^\]]*\]\([^)]*\)|\bsrc\s*=\s*[\"'][^\"']*[\"']|\.\.\s+(?:image|figure)::\s*\S+"
)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)  # not shown to a reader
_MARKDOWN = frozenset({".md", ".markdown", ".mdx"})
_ANY_LINE = re.compile(r"")
_CONFIG_KEY = re.compile(r"""^-?\s*([\w.-]+|"[^"]+"|'[^']+')\s*[:=]""")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d+[.)])\s+\S")
# A string alone on its line in code, with what separates it from the next: an item of a
# union of literal types or of a list (`| 'mediasession'`, `"--color",`; not Go's `"os"` in an
# import block).
_LITERAL_ITEM = re.compile(r"""^(?:\|\s*(["'`])[^"'`]+\1|(["'`])[^"'`]+\2\s*,)$""")
# Test data, not tests: formatter cases, fixtures, snapshots (their `assert` lines are input).
_TEST_DATA = re.compile(r"(?:^|/)(?:data|fixtures|cases|snapshots|__snapshots__|testdata)/")
# A check whose expectation is a matcher called on it (`expect(x).toBe(y)`, AssertJ's
# `assertThat(x).isEqualTo(y)`): without the matcher on its line it checks nothing yet.
_NEEDS_MATCHER = re.compile(r"^(?:await\s+)?(?:expect|assertThat)\(")
_MATCHER = re.compile(r"\)\s*(?:\.\w+)+\(")
_TRAILING = re.compile(r"[,;](?=[)\]}]|$)")


def line_edits(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> tuple[LineEdit, ...]:
    """The edits of the PR's changed files of code, file by file in the diff's order, at most
    a few a file. A PR that changes no code is told, the first of these it has, by its
    configuration edited in place (a version in a CI file says nothing of what a code change
    does, so not where code changes), by its documents (a sentence rewritten, an item added to
    a list, a section added), by the lines it inserts into its configuration (`- 24` added to
    a CI matrix)."""
    status = {change.path: change.status for change in pr.files}

    def quoted(statuses: tuple[str, ...], wanted: frozenset[str]) -> Iterator[tuple[str, str]]:
        for diff in diffs:
            path = diff.path
            if (
                status.get(path) in statuses
                and file_kind(path) in wanted
                and not is_generated(path)
                and not is_auxiliary(path)
            ):
                yield path, diff.patch

    if any(file_kind(change.path) == "source" for change in pr.files):
        sources = list(quoted(("M", "R"), frozenset({"source"})))
        # Code changed in any source file, one it adds included (a block is yielded only where
        # code lines change).
        if any(
            next(_blocks(diff.patch, comment_style(diff.path)), None)
            for diff in diffs
            if file_kind(diff.path) == "source"
        ):
            return _first_of_each(
                _file_edits(path, patch, insertions=_LITERAL_ITEM) for path, patch in sources
            )
        # No code line changes: the comments and docstrings rewritten are the change.
        return _first_of_each(
            _file_edits(path, patch, control=False, role="comment") for path, patch in sources
        )
    configuration = list(quoted(("M", "R"), _KINDS))
    return (
        _first_of_each(_file_edits(path, patch) for path, patch in configuration)
        or _first_of_each(
            _document_edits(path, patch)
            for path, patch in quoted(("M", "R", "A"), frozenset({"docs"}))
            if not is_changelog(path)  # its headings are versions; its entries, the title's
        )
        or _first_of_each(
            _file_edits(path, patch, insertions=_ANY_LINE) for path, patch in configuration
        )
    )


def _first_of_each(files: Iterable[Iterator[LineEdit]]) -> tuple[LineEdit, ...]:
    """The first few edits of each file, an edit made in many places quoted once."""
    found: list[LineEdit] = []
    said: set[tuple[str, str]] = set()
    for edits in files:
        kept = 0
        for edit in edits:
            if kept < _MAX_PER_FILE and (edit.before, edit.after) not in said:
                said.add((edit.before, edit.after))
                found.append(edit)
                kept += 1
    return tuple(found)


def _document_edits(path: str, patch: str) -> Iterator[LineEdit]:
    """A document's sentences rewritten in place, then the sections it adds, by their
    headings, then the links it adds."""
    # A prose line may begin with "if": no control flow is read in documents. A line of
    # prose inserted is most often part of a paragraph: only an item of a list stands alone.
    edits = list(_file_edits(path, patch, control=False, insertions=_LIST_ITEM))
    if PurePosixPath(path).suffix.lower() in _MARKDOWN:
        edits += [LineEdit(path, "", heading) for heading in _added_headings(patch)]
    quoted = " ".join(edit.after for edit in edits)  # a link in a list item quoted is told
    yield from edits
    yield from (LineEdit(path, "", url) for url in _added_links(patch) if url not in quoted)


def _added_links(patch: str) -> list[str]:
    """The web addresses a patch's added lines link to and its removed lines did not (a
    reporting form where an e-mail address was; a project's site), images left out: a link
    is where a document sends its reader."""
    lines = [line for hunk in hunks(patch) for line in hunk]

    def links(sign: str) -> dict[str, None]:
        text = "\n".join(line[1:] for line in lines if line.startswith(sign))
        text = _IMAGE.sub(" ", _HTML_COMMENT.sub(" ", text))
        return dict.fromkeys(map(_link_end, _URL.findall(text)))

    removed = links("-")
    return [url for url in links("+") if url not in removed and _quotable(url)]


def _link_end(url: str) -> str:
    """A web address without what ends the sentence or the markup around it: a `)` that
    closes a Markdown link (not one of the address's own pairs, `Foo_(bar)`), `**`, a stop."""
    url = url.rstrip(".,;:!?*")
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1].rstrip(".,;:!?*")
    return url


def _added_headings(patch: str) -> Iterator[str]:
    """The Markdown headings of the second level or deeper (`## Install`) a patch adds with a
    blank line before and after, as headings are written (a `## step` comment in a code
    fence has a command under it; a first-level `# Bash` is as often one), in a run of lines
    that removes no heading (there a heading was renamed, not a section added)."""
    for hunk in patch.split("\n@@")[1:]:
        lines = hunk.split("\n")[1:]
        for index, line in enumerate(lines):
            text = line[1:].strip()
            if not (line.startswith("+") and _HEADING.match(text) and _quotable(text)):
                continue
            before = lines[index - 1] if index else ""
            after = lines[index + 1] if index + 1 < len(lines) else "x"
            start = index
            while start > 0 and lines[start - 1].startswith(("+", "-")):
                start -= 1
            stop = index
            while stop + 1 < len(lines) and lines[stop + 1].startswith(("+", "-")):
                stop += 1
            renamed = any(
                other.startswith("-") and _HEADING.match(other[1:].strip())
                for other in lines[start : stop + 1]
            )
            if not before[1:].strip() and not after[1:].strip() and not renamed:
                yield text


def _file_edits(
    path: str,
    patch: str,
    control: bool = True,
    insertions: re.Pattern[str] | None = None,
    role: Role = "code",
) -> Iterator[LineEdit]:
    """The edits of one file's patch, block by block: lines replaced, (with `control`) lines
    of control flow added or removed, and the lines `insertions` matches of a few inserted
    between lines that stay (a version added to a CI matrix, an entry to a list). A line that
    stands on the other side of the patch too was moved, not edited: a check moved down a
    function is no check dropped. `role`: the lines read, code or comments."""
    blocks = list(_blocks(patch, comment_style(path), role))
    all_removed = {text for removed, _, _ in blocks for text in removed}
    all_added = {text for _, added, _ in blocks for text in added}
    removed_keys = {_key(text) for text in all_removed} - {""}
    for removed, added, inserted in blocks:
        if not (removed or added) or len(removed) > _MAX_BLOCK or len(added) > _MAX_BLOCK:
            continue
        if role == "comment" and _words_of(removed) == _words_of(added):
            continue  # a comment rewrapped: the same words on other lines
        if insertions and inserted and not removed:
            # Every line of the block must be one (a list item's wrapped line is not), and a
            # key removed elsewhere in the file was moved, maybe edited, not added.
            if all(map(insertions.match, added)):
                new = (
                    text
                    for text in added
                    if text not in all_removed
                    and _key(text) not in removed_keys
                    and _quotable(text)
                )
                yield from (LineEdit(path, "", text) for text in new)
                continue
            if not control:
                continue
        pairs = _pairs(removed, added)
        if not (pairs or inserted):
            continue  # a new block of code, or one removed whole: no edit to quote
        for before, after in pairs:
            moved = before in all_added or after in all_removed
            if not moved and (edit := _replacement(path, before, after)):
                yield edit
        if not control:
            continue
        paired_old = {before for before, _ in pairs}
        paired_new = {after for _, after in pairs}
        lost = [t for t in removed if t not in paired_old | all_added and _CONTROL.match(t)]
        gained = [t for t in added if t not in paired_new | all_removed and _CONTROL.match(t)]
        if len(lost) == len(gained) == 1 and _keyword(lost[0]) == _keyword(gained[0]):
            # One check rewritten, not one dropped and another added ("drops `if …`" of a
            # condition replaced was judged false in r10).
            if edit := _replacement(path, lost[0], gained[0]):
                yield edit
            continue
        yield from (LineEdit(path, text, "") for text in lost if _quotable(text))
        if not removed and gained[:1] == added[:1] and (guard := _guard(added)):
            yield LineEdit(path, "", guard)  # the check with what it does: `if x == nil { x = y }`
            continue
        yield from (LineEdit(path, "", text) for text in gained if _quotable(text))


def _guard(block: list[str]) -> str:
    """A small check inserted whole, as one line: its condition and its body (`if cmd.ctx ==
    nil { cmd.ctx = c.ctx }`), or "". Braces must close it; without braces (Python, a `case`),
    only a condition and one line, which can only be its body (the lines are read stripped).
    Its brackets must pair: a string opened in it would be cut."""
    text = " ".join(block)
    closed = block[-1].startswith("}") and len(block) > 1
    python = len(block) == 2 and block[0].endswith(":") and "{" not in block[0]
    return text if (closed or python) and balanced(text) and _quotable(text) else ""


def _words_of(comment: list[str]) -> str:
    """A comment's text without its markers and spaces: what rewrapping it does not change."""
    return "".join(_SPACE.sub("", _COMMENT_MARKER.sub("", line)) for line in comment)


def _key(line: str) -> str:
    """The key a line of configuration sets (`timeout` of `timeout: 30`, `debug = true`), or
    ""."""
    match = _CONFIG_KEY.match(line)
    return match.group(1) if match else ""


def removed_code(path: str, patch: str) -> set[str]:
    """The code lines a file's patch removes, stripped (hunk by hunk: no header, comment or
    string line among them)."""
    return {text for removed, _, _ in _blocks(patch, comment_style(path)) for text in removed}


def _keyword(line: str) -> str:
    """The keyword of a line of control flow (`if`, `raise` …)."""
    match = _CONTROL.match(line)
    return match.group() if match else ""


def _pairs(removed: list[str], added: list[str]) -> list[tuple[str, str]]:
    """Each removed line with the added line it became: of the pairings that keep the lines'
    order, the most similar in all (the earlier line on a tie), each pair similar enough to be
    one line edited and each line the other's closest (else it is two lines, not an edit)."""
    ratio = [
        [
            SequenceMatcher(None, before, after, autojunk=False).ratio()
            if len(before) <= _MAX_LINE and len(after) <= _MAX_LINE
            else 0.0
            for after in added
        ]
        for before in removed
    ]

    def best(i: int, j: int) -> tuple[float, list[tuple[int, int]]]:
        if i == len(removed) or j == len(added):
            return 0.0, []
        options = [best(i + 1, j), best(i, j + 1)]
        if ratio[i][j] >= _SIMILAR:
            score, rest = best(i + 1, j + 1)
            options.insert(0, (score + ratio[i][j], [(i, j), *rest]))
        return max(options, key=lambda option: option[0])  # the first of equals

    _, chosen = best(0, 0)
    return [
        (removed[i], added[j])
        for i, j in chosen
        if ratio[i][j] == max(ratio[i]) == max(row[j] for row in ratio)
    ]


def _blocks(
    patch: str, style: str, role: Role = "code"
) -> Iterator[tuple[list[str], list[str], bool]]:
    """Each run of removed and added lines: the lines of each side in `role` (code, or
    comment: comments and docstrings), stripped, and whether the run sits between unchanged
    lines (an insertion into code that stays, not a new block of code)."""
    for hunk in hunks(patch):
        yield from _hunk_blocks(hunk, style, role)


def _hunk_blocks(
    hunk: list[str], style: str, role: Role
) -> Iterator[tuple[list[str], list[str], bool]]:
    opened = _string_at_start(hunk) if style == "#" else ""
    old, new = Side(docstring=opened), Side(docstring=opened)
    removed: list[str] = []
    added: list[str] = []
    context_before = False
    for line in hunk:
        tag, text = line[:1], line[1:]
        # A line inside a triple-quoted string (`makepyfile("""…""")`) is data, not code.
        if tag == "-":
            in_string = bool(old.string)
            if old.role(text, style) == role and not in_string:
                removed.append(text.strip())
        elif tag == "+":
            in_string = bool(new.string)
            if new.role(text, style) == role and not in_string:
                added.append(text.strip())
        else:
            if removed or added:
                yield removed, added, context_before
                removed, added = [], []
            old.role(text, style)
            new.role(text, style)
            context_before = bool(text.strip())
    if removed or added:
        yield removed, added, False


def _string_at_start(hunk: list[str]) -> str:
    """The quote of the triple-quoted string (a docstring, most often) a hunk begins inside
    of, if its first triple quote closes one: the hunk's lines up to it are prose, not code.
    A quote alone on its line closes, unless it follows a `def …:` or `class …:`."""
    previous = ""
    for line in hunk:
        text = line[1:].strip()
        quotes = TRIPLE_QUOTE.findall(text)
        if len(quotes) % 2 == 1:
            alone = text == quotes[0]
            closes = not previous.endswith(":") if alone else not _OPENING_QUOTE.search(text)
            return quotes[0] if closes else ""
        if quotes:
            return ""
        previous = text or previous
    return ""


def edited_line(before: str, after: str) -> tuple[str, str] | None:
    """The one line of a text of several lines (a CI step's script) edited in place into
    another, quoted as a line of code is (`--bin ${name}` becoming `--bin=${name}`); None where
    the texts differ otherwise too."""
    old = [line.strip() for line in before.splitlines()]
    new = [line.strip() for line in after.splitlines()]
    changes = _changes(old, new)
    if len(changes) != 1 or changes[0][0] != "replace":
        return None  # told by one line, a text whose other lines change would seem unchanged
    _, i1, i2, j1, j2 = changes[0]
    edit = _replacement("", old[i1], new[j1]) if i2 - i1 == j2 - j1 == 1 else None
    return (edit.before, edit.after) if edit else None


def _replacement(path: str, before: str, after: str) -> LineEdit | None:
    """The edit of one line into another: the changed tokens with a little of what stays
    around them, if the lines are one line edited and the change is more than formatting."""
    if _IMPORT.match(before) or _IMPORT.match(after):
        return None
    old_tokens = list(_TOKEN.finditer(before))
    new_tokens = list(_TOKEN.finditer(after))
    old_words = [token.group() for token in old_tokens]
    new_words = [token.group() for token in new_tokens]
    if sorted(old_words) == sorted(new_words) or _unformatted(before) == _unformatted(after):
        return None  # reordered or reformatted
    changes = _changes(old_words, new_words)
    if len(before) <= _MAX_QUOTE and len(after) <= _MAX_QUOTE:
        old_quote, new_quote = before, after
        if _a_string(before) and _a_string(after):  # a value: `""` becoming `"/"`
            return LineEdit(path, old_quote, new_quote)
    else:  # both cut around the change, so that they show the same place
        old_quote = _cut(before, old_tokens, changes[0][1], changes[-1][2])
        new_quote = _cut(after, new_tokens, changes[0][3], changes[-1][4])
    if not (_quotable(old_quote) and _quotable(new_quote)):
        return None
    return LineEdit(path, old_quote, new_quote)


def _changes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """Where two sequences (a line's tokens, a text's lines) differ: difflib's opcodes, less the
    equal ones."""
    return [
        op
        for op in SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]


def written_part(edit: LineEdit) -> str:
    """What an edit wrote in place of what it replaced: the new line's tokens from the first
    changed to the last (`device=scores.device` of `f(x)` become `f(x, device=scores.device)`)."""
    tokens = list(_TOKEN.finditer(edit.after))
    changes = _changes(_TOKEN.findall(edit.before), [token.group() for token in tokens])
    start, stop = (changes[0][3], changes[-1][4]) if changes else (0, 0)
    if start == stop:
        return ""  # only removed tokens
    return edit.after[tokens[start].start() : tokens[stop - 1].end()]


def _unformatted(line: str) -> str:
    """The line as a formatter cannot change it: no spaces, no trailing separator, one quote."""
    return _TRAILING.sub("", _SPACE.sub("", line)).replace("'", '"')


def _cut(line: str, tokens: list[re.Match[str]], first: int, stop: int) -> str:
    """The line's tokens `first` to `stop` (exclusive), with a few unchanged ones around them,
    from and to a space (no number or name cut in two)."""
    start = tokens[max(first - _CONTEXT_TOKENS, 0)].start()
    end = tokens[min(stop + _CONTEXT_TOKENS, len(tokens)) - 1].end()
    start = line.rfind(" ", 0, start) + 1
    space = line.find(" ", end)
    return line[start : space if space >= 0 else len(line)]


def _quotable(text: str) -> bool:
    """Short enough to quote, with a name or a value in it (`})` tells a reader nothing)."""
    return len(text) <= _MAX_QUOTE and bool(_WORD.search(text))


def _a_string(text: str) -> bool:
    """Whether a whole line is a string literal and nothing else (`""`, `"/"`): a value,
    though it holds no word."""
    return bool(_STRING.fullmatch(text.rstrip(",;")))


def added_assertions(diffs: tuple[FileDiff, ...]) -> tuple[Assertion, ...]:
    """The checks the PR's tests add, in the diff's order, each once (where first added):
    code lines of test files that assert an outcome, whole on their line, short enough to
    quote, not moved from elsewhere in the PR (from a source file's inline tests included)."""
    removed = {text for diff in diffs for text in removed_code(diff.path, diff.patch)}
    found: dict[str, Assertion] = {}
    for diff in diffs:
        if (
            file_kind(diff.path) != "test"
            or is_generated(diff.path)
            or _TEST_DATA.search(diff.path)
        ):
            continue
        for _, added, _ in _blocks(diff.patch, comment_style(diff.path)):
            for index, text in enumerate(added):
                continued = index + 1 < len(added) and added[index + 1].startswith(".")
                if (
                    _ASSERTION.match(text)
                    and text not in removed
                    and len(text) <= _MAX_ASSERTION
                    and balanced(text)
                    and not continued
                    and (_MATCHER.search(text) or not _NEEDS_MATCHER.match(text))
                ):
                    found.setdefault(text, Assertion(diff.path, text))
    return tuple(found.values())[:_MAX_ASSERTIONS]


def balanced(text: str) -> bool:
    """Whether every bracket the text opens it closes (a check continued on the next line,
    `….toBe(`, is cut before what it expects)."""
    return all(text.count(left) == text.count(right) for left, right in ("()", "[]", "{}"))
