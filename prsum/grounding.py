"""Hold a card to its PR: every path and code name it cites must occur in the diff or message."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prsum.spans import CODE_SPAN, code, span_code
from prsum.types import Facts, FileDiff, Precedent, PullRequest

_LONGEST_NAME = 120  # characters: a longer code span is a quote, not a name to hold
_BARE_PATH = re.compile(r"(?<![\w`/.-])((?:[\w.-]+/)+[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/`])")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w./:-]*")
_CALL = re.compile(r"([^()\s]+)\([^()]*\)")  # a call with its arguments: `name(x, y)`


@dataclass(frozen=True)
class Evidence:
    """Everything a card may cite: the PR's text and the names in it."""

    text: str
    paths: frozenset[str]
    names: tuple[str, ...]

    @classmethod
    def of(
        cls, pr: PullRequest, diffs: tuple[FileDiff, ...], facts: Facts | None = None
    ) -> Evidence:
        """The PR's title, message, paths and patches, the names of the definitions its
        changed lines are in (the parser's: a patch need not show them), and what `facts`
        quote of the repository beyond the diff: its lines (echoes, read at the PR's commit),
        the files that use what it changes, the title of the PR whose lines this one removes, the packages its lock files pin."""
        paths = {change.path for change in pr.files}
        paths |= {change.old_path for change in pr.files if change.old_path}
        definitions = " ".join(
            f"{change.old_name} {change.name} {change.old_qualified} {change.qualified}"
            for diff in diffs
            if diff.parsed is not None
            for change in diff.parsed.definitions
        )
        beyond: list[str] = []
        if facts is not None:
            beyond += [e.line if isinstance(e, Precedent) else e.path for e in facts.echoes]
            beyond += [f"{reach.name} {' '.join(reach.users)}" for reach in facts.reach]
            beyond += [facts.origin.title] if facts.origin else []
            if facts.release:
                beyond += [facts.release.title, *(item.title for item in facts.release.largest)]
            beyond += [change.name for change in facts.locks]
            beyond += [f"{c.key} {c.before} {c.after}" for c in facts.settings]
            beyond += [f"{edit.before} {edit.after}" for edit in facts.edits]  # a check joined
        text = "\n".join(
            [pr.title, pr.message, *paths, *(diff.patch for diff in diffs), definitions, *beyond]
        )
        names = tuple(sorted(set(_IDENTIFIER.findall(text)) | paths))
        return cls(text, frozenset(paths), names)

    def knows(self, name: str) -> bool:
        """Whether the PR contains `name`, as a path or in its text, the sentence's punctuation
        after it aside; a call (`name()`, `name(x)`) where the PR calls or defines `name`
        (`called`): "`x()`" said of a name the PR only mentions would call it a function."""
        core = name.strip().rstrip(".,;:")
        if not core:
            return False
        call = _CALL.fullmatch(core)
        return core in self.paths or core in self.text or bool(call and self.called(call.group(1)))

    def called(self, name: str) -> bool:
        """Whether the PR calls or defines `name`: `name(`, `name<…>(` (generics), `name = (`
        (an arrow function), or a definition keyword before it (`def reset`, `fn parse`)."""
        escaped = re.escape(name)
        return bool(
            re.search(
                rf"(?<!\w){escaped}\s*(?:\(|<|=\s*(?:async\s*)?\()"
                rf"|\b(?:def|fn|func|fun|function)\s+{escaped}\b",
                self.text,
            )
        )

    def full_path(self, name: str) -> str | None:
        """The path of the PR's one file that `name` is the bare file name of (`CICD.yml` for
        `.github/workflows/CICD.yml`), or None."""
        if "/" in name or name in self.paths:
            return None
        matches = [path for path in self.paths if path.rsplit("/", 1)[-1] == name]
        return matches[0] if len(matches) == 1 else None

    def nearest(self, name: str) -> str | None:
        """The one real name close enough to be what the model meant, if there is exactly one."""
        matches = difflib.get_close_matches(name, self.names, n=2, cutoff=0.88)
        if len(matches) == 1 or (
            matches and difflib.SequenceMatcher(None, name, matches[0]).ratio() >= 0.95
        ):
            return matches[0]
        return None


