"""The author's own account of a change: the reason or effect its message (or its PR's
description, where a forge export gives one) states beyond the title.

A card quotes it as the author's words, never as ours: "the message says: “…”". It is often
the one place a reader learns why ("`get_torch_device()` returns a module, not a
`torch.device`"), which the diff cannot show. Only the body's first paragraph of prose counts:
template guidance, checklists and logs come later in a description, and a later paragraph is
as often a template's text the author left in as their own.
"""

from __future__ import annotations

import re

from prsum.digest import title_words

_MAX_ACCOUNT = 300  # characters: a sentence or two, quoted whole
_MAX_SENTENCES = 2
_MIN_WORDS = 5  # "as title", "Fixes #12" say nothing
_MIN_NEW_WORDS = 3  # words of substance the title lacks: less is the title said again
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r"^(?:```|~~~)")
# Lines that are not prose: headings, list and checklist items, tables, rules.
_NOT_PROSE = re.compile(r"^(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\||={3,}|-{3,}|\*{3,})")
_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*-[A-Za-z0-9-]*:\s|^[A-Z][a-z]+-by:\s")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)\s]*\)")
_URL = re.compile(r"\b(?:https?|ftp)://\S+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_WORD = re.compile(r"[A-Za-z]{2,}|[\u3040-\u30ff\u3400-\u9fff]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|(?<=[。！？])")
_REVERT = re.compile(r"^This reverts commit\b", re.IGNORECASE)


def stated_account(title: str, body: str) -> str:
    """The first paragraph of prose of `body` (the message less its subject, or a PR's
    description): its first sentences that say something ("as title." does not), whole, one
    or two; "" when there are none, the first is too long to quote, or they say little the
    title does not."""
    kept: list[str] = []
    for sentence in _SENTENCE_END.split(_first_paragraph(_COMMENT.sub("", body), title)):
        short = len(_WORD.findall(_URL.sub("", sentence))) < _MIN_WORDS
        if short and not kept:
            continue
        if short or len(kept) == _MAX_SENTENCES or len(" ".join([*kept, sentence])) > _MAX_ACCOUNT:
            break
        kept.append(sentence.strip())
    said = " ".join(kept)
    # A sentence that ends in a colon introduces what was not quoted (a log, a list).
    if not said or said.endswith(":") or _REVERT.match(said):
        return ""
    if len(_substance(said) - _substance(title)) < _MIN_NEW_WORDS:
        return ""
    return said


def _substance(text: str) -> frozenset[str]:
    """The words of a text that carry meaning: its longer Latin words, and the pairs of
    characters of its Chinese or Japanese (written without spaces)."""
    cjk = "".join(_CJK.findall(text))
    return title_words(text) | {cjk[i : i + 2] for i in range(len(cjk) - 1)}


def _first_paragraph(body: str, title: str) -> str:
    """The body's first run of prose lines (a quote's `>` marks taken off, a link shown as its
    text), the title said again on its own line not counted."""
    lines: list[str] = []
    fenced = False
    for line in body.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            if lines:
                break
            continue
        text = re.sub(r"^(?:>\s?)+", "", line.strip()).strip()
        indented = line.startswith(("    ", "\t"))  # Markdown's code block
        prose = (
            text
            and not (fenced or indented)
            and not _NOT_PROSE.match(text)
            and not _TRAILER.match(text)
            and text != title.strip()
        )
        if prose:
            lines.append(text)
        elif lines:
            break
    return _LINK.sub(r"\1", " ".join(lines))
