"""What a PR's diff does, measured, and the category it gets from its title and its diff.

The title is the author's word and the diff is what happened; where they disagree about
whether code changed at all (a `feat` that only adds docs, a `fix` that only strips trailing
whitespace), the diff wins. Diff-derived rules, for titles that name nothing or mislead:

| the diff                                                        | category |
| --------------------------------------------------------------- | -------- |
| docs only, or docs plus source changes only in comments/docstrings | docs  |
| tests only                                                      | test     |
| CI files (and no program source)                                | ci       |
| only locks, or manifests/locks whose changed lines are versions | deps     |
| the project's own version (+ changelog, locks)                  | release  |
| only whitespace in code                                         | chore    |
| a typo fixed in a code string (user-visible text)               | fix      |
| new public definitions (by the language's visibility rule)       | feature  |
| a changelog entry under Added/Features or Fixed/Bugfixes        | feature / fix |
| only removed code                                               | refactor |
| existing code changed, tests added, nothing new defined         | fix      |
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from prsum.facts.definitions import public_definitions
from prsum.facts.stats import FileStats, version_change
from prsum.facts.titles import DEPS_TITLE, read_title, words_category
from prsum.filekinds import (
    FileKind,
    file_kind,
    is_auxiliary,
    is_changelog,
    is_generated,
    is_manifest,
)
from prsum.types import Category, FileDiff, PullRequest

_CHANGELOG_SECTION = re.compile(r"^\s*(#{1,6}|\*\*)\s*(?P<title>[^#*]+?)\s*(\*\*)?\s*$")
_FEATURE_SECTIONS = re.compile(r"\b(added|features?|new|enhancements?)\b", re.IGNORECASE)
_FIX_SECTIONS = re.compile(r"\b(fixed|fix(es)?|bug ?fix(es)?|bugs)\b", re.IGNORECASE)
OWN_VERSION = re.compile(
    r"^(?:version\s*=\s*[\"'][^\"']+[\"']|\s{0,2}\"version\"\s*:\s*\"[^\"]+\""
    r"|\s*__version__\s*=|\s*(?:const\s+)?[Vv]ersion\s*(?::?=|=)\s*\"v?\d)"
)
VERSION_FILE = re.compile(r"(^|/)(VERSION|version\.txt|_?version\.py|version\.go|version\.rs)$")
# Code that makes a reader slow down, by what it asks of them.
_TRICKY: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "concurrency",
        re.compile(
            r"\b(async|await|threads?|threading|Thread|[Ll]ock|[Mm]utex|RwLock|[Ss]emaphore"
            r"|[Aa]tomic\w*|goroutines?|chan|WaitGroup|sync\.\w+|Promise|Condvar|spawn"
            r"|[Ee]xecutor|[Bb]arrier|all_reduce|all_gather|broadcast|dist\.\w+|ray\.\w+)\b"
        ),
    ),
    (
        "ownership",
        re.compile(
            r"\b(subarray|ArrayBuffer|[Bb]uffers?|Arc|Rc|RefCell|unsafe|weakref|memoryview"
            r"|pin_memory|offload\w*|\w+_to_(?:cpu|gpu|device)|borrow\w*|ptr)\b|&mut\b|'static\b"
        ),
    ),
    (
        "lifecycle",
        re.compile(
            r"\b(defer|Drop|finally|__del__|__enter__|__exit__|close|dispose|shutdown|teardown"
            r"|cancel\w*|Cancel\w*|context\.Context|ctx\.Done|timeouts?|[Tt]imeout|atexit)\b"
        ),
    ),
)
_BRANCH = re.compile(
    r"^\s*(?:\}\s*)?(?:if|elif|else|for|while|match|switch|case|catch|except|try|loop|select)\b"
    r"|\?\s*[^:]+:|&&|\|\|"
)


@dataclass(frozen=True)
class DiffProfile:
    """What a PR's diff does, measured: the facts the category and the rubric build on."""

    kinds: tuple[FileKind, ...]
    logic_lines: int  # code lines of the product's source: not comments, formatting, versions
    logic_files: int
    new_module_lines: int  # of logic_lines, those in files the PR adds
    logic_added: int  # product code lines added (0 with logic_lines: the PR only removes code)
    new_modules: tuple[str, ...]
    new_definitions: tuple[str, ...]
    removed_definitions: tuple[str, ...]
    tricky: tuple[str, ...]
    branches: int
    test_lines: int  # test code lines changed
    test_lines_added: int
    ci_lines: int  # CI lines added, not counting version bumps
    config_lines: int  # build/tool configuration lines changed, not counting version bumps
    mechanical: str
    changelog: Category | None  # the section a changelog entry was added under
    only_versions: bool  # every changed line of manifests/locks/CI is a version edit
    own_version: bool  # the project's own version changed, and no other code
    prose_only_source: bool  # source/test files changed only in comments or docstrings