def ground_text(
    text: str,
    evidence: Evidence,
    report: Callable[[str, str], None] | None = None,
    verbatim: Sequence[str] = (),
) -> tuple[str, int]:
    """Repair or remove the names in `text` that the PR does not contain; count the removals.
    A file cited by its bare name gets its path, so that the reader can find it. `report(rule,
    name)` hears of each repair and removal ("path", "repaired", "removed"). The `verbatim`
    parts of `text` (a quote of the PR's description, checked against it already) are left
    exactly as they are."""
    quotes = [part for part in verbatim if part]
    if quotes:
        pattern = re.compile("|".join(map(re.escape, quotes)))
        parked, restore = _parked(text, pattern)
        grounded, removed = ground_text(parked, evidence, report)
        return restore(grounded), removed
    removed = 0

    def note(rule: str, name: str) -> None:
        if report is not None:
            report(rule, name)

    def fix_backticked(match: re.Match[str]) -> str:
        nonlocal removed
        name = span_code(match)
        if len(name) > _LONGEST_NAME:
            return match.group(0)
        if path := evidence.full_path(name):
            note("path", name)
            return code(path)
        if evidence.knows(name):
            return match.group(0)
        repaired = evidence.nearest(name)
        if repaired is not None:
            note("repaired", f"{name} -> {repaired}")
            return code(repaired)
        note("removed", name)
        removed += 1
        return ""

    def fix_bare_path(match: re.Match[str]) -> str:
        nonlocal removed
        path = match.group(1)
        if evidence.knows(path):
            return path
        repaired = evidence.nearest(path)
        if repaired is not None:
            note("repaired", f"{path} -> {repaired}")
            return repaired
        note("removed", path)
        removed += 1
        return ""

    text = CODE_SPAN.sub(fix_backticked, text)
    text = _BARE_PATH.sub(fix_bare_path, text)
    if removed:
        text = _tidy(text)
    return text, removed


def _tidy(text: str) -> str:
    """Clean the seams a removed name leaves: doubled spaces, empty brackets, stray separators;
    code spans as they are (a quoted `f()` keeps its brackets)."""
    parked, restore = _parked(text, CODE_SPAN)
    return restore(_tidy_prose(parked))


def _parked(text: str, pattern: re.Pattern[str]) -> tuple[str, Callable[[str], str]]:
    """`text` with what `pattern` matches set aside behind a mark no rule reads, and the
    function that puts it back."""
    # A private-use character the text does not hold (a quote set aside holds one already).
    mark = next((chr(code) for code in range(0xE000, 0xE100) if chr(code) not in text), "")
    if not mark:
        return text, lambda done: done
    parts: list[str] = []

    def park(match: re.Match[str]) -> str:
        parts.append(match.group(0))
        return f"{mark}{len(parts) - 1}{mark}"

    def restore(done: str) -> str:
        return re.sub(f"{mark}(\\d+){mark}", lambda match: parts[int(match.group(1))], done)

    return pattern.sub(park, text), restore


def _tidy_prose(text: str) -> str:
    text = re.sub(r"[（(]\s*[、,，]?\s*[)）]", "", text)
    text = re.sub(r"\s*[、,，]\s*(?=[、,，。.;；])", "", text)
    text = re.sub(r"(?<=[、,，])\s*[、,，]", "", text)
    text = re.sub(r"(?<=[\u3400-\u9fff，。、；：])[ \t]+(?=[\u3400-\u9fff])", "", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([，。、；：,.;:])", r"\1", text)
    return text.strip()


def cited_names(text: str) -> list[str]:
    """The names a text cites: backticked spans and bare paths."""
    spans = [span_code(match) for match in CODE_SPAN.finditer(text)]
    return [*(name for name in spans if len(name) <= _LONGEST_NAME), *_BARE_PATH.findall(text)]
