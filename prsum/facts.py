"""Facts about a PR that need no model: category, breaking signals, tests, TODOs, new options."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from prsum.digest import definition_name
from prsum.filekinds import file_kind
from prsum.types import Breaking, Category, Facts, FileDiff, PullRequest

_BREAKING_MARKERS = re.compile(r"BREAKING[ -]CHANGE|💥|^\w+(\([^)]*\))?!:", re.MULTILINE)
_MAX_LINES_PER_FILE = 20_000
_TODO = re.compile(r"\b(TODO|FIXME|XXX|HACK)\b")
_NEW_OPTION = re.compile(r"""["'](--[a-z][a-z0-9-]+)["']""")
_NEW_ENV_VAR = re.compile(
    r"""(?:environ(?:\.get)?|getenv|Getenv|env::var)\s*[(\[]\s*["']([A-Z][A-Z0-9_]{2,})["']"""
)
_NEW_CONFIG_KEY = re.compile(r"^([a-z][a-z0-9_-]*)\s*=")
_VERSION_TITLE = re.compile(r"(release|version)\s+v?\d+\.\d+", re.IGNORECASE)
_DEPS_TITLE = re.compile(r"^(\W+\s*)?(bump|upgrade|update)\b.*\b(to|from)\b.*\d", re.IGNORECASE)
_DEPS_EMOJI = ("⬆", "⬇", "📌", "➕", "➖")

# Title words and gitmoji that name a category, checked in this order.
_TITLE_CATEGORIES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    ("revert", re.compile(r"^(⏪\s*)?revert\b", re.IGNORECASE)),
    ("fix", re.compile(r"🐛|🚑|\b(fix(es|ed)?|bug|crash|regression|correct)\b", re.IGNORECASE)),
    ("perf", re.compile(r"⚡|\b(perf|optimi[sz]e|faster|speed)\b", re.IGNORECASE)),
    (
        "refactor",
        re.compile(r"♻|🎨|\b(refactor|streamline|clean ?up|simplif(y|ies))\b", re.IGNORECASE),
    ),
    (
        "feature",
        re.compile(r"✨|💥|\b(add|adds|added|new|support|introduce|allow|enable)\b", re.IGNORECASE),
    ),
)


def categorize(pr: PullRequest, kinds: Sequence[str]) -> Category:
    """The PR's category from its title, author and the kinds of files it touches."""
    title = pr.title
    bot = any(author.endswith("[bot]") for author in pr.authors[:1])
    if title.lower().startswith("revert") or title.startswith("⏪"):
        return "revert"
    if _VERSION_TITLE.search(title) or title.startswith("🔖"):
        return "release"
    if kinds and all(kind == "lock" for kind in kinds):
        return "deps"
    if (
        title.startswith(_DEPS_EMOJI)
        or _DEPS_TITLE.search(title)
        or (bot and "bump" in title.lower())
    ):
        return "deps"
    if kinds and all(kind == "ci" for kind in kinds):
        return "ci"
    if kinds and all(kind == "docs" for kind in kinds):
        return "docs"
    if kinds and all(kind == "test" for kind in kinds):
        return "test"
    for category, pattern in _TITLE_CATEGORIES:
        if pattern.search(title):
            return category
    if title.startswith(("📝", "✏")):
        return "docs"
    if title.startswith("👷"):
        return "ci"
    return "chore"


_PY_SIGNATURE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z]\w*)\s*\((.*)")
_DEFAULT = re.compile(r"(\w+)\s*(?::[^=,]+)?=\s*([^,)]+)")


def _lines(diffs: Iterable[FileDiff], sign: str) -> Iterable[tuple[str, str]]:
    """(path, text) of the lines a diff adds ("+") or removes ("-"): the first lines of each
    file only, since facts about a huge (usually generated) file show in its first lines."""
    for diff in diffs:
        for line in diff.patch.splitlines()[:_MAX_LINES_PER_FILE]:
            if line.startswith(sign) and not line.startswith(sign * 3):
                yield diff.path, line[1:]


def breaking_signal(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> Breaking:
    """Why the PR may break its users: a marker in the message, a public definition removed
    from the source (and defined nowhere in the PR's additions), or a changed default.
    """
    match = _BREAKING_MARKERS.search(pr.message) or _BREAKING_MARKERS.search(pr.title)
    if match:
        return Breaking(True, f"marked {match.group(0).strip()!r} in the message")
    source = [diff for diff in diffs if file_kind(diff.path) == "source"]
    removed = {definition_name(text, path) for path, text in _lines(source, "-")}
    added = {definition_name(text, path) for path, text in _lines(diffs, "+")}
    gone = sorted(name for name in removed - added if name and not name.startswith("_"))
    # A PR that adds or renames files may have moved the definition there, out of sight of
    # the diff (git reports a copy, not the lines): only a PR that adds no file can tell.
    if gone and not any(change.status in ("A", "R") for change in pr.files):
        return Breaking(True, f"public definition removed: {', '.join(gone[:3])}")
    old_defaults = _defaults(_lines(source, "-"))
    for key, value in _defaults(_lines(source, "+")).items():
        if key in old_defaults and old_defaults[key] != value:
            return Breaking(
                True, f"default changed: {key[0]}({key[1]}={old_defaults[key]} -> {value})"
            )
    return Breaking(False)


def _defaults(lines: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Keyword defaults of public Python functions on these lines, by (function, parameter)."""
    found = {}
    for _, text in lines:
        signature = _PY_SIGNATURE.match(text)
        if signature and not signature.group(1).startswith("_"):
            for parameter, value in _DEFAULT.findall(signature.group(2)):
                found[(signature.group(1), parameter)] = value.strip()
    return found


def compute_facts(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> Facts:
    kinds = [file_kind(change.path) for change in pr.files]
    added = list(_lines(diffs, "+"))
    todos = tuple(
        dict.fromkeys(f"{path}: {text.strip()[:120]}" for path, text in added if _TODO.search(text))
    )
    options = tuple(
        dict.fromkeys(
            [
                *(
                    match.group(1)
                    for path, text in added
                    if file_kind(path) == "source"
                    for match in _NEW_OPTION.finditer(text)
                ),
                *(
                    match.group(1)
                    for path, text in added
                    if file_kind(path) == "source"
                    for match in _NEW_ENV_VAR.finditer(text)
                ),
                *(
                    match.group(1)
                    for path, text in added
                    if path.endswith(".toml") and (match := _NEW_CONFIG_KEY.match(text))
                ),
            ]
        )
    )
    source_lines = sum(
        change.added + change.deleted
        for change, kind in zip(pr.files, kinds, strict=True)
        if kind == "source"
    )
    return Facts(
        category=categorize(pr, kinds),
        breaking=breaking_signal(pr, diffs),
        tests_touched=any(kind == "test" for kind in kinds),
        docs_only=bool(kinds) and all(kind == "docs" for kind in kinds),
        generated_or_vendored=tuple(
            change.path
            for change, kind in zip(pr.files, kinds, strict=True)
            if kind in ("lock", "vendored")
        ),
        todos_added=todos[:10],
        new_options=options[:10],
        files_changed=len(pr.files),
        lines_added=pr.added,
        lines_deleted=pr.deleted,
        source_lines_changed=source_lines,
    )