def _changelog_section(stats: Sequence[FileStats], diffs: tuple[FileDiff, ...]) -> Category | None:
    """The kind of the section (Added / Fixed …) a changelog entry was added under."""
    for diff in diffs:
        if not is_changelog(diff.path):
            continue
        section: str | None = None
        for line in diff.patch.splitlines():
            if line.startswith("@@"):
                section = None
                continue
            heading = _CHANGELOG_SECTION.match(line[1:]) if line[:1] in (" ", "-", "+") else None
            if heading:
                section = heading.group("title")
                continue
            if line.startswith("+") and not line.startswith("+++") and line[1:].strip():
                if section and _FIX_SECTIONS.search(section):
                    return "fix"
                if section and _FEATURE_SECTIONS.search(section):
                    return "feature"
    return None


def _mechanical(pr: PullRequest, stats: Sequence[FileStats]) -> str:
    """Why no line of the PR needs reading, if none does."""
    program = [item for item in stats if item.kind in ("source", "test")]
    code_files = [item for item in program if item.code_lines]
    if code_files and all(item.whitespace_only for item in code_files):
        return "whitespace"
    if code_files and all(
        item.pairs
        and item.typo_pairs() == len(item.pairs)
        and len(item.code_added) == len(item.code_removed) == len(item.pairs)
        for item in code_files
    ):
        return "typo"
    if program and not code_files:
        return "comments" if any(item.prose_lines for item in program) else "whitespace"
    if pr.files and all(
        change.status == "R" and change.added == change.deleted == 0 for change in pr.files
    ):
        return "rename"
    if pr.files and all(
        is_generated(change.path) or file_kind(change.path) in ("lock", "vendored")
        for change in pr.files
    ):
        return "generated"
    return ""


def _own_version_only(stats: Sequence[FileStats]) -> bool:
    """The project's own version changed (a manifest's `version`, `__version__`, a VERSION
    file), and no other code line of a manifest, config or source file."""
    found = False
    for item in stats:
        if item.kind in ("docs", "lock") or not item.code_lines:
            continue
        if item.kind not in ("config", "source") and not is_manifest(item.path):
            return False
        own = sum(
            1 for old, new in item.pairs if OWN_VERSION.match(old) and version_change(old, new)
        )
        if own * 2 != item.code_lines and not VERSION_FILE.search(item.path):
            return False
        found = found or own > 0 or bool(VERSION_FILE.search(item.path))
    return found


