"""Facts about a PR that need no model: its category, breaking signals, what its diff does.

`compute_facts` measures them from the title, the message and the diff alone (the options and
TODOs a diff adds are read here); the rubric weighs them. The modules, each importing only
those above it:

- `titles`: what the title declares, by its convention (conventional commits, gitmoji, …);
- `lexing`: each line of a hunk as blank, prose or code, by the file's comment style;
- `stats`: each file's changed lines, version bumps and typo fixes (`FileStats`);
- `definitions`: public definitions added or removed, by each language's visibility rule;
- `breaking`: why the PR may break its users, and whether its API or its environment;
- `categories`: what the diff does (`DiffProfile`) and the PR's category;
- `edits`: code edited in place and checks the tests add, quoted from the diff (`LineEdit`,
  `Assertion`);
- `account`: what the change's description says beyond its title, quoted from the message.

Beyond the diff, read by git in the pipeline: `echoes` (the repository's lines that bear on
the quoted edits) and `origin` (the earlier PR whose lines this one removes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from prsum.digest import hunks
from prsum.facts.account import stated_account
from prsum.facts.breaking import detect_breaking
from prsum.facts.categories import categorize, profile
from prsum.facts.edits import added_assertions, line_edits
from prsum.facts.stats import MAX_LINES_PER_FILE, all_stats
from prsum.facts.titles import without_convention
from prsum.filekinds import file_kind, is_generated
from prsum.types import Facts, FileDiff, PullRequest

__all__ = ["compute_facts", "without_convention"]

_SPACE = re.compile(r"\s+")
_MODE_CHANGE = re.compile(r"^(?:old|new) mode ", re.MULTILINE)
# Files whose indentation is syntax: a whitespace change there may change what they mean.
_INDENTED = re.compile(
    r"\.(?:py|pyi|pyx|ya?ml|coffee|nim|haml|slim|pug|sass|styl)$|(?:^|/)(?:GNU)?[Mm]akefile$"
)
_TODO = re.compile(r"\b(TODO|FIXME|XXX|HACK)\b")
_NEW_OPTION = re.compile(r"""["'](--[a-z][a-z0-9-]+)["']""")
_NEW_ENV_VAR = re.compile(
    r"""(?:environ(?:\.get)?|getenv|Getenv|env::var)\s*[(\[]\s*["']([A-Z][A-Z0-9_]{2,})["']"""
)
_NEW_CONFIG_KEY = re.compile(r"^([a-z][a-z0-9_-]*)\s*=")
# A Rust clap field declared `#[arg(long)]` (or `#[clap(long)]`) right above `pub name: T`.
_CLAP_LONG = re.compile(r"#\[(?:arg|clap)\([^\]]*\blong\b(?!\s*=)")
_RUST_FIELD = re.compile(r"^\s*pub\s+([a-z][a-z0-9_]*)\s*:")


def _lines(diffs: Iterable[FileDiff], sign: str) -> Iterator[tuple[str, str]]:
    """(path, text) of the lines a diff adds ("+") or removes ("-"): the first lines of each
    file only, since facts about a huge (usually generated) file show in its first lines."""
    for diff in diffs:
        for line in diff.patch.splitlines()[:MAX_LINES_PER_FILE]:
            if line.startswith(sign) and not line.startswith(sign * 3):
                yield diff.path, line[1:]


def _new_options(added: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    found: list[str] = []
    clap_pending = False
    for path, text in added:
        kind = file_kind(path)
        if kind == "source":
            found.extend(match.group(1) for match in _NEW_OPTION.finditer(text))
            found.extend(match.group(1) for match in _NEW_ENV_VAR.finditer(text))
            if _CLAP_LONG.search(text):
                clap_pending = True
                continue
            field_match = _RUST_FIELD.match(text) if clap_pending else None
            if field_match:
                found.append("--" + field_match.group(1).replace("_", "-"))
            if text.strip() and not text.strip().startswith(("#[", "///", "//")):
                clap_pending = False
        elif path.endswith(".toml") and (match := _NEW_CONFIG_KEY.match(text)):
            found.append(match.group(1))
    return tuple(dict.fromkeys(found))


def whitespace_only(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> bool:
    """Whether the PR changes only whitespace that means nothing: it edits files in place (no
    mode changed), and each hunk's old and new sides hold the same text, spaces and line
    breaks aside; where indentation is syntax (Python, YAML, Makefiles), the same lines with
    the same indentation, blank lines aside."""
    if not diffs or any(change.status != "M" for change in pr.files):
        return False
    for diff in diffs:
        found = hunks(diff.patch)
        if not found or _MODE_CHANGE.search(diff.patch.split("\n@@", 1)[0]):
            return False
        indented = _INDENTED.search(diff.path) is not None
        for hunk in found:
            old = [line[1:] for line in hunk if line[:1] in (" ", "-")]
            new = [line[1:] for line in hunk if line[:1] in (" ", "+")]
            if _unspaced(old, indented) != _unspaced(new, indented):
                return False
    return True


def _unspaced(lines: list[str], indented: bool) -> str | list[tuple[str, str]]:
    """Lines as whitespace that means nothing leaves them: their text without spaces, and
    where indentation is syntax, each non-blank line's indentation kept."""
    if indented:
        return [
            (line[: len(line) - len(line.lstrip())], _SPACE.sub("", line))
            for line in lines
            if line.strip()
        ]
    return _SPACE.sub("", "".join(lines))


def compute_facts(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> Facts:
    kinds = [file_kind(change.path) for change in pr.files]
    stats = all_stats(pr, diffs)
    measured = profile(pr, diffs, stats)
    added = list(_lines(diffs, "+"))
    todos = tuple(
        dict.fromkeys(f"{path}: {text.strip()[:120]}" for path, text in added if _TODO.search(text))
    )
    options = _new_options(added)
    source_lines = sum(
        change.added + change.deleted
        for change, kind in zip(pr.files, kinds, strict=True)
        if kind == "source"
    )
    breaking, scope = detect_breaking(pr, stats)
    return Facts(
        category=categorize(pr, measured),
        breaking=breaking,
        tests_touched=any(kind == "test" for kind in kinds),
        docs_only=bool(kinds) and all(kind == "docs" for kind in kinds),
        whitespace_only=whitespace_only(pr, diffs),
        generated_or_vendored=tuple(
            change.path
            for change, kind in zip(pr.files, kinds, strict=True)
            if kind in ("lock", "vendored") or is_generated(change.path)
        ),
        todos_added=todos[:10],
        new_options=options[:10],
        files_changed=len(pr.files),
        lines_added=pr.added,
        lines_deleted=pr.deleted,
        source_lines_changed=source_lines,
        logic_lines=measured.logic_lines,
        logic_files=measured.logic_files,
        new_modules=measured.new_modules[:10],
        new_definitions=measured.new_definitions[:10],
        tricky=measured.tricky,
        branches=measured.branches,
        test_lines_added=measured.test_lines_added,
        ci_lines=measured.ci_lines,
        config_lines=measured.config_lines,
        test_lines=measured.test_lines,
        new_module_lines=measured.new_module_lines,
        mechanical=measured.mechanical,
        breaking_scope=scope,
        edits=line_edits(pr, diffs),
        assertions=added_assertions(diffs),
        account=_account(pr, kinds),
    )


def _account(pr: PullRequest, kinds: Sequence[str]) -> str:
    """What the description says beyond the title, unless the PR changes only tests: a
    tests-only diff changes no behaviour, so a description that speaks of a fix is about code
    another PR changed (the dev half's r15: "Fixes a GRPO crash … now returns a proper
    `torch.device`" over a test added after the fix, 4 claims judged false)."""
    if kinds and all(kind == "test" for kind in kinds):
        return ""
    return stated_account(pr.title, _description(pr))


def _description(pr: PullRequest) -> str:
    """What the author wrote of the PR beyond its title: the forge's description where one was
    carried in, else the message less its subject."""
    if pr.meta is not None and pr.meta.body:
        return pr.meta.body
    return pr.message.partition("\n")[2]
