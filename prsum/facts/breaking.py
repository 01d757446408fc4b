"""Why a PR may break its users: a marker (in the title, or a `BREAKING CHANGE:` footer), a
public definition removed (and defined nowhere in the PR's additions), a changed default, a
raised minimum version of the language or toolchain, a dropped platform."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from prsum.facts.definitions import defined_names, public_definitions
from prsum.facts.stats import FileStats
from prsum.facts.titles import read_title
from prsum.filekinds import is_auxiliary, is_manifest
from prsum.types import Breaking, PullRequest

_BREAKING_FOOTER = re.compile(r"^(BREAKING[ -]CHANGES?)\s*:", re.MULTILINE)
_BANG_LINE = re.compile(r"^\s*(?:[-*]\s+)?([a-z]+(?:\([^)]*\))?!):", re.MULTILINE)
_PY_SIGNATURE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z]\w*)\s*\((.*)")
_DEFAULT = re.compile(r"(\w+)\s*(?::[^=,]+)?=\s*([^,)]+)")
# Minimum versions a manifest declares: (pattern, what it names).
_MINIMUMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s*rust-version\s*=\s*[\"']([\d.]+)"), "minimum Rust version"),
    (re.compile(r"^\s*requires-python\s*=\s*[\"']\s*>=?\s*([\d.]+)"), "minimum Python version"),
    (re.compile(r"python_requires\s*=\s*[\"']\s*>=?\s*([\d.]+)"), "minimum Python version"),
    (re.compile(r"^go\s+([\d.]+)\s*$"), "minimum Go version"),
    (re.compile(r"^\s*\"node\"\s*:\s*\"\s*>=?\s*([\d.]+)"), "minimum Node version"),
    (re.compile(r"^\s*minSdk(?:Version)?\s*[= ]\s*(\d+)"), "minimum SDK"),
    (re.compile(r"^\s*cmake_minimum_required\s*\(\s*VERSION\s+([\d.]+)", re.I), "minimum CMake"),
)
_PLATFORM_TARGET = re.compile(
    r"\b((?:x86_64|i686|i586|aarch64|arm|armv7|powerpc64le|s390x|riscv64gc)(?:-[a-z0-9_]+){2,3})"
    r"|Programming Language :: Python :: (\d\.\d+)\b|Operating System :: ([\w /]+)"
)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _raised_minimum(stats: Sequence[FileStats]) -> str | None:
    for item in stats:
        if item.kind not in ("config", "source") or not (
            is_manifest(item.path) or item.path.endswith(("CMakeLists.txt", ".gradle", ".kts"))
        ):
            continue
        for pattern, what in _MINIMUMS:
            old = [m.group(1) for line in item.code_removed if (m := pattern.search(line))]
            new = [m.group(1) for line in item.code_added if (m := pattern.search(line))]
            if old and new and _version_tuple(new[0]) > _version_tuple(old[0]):
                return f"{what} raised: {old[0]} -> {new[0]} in {item.path}"
    return None


def _dropped_platform(stats: Sequence[FileStats]) -> str | None:
    """A build target (a target triple in CI or a manifest) or a Python/OS classifier that the
    PR removes and does not add back."""
    removed: set[str] = set()
    added: set[str] = set()
    for item in stats:
        name = PurePosixPath(item.path).name
        if item.kind != "ci" and not (is_manifest(item.path) and "ocker" not in name):
            continue
        for lines, found in ((item.code_removed, removed), (item.code_added, added)):
            for line in lines:
                for match in _PLATFORM_TARGET.finditer(line):
                    if match.start() > 0 and line[match.start() - 1] in "/._-":
                        continue  # part of a path or a longer name, not a target
                    found.add(next(group for group in match.groups() if group).strip())
    gone = sorted(removed - added)
    return f"platform dropped: {', '.join(gone[:3])}" if gone else None


def _defaults(lines: Iterable[str]) -> dict[tuple[str, str], str]:
    """Keyword defaults of public Python functions on these lines, by (function, parameter)."""
    found = {}
    for text in lines:
        signature = _PY_SIGNATURE.match(text)
        if signature and not signature.group(1).startswith("_"):
            for parameter, value in _DEFAULT.findall(signature.group(2)):
                found[(signature.group(1), parameter)] = value.strip()
    return found


def detect_breaking(pr: PullRequest, stats: Sequence[FileStats]) -> tuple[Breaking, str]:
    """The breaking signal and its scope: `api` (code that calls it must change) or
    `environment` (where it runs must change)."""
    title = read_title(pr.title)
    if title.breaking:
        return Breaking(True, f"marked {title.breaking!r} in the title"), "api"
    body = pr.message.split("\n", 1)[1] if "\n" in pr.message else ""
    footer = _BREAKING_FOOTER.search(body) or _BANG_LINE.search(body)
    if footer:
        return Breaking(True, f"marked {footer.group(1)!r} in the message"), "api"
    removed = public_definitions(stats, added=False)
    added_names = defined_names(stats) | {name for _, name in public_definitions(stats, True)}
    gone = sorted({name for _, name in removed} - added_names)
    # A PR that adds or renames files may have moved the definition there, out of sight of
    # the diff (git reports a copy, not the lines): only a PR that adds no file can tell.
    if gone and not any(change.status in ("A", "R") for change in pr.files):
        return Breaking(True, f"public definition removed: {', '.join(gone[:3])}"), "api"
    source = [item for item in stats if item.kind == "source" and not is_auxiliary(item.path)]
    old_defaults = _defaults(line for item in source for line in item.code_removed)
    for key, value in _defaults(line for item in source for line in item.code_added).items():
        if key in old_defaults and old_defaults[key] != value:
            why = f"default changed: {key[0]}({key[1]}={old_defaults[key]} -> {value})"
            return Breaking(True, why), "api"
    raised = _raised_minimum(stats)
    if raised:
        return Breaking(True, raised), "environment"
    dropped = _dropped_platform(stats)
    if dropped:
        return Breaking(True, dropped), "environment"
    return Breaking(False), ""