def profile(
    pr: PullRequest, diffs: tuple[FileDiff, ...], stats: Sequence[FileStats]
) -> DiffProfile:
    kinds = tuple(file_kind(change.path) for change in pr.files)
    core = [
        item
        for item in stats
        if item.kind == "source" and not is_auxiliary(item.path) and not is_generated(item.path)
    ]
    logic: dict[str, int] = {}
    tricky: Counter[str] = Counter()
    branches = new_module_lines = 0
    for item in core:
        if item.whitespace_only:
            continue
        lines = item.code_lines - 2 * (item.version_pairs() + item.typo_pairs())
        if lines > 0:
            logic[item.path] = lines
            new_module_lines += lines if item.status == "A" else 0
        for text in (*item.code_added, *item.code_removed):
            tricky.update(name for name, pattern in _TRICKY if pattern.search(text))
        branches += sum(1 for text in item.code_added if _BRANCH.search(text))
    added_defs = public_definitions(stats, added=True)
    removed_defs = public_definitions(stats, added=False)
    removed_names = {name for _, name in removed_defs}
    new_defs = tuple(dict.fromkeys(name for _, name in added_defs if name not in removed_names))
    added_names = {name for _, name in added_defs}
    new_modules = tuple(
        item.path for item in core if item.status == "A" and len(item.code_added) >= 20
    )
    program = [item for item in stats if item.kind in ("source", "test")]
    version_files = [
        item for item in stats if item.kind in ("config", "ci", "lock") or is_manifest(item.path)
    ]
    only_versions = bool(version_files) and all(
        item.kind == "lock" or (item.code_lines and item.version_pairs() * 2 == item.code_lines)
        for item in version_files
    )
    return DiffProfile(
        kinds=kinds,
        logic_lines=sum(logic.values()),
        logic_files=len(logic),
        new_module_lines=new_module_lines,
        logic_added=sum(len(item.code_added) for item in core if item.path in logic),
        new_modules=new_modules,
        new_definitions=new_defs,
        removed_definitions=tuple(sorted(removed_names - added_names)),
        tricky=tuple(name for name, _ in tricky.most_common()),
        branches=branches,
        test_lines=sum(item.code_lines for item in stats if item.kind == "test"),
        test_lines_added=sum(len(item.code_added) for item in stats if item.kind == "test"),
        ci_lines=sum(
            max(0, len(item.code_added) - item.version_pairs())
            for item in stats
            if item.kind == "ci"
        ),
        config_lines=sum(
            max(0, item.code_lines - 2 * item.version_pairs())
            for item in stats
            if item.kind == "config"
        ),
        mechanical=_mechanical(pr, stats),
        changelog=_changelog_section(stats, diffs),
        only_versions=only_versions,
        own_version=_own_version_only(stats),
        prose_only_source=bool(program)
        and not any(item.code_lines for item in program)
        and any(item.prose_lines for item in program),
    )


def _diff_category(pr: PullRequest, facts: DiffProfile) -> Category | None:
    """What the diff alone says the PR is, when it does not change the product's logic."""
    kinds = set(facts.kinds)
    if not kinds:
        return None
    if kinds <= {"docs"} or (kinds <= {"docs", "source", "test"} and facts.prose_only_source):
        return "docs"
    if facts.mechanical == "whitespace":
        return "chore"
    if kinds <= {"test"}:
        return "test"
    if kinds <= {"lock"}:
        return "deps"
    if (
        kinds <= {"source", "docs", "config", "lock"}
        and facts.own_version
        and not facts.logic_lines
    ):
        return "release"
    environment = kinds <= {"config", "lock", "docs", "ci"}
    if (
        environment
        and facts.only_versions
        and any(is_manifest(change.path) or file_kind(change.path) == "lock" for change in pr.files)
    ):
        return "deps"
    if "ci" in kinds and "source" not in kinds and facts.ci_lines + 2 >= facts.test_lines:
        return "ci"  # CI pipelines (with their config, docs, or a test touched along the way)
    return None


def _weak_diff_category(profile: DiffProfile) -> Category | None:
    """What the diff suggests when the title names nothing: new API, a changelog section,
    removals only, or a changed behaviour pinned by new tests."""
    if profile.mechanical == "typo":
        return "fix"  # a spelling fix in code strings: the program's output changes
    if profile.changelog is not None:
        return profile.changelog
    if profile.new_definitions or profile.new_modules:
        return "feature"
    if profile.logic_lines and not profile.logic_added:
        return "refactor"  # only removed code
    if profile.logic_lines and profile.test_lines_added:
        return "fix"
    return None


def categorize(pr: PullRequest, measured: DiffProfile) -> Category:
    """Revert and explicit bumps and releases first; then the diff where it shows that no
    product logic changed (it overrides a title claiming a feature or a fix); then the
    title's declared type, its words, and last what the diff suggests."""
    title = read_title(pr.title)
    if pr.kind == "revert" or title.category == "revert":
        return "revert"
    declared = title.category
    bot = any(author.endswith("[bot]") for author in pr.authors[:1])
    if declared is None and bot and "bump" in pr.title.lower():
        declared = "deps"
    if declared in ("release", "deps"):
        return declared
    environment = set(measured.kinds) <= {"config", "lock", "docs", "ci"}
    if environment and declared not in ("docs", "test") and DEPS_TITLE.search(title.description):
        return "deps"  # "fix: upgrade torch versions in the image", and no program changed
    derived = _diff_category(pr, measured)
    if derived is not None:
        if declared in ("chore", "docs", "test", "ci") and derived in ("docs", "test"):
            return declared  # "chore: fix a typo in the tests" stays a chore
        return derived
    if declared is not None:
        return declared
    return words_category(title.description) or _weak_diff_category(measured) or "chore"
