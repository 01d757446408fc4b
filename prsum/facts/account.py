"""What the change's own description says beyond its title: the reason or effect the message
(or the PR's description, where a forge export gives one) states.

A card quotes it as the description's words, never as ours: "The description says: “…”". It
is often the one place a reader learns why ("`get_torch_device()` will return a module …
instead of the expected `torch.device`"), which the diff cannot show. A quote is only worth
printing whole and as written, so this is strict: the body's first paragraph of prose only
(later ones are as often a template's text the author left in), ended by a blank line, its
first one or two sentences, each ended; otherwise nothing.
"""

from __future__ import annotations

import re

from prsum.digest import title_words
from prsum.history.messages import written_by_tools
from prsum.spans import CODE_SPAN, span_code

_MAX_ACCOUNT = 300  # characters: a sentence or two, quoted whole
_MAX_SENTENCES = 2
_MIN_WORDS = 5  # "as title.", "Fixes #12." say nothing
_MIN_NEW_WORDS = 3  # words of substance the title lacks: fewer is the title said again
_ENDED = (".", "!", "?", "。", "！", "？")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_QUOTE_MARKS = re.compile(r"^(?:>\s?)+")
_FENCE = re.compile(r"^(?:```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s")
# Lines that are not prose: headings (ATX, bold, a setext underline), list and checklist
# items, tables, rules, HTML (a screenshot's `<img>`).
_NOT_PROSE = re.compile(r"^(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\||={3,}|-{3,}|\*\*|__|<)")
_LINK = re.compile(r"!?\[([^\]]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")  # a URL may hold (…)
_URL = re.compile(r"\b(?:https?|ftp)://\S+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_CJK_END = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\u3000-\u303f\uff01-\uff0f”’」』]$")
_WORD = re.compile(r"[A-Za-z]{2,}|[\u3040-\u30ff\u3400-\u9fff]")
# A sentence ends at `.`, `!` or `?` and a space before a capital or a code span, or at a
# Chinese stop that no closing quote or bracket follows ("…返回“超时。”时").
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|(?<=[。！？])(?![”’」』）)\]])")
_ABBREVIATION = re.compile(
    r"(?:\b(?i:e\.g|i\.e|etc|vs|cf|approx|incl|mr|mrs|ms|dr|st|prof|jr|sr|no|fig)|\b[A-Z])\.$"
)
# A template's words to whoever fills it in, left in: "Please include a summary …".
_ADDRESSED = re.compile(r"^(?:Please|Thank(?:s| you))\b", re.IGNORECASE)


def stated_account(title: str, body: str) -> str:
    """The first one or two sentences of the first paragraph of prose of `body` (the message
    less its subject, or a PR's description); "" unless they are whole, say something the
    title does not, and can be quoted exactly (every code span as the body has it)."""
    sentences = _sentences(_first_paragraph(_COMMENT.sub("", body), title))
    kept: list[str] = []
    for sentence in sentences[:_MAX_SENTENCES]:
        if _short(sentence) or len(_joined([*kept, sentence])) > _MAX_ACCOUNT:
            break
        kept.append(sentence)
    said = _joined(kept)
    if not said.endswith(_ENDED) or _ADDRESSED.match(said) or not _quotable(said, body):
        return ""
    if len(_substance(said) - _substance(title)) < _MIN_NEW_WORDS:
        return ""
    return said


def _first_paragraph(body: str, title: str) -> str:
    """The body's first paragraph of prose (a quote's `>` marks taken off, a link shown as its
    text), before anything else but headings, the title said again and the lines tools write;
    "" when it does not end at a blank line, the body's end or a tool's line (a paragraph cut
    by a list, a fence or a heading's underline is not whole), or when a list, a fence or HTML
    comes first (prose after a squash's list of commits is a commit's, not the description's)."""
    lines: list[str] = []
    for line in [*body.splitlines(), ""]:
        text = _QUOTE_MARKS.sub("", line.strip()).strip()
        if not text or written_by_tools(text):
            if lines:
                return _LINK.sub(r"\1", _joined(lines))
            continue
        if not lines and (_HEADING.match(text) or text == title.strip()):
            continue
        indented = line.startswith((" ", "\t"))  # a list item's continuation, a code block
        if indented or _FENCE.match(text) or _NOT_PROSE.match(text):
            return ""
        lines.append(text)
    return ""


def _sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences: split after `.`, `!` or `?` and a space before a capital or a
    code span (not after `e.g.` or an initial), or after a Chinese full stop."""
    found: list[str] = []
    start = 0
    for boundary in _BOUNDARY.finditer(paragraph):
        if _ABBREVIATION.search(paragraph[start : boundary.start()]):
            continue
        found.append(paragraph[start : boundary.start()].strip())
        start = boundary.end()
    found.append(paragraph[start:].strip())
    return [sentence for sentence in found if sentence]


def _joined(pieces: list[str]) -> str:
    """Lines or sentences as one text: a space between them, none between Chinese ones."""
    text = ""
    for piece in pieces:
        tight = text and _CJK_END.search(text) and _CJK.match(piece)
        text = f"{text}{piece}" if tight or not text else f"{text} {piece}"
    return text


def _short(sentence: str) -> bool:
    return len(_WORD.findall(_URL.sub("", sentence))) < _MIN_WORDS


def _quotable(said: str, body: str) -> bool:
    """Whether a card can show `said` as the body has it: every backtick in a code span that
    the body holds as it is (one wrapped across lines does not), no backslash escapes."""
    spans = list(CODE_SPAN.finditer(said))
    return (
        "`" not in CODE_SPAN.sub("", said)
        and "\\" not in said
        and all(span_code(span) in body for span in spans)
    )


def _substance(text: str) -> frozenset[str]:
    """The words of a text that carry meaning: its longer Latin words, and the pairs of
    characters of its Chinese or Japanese (written without spaces)."""
    cjk = "".join(_CJK.findall(text))
    return title_words(text) | {cjk[i : i + 2] for i in range(len(cjk) - 1)}
