"""Markdown code spans: how prsum writes a piece of code into a sentence, and how it finds one.

A quoted line may hold backticks itself (a template literal, a shell substitution), so a span
is fenced by a run of backticks longer than any inside it, as CommonMark reads them.
"""

from __future__ import annotations

import re

# A run of backticks, the code, and a run of exactly as many (a longer or shorter run inside
# is part of the code): "`name`", "`` f(`x`) ``". A backslash before the run escapes it (it
# opens no span in Markdown, so what follows must not be taken for code); a span may go on
# over a line's end, as in Markdown.
CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def code(text: str) -> str:
    """`text` as a code span that shows it whole, backticks included."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def span_code(match: re.Match[str]) -> str:
    """The code a `CODE_SPAN` match shows: its text less the padding `code` adds."""
    text = match.group(2)
    if len(text) > 2 and text.startswith(" ") and text.endswith(" ") and text.strip():
        return text[1:-1]
    return text
