"""Untrusted text made inert for each output format.

Everything a card or a list shows comes from the repository (titles, messages, author names,
paths) or from a model that read it, so it may carry terminal escape sequences (clearing the
screen, setting the window title, OSC 8 links), bidirectional-override characters, raw HTML or
Markdown links. The terminal and Markdown renderers pass every such text through here; JSON
escapes control characters itself (see `json_dumps`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from prsum.spans import CODE_SPAN, code

# ESC-introduced sequences as a whole (CSI, OSC up to BEL or ST, and two-character escapes),
# so that no parameter text is left behind to be read as content.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, ESC[2J
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window title, OSC 8 hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"  # other two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x9c]*[\x07\x9c]?"  # their 8-bit (C1) forms
)
# What is left after the sequences: C0 controls but tab and newline, DEL, C1 controls, and the
# bidirectional overrides that make code read differently from how it runs.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Characters that make Markdown of plain text: all of them in history text; in prose, which
# keeps its code spans, the brackets of a link and what could open or escape a span.
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_PROSE_SPECIAL = re.compile(r"([\\`\[\]])")
_HTML_SPECIAL = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# A link target in history text is shown as code, never as a link a reader might follow.
_LINK = re.compile(
    r"(?i)\b(?:https?|ftp|file|javascript|data|vbscript|mailto):[^\s`<>]*|\bwww\.[^\s`<>]+"
)


def printable(text: str) -> str:
    """`text` without escape sequences; other control characters shown as `\\xNN` / `\\uNNNN`."""
    text = _ESCAPE_SEQUENCE.sub("", text)
    return _CONTROL.sub(_shown_escaped, text)


def _shown_escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """Printable text on one line: a title or a name cannot start a new Markdown block."""
    return " ".join(printable(text).split())


def md_inline(text: str) -> str:
    """History text (a title, a subject, an author name) as literal Markdown on one line."""
    return _md_plain(one_line(text), _INLINE_SPECIAL)


def md_prose(text: str, single_line: bool = False) -> str:
    """Model-written prose for Markdown: its `code spans` kept, HTML and links made inert."""
    text = one_line(text) if single_line else printable(text)
    pieces, last = [], 0
    for match in CODE_SPAN.finditer(text):
        pieces.append(_md_plain(text[last : match.start()], _PROSE_SPECIAL))
        pieces.append(match.group(0))
        last = match.end()
    pieces.append(_md_plain(text[last:], _PROSE_SPECIAL))
    return "".join(pieces)


def _md_plain(text: str, specials: re.Pattern[str]) -> str:
    links: list[str] = []

    def park(match: re.Match[str]) -> str:
        links.append(match.group(0))
        return f"\0{len(links) - 1}\0"

    text = _LINK.sub(park, text)
    text = specials.sub(r"\\\1", text)
    text = "".join(_HTML_SPECIAL.get(char, char) for char in text)
    return re.sub(r"\0(\d+)\0", lambda m: md_code(links[int(m.group(1))]), text)


def md_code(text: str) -> str:
    """A name or a path as a Markdown code span: shown literally, whatever it holds."""
    return code(one_line(text))


def json_dumps(document: Any, indent: int | None = None) -> str:
    """JSON with readable non-ASCII text, but every control character escaped: the encoder
    escapes C0 itself, not C1, which some terminals obey as escapes."""
    text = json.dumps(document, ensure_ascii=False, indent=indent)
    return re.sub(
        r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]", lambda m: f"\\u{ord(m.group()):04x}", text
    )
