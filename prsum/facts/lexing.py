"""Each side (old or new) of a hunk, line by line: blank, prose (comments, docstrings) or
code, by the file's comment style."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from prsum.filekinds import file_kind

_HASH_COMMENT = {".py", ".pyi", ".sh", ".bash", ".zsh", ".rb", ".pl", ".r", ".jl", ".nim", ".ex"}
_SLASH_COMMENT = {
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".hh",
    ".m",
    ".mm",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".ts",
    ".tsx",
    ".mts",
    ".cts",
    ".go",
    ".rs",
    ".java",
    ".kt",
    ".kts",
    ".swift",
    ".cs",
    ".scala",
    ".php",
    ".dart",
    ".zig",
    ".proto",
    ".css",
    ".scss",
}
_DASH_COMMENT = {".lua", ".sql", ".hs", ".elm"}
TRIPLE_QUOTE = re.compile(r"\"\"\"|'''")
_DOCSTRING_START = re.compile(r"^[rRbBuUfF]{0,2}(\"\"\"|''')")


def comment_style(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _HASH_COMMENT or file_kind(path) in ("config", "ci"):
        return "#"
    if suffix in _SLASH_COMMENT:
        return "//"
    if suffix in _DASH_COMMENT:
        return "--"
    return ""


@dataclass
class Side:
    """Block-comment and docstring state of one side (old or new) of a hunk."""

    docstring: str = ""  # the open docstring's quote, while inside one
    string: str = ""  # the open triple-quoted string's quote (code, not prose)
    block: bool = False  # inside /* … */

    def role(self, text: str, style: str) -> str:
        """`blank`, `comment` (prose: comments, docstrings) or `code`; updates the state."""
        stripped = text.strip()
        if not stripped:
            return "blank"
        if style == "#" and self.docstring:
            if self.docstring in stripped:
                self.docstring = ""
            return "comment"
        if style == "#" and self.string:
            if self.string in stripped:
                self.string = ""
            return "code"
        if style == "//" and self.block:
            if "*/" in stripped:
                self.block = False
            return "comment"
        if style and stripped.startswith(style):
            return "comment"
        if style == "#":
            start = _DOCSTRING_START.match(stripped)
            quotes = TRIPLE_QUOTE.findall(stripped)
            if start:
                if len(quotes) % 2 == 1:
                    self.docstring = start.group(1)
                return "comment"
            if len(quotes) % 2 == 1:
                self.string = quotes[-1]
            return "code"
        if style == "//" and stripped.startswith("/*"):
            self.block = "*/" not in stripped[2:]
            return "comment"
        if style == "//" and stripped.startswith("*") and not stripped.startswith("*/"):
            return "comment"
        return "code"
