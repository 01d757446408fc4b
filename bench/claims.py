r"""What a sentence claims about the diff, checked against the diff: candidate claim checks,
kept here until they earn a place before cards are printed (on the coder's r3 sentences they
flag 1, a recall of 2%, so no card writer applies them).

The checks read structure, not meaning, so they only catch what structure can refute:

- a name said to be added (`adds \`x\``, `新增 \`x\``) that no added line of the diff holds,
  nor a file the PR adds, nor a definition the parser found added;
- a name said to be removed (`removes \`x\``, `删除 \`x\``) that no removed line holds, nor a
  file the PR deletes, nor a definition the parser found removed or renamed away;
- a change "from `a` to `b`" (`从 \`a\` 改为 \`b\``, `\`a\` → \`b\``, `renames \`a\` to \`b\``)
  whose `a` no removed line holds or whose `b` no added line holds.

Measured on the claim-level review's labelled sentences by bench/checks.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prsum.types import FileDiff, Language, PullRequest

# What may stand between a verb and the name it is about: "adds a new helper `x`".
_FILLER_EN = (
    r"(?:(?:a|an|the|new|public|private|helper|function|method|class|option|flag|field|"
    r"key|test|tests|file|constant|type|struct|parameter|argument|call|calls|to|of)\s+){0,3}"
)
_FILLER_ZH = r"(?:了)?(?:一个|一项|新的|新|名为|对|的)?\s*"
_NAME = r"`([^`\n]+)`"
_ADDS: dict[Language, re.Pattern[str]] = {
    "en": re.compile(rf"\b(?:adds|added|adding|add|introduces|introduced|introducing)\s+{_FILLER_EN}{_NAME}", re.I),
    "zh": re.compile(rf"(?:新增|添加|增加|加入|引入|加了|新加){_FILLER_ZH}{_NAME}"),
}  # fmt: skip
_REMOVES: dict[Language, re.Pattern[str]] = {
    "en": re.compile(rf"\b(?:removes|removed|removing|remove|deletes|deleted|deleting|drops|dropped|dropping)\s+{_FILLER_EN}{_NAME}", re.I),
    "zh": re.compile(rf"(?:删除|删去|删掉|移除|去掉|去除){_FILLER_ZH}{_NAME}"),
}  # fmt: skip
_CHANGES: dict[Language, tuple[re.Pattern[str], ...]] = {
    "en": (
        re.compile(rf"\bfrom\s+{_NAME}\s+to\s+{_NAME}", re.I),
        re.compile(rf"\brenames?\s+{_FILLER_EN}{_NAME}\s+(?:to|as|into)\s+{_NAME}", re.I),
        re.compile(rf"{_NAME}\s*(?:→|->|=>)\s*{_NAME}"),
    ),
    "zh": (
        re.compile(
            rf"(?:从|由)\s*{_NAME}\s*(?:改为|改成|变为|变成|换成|替换为|升到|升级到|升至|改到|到)\s*{_NAME}"
        ),
        re.compile(rf"(?:把|将)\s*{_NAME}\s*(?:重命名为|改名为|改为|改成|换成|替换为)\s*{_NAME}"),
        re.compile(rf"{_NAME}\s*(?:→|->|=>)\s*{_NAME}"),
    ),
}


@dataclass(frozen=True)
class DiffSides:
    """The two sides of a PR's diff, for checking what a sentence says changed."""

    added: str  # every added line's text
    removed: str  # every removed line's text
    new_paths: frozenset[str]
    deleted_paths: frozenset[str]
    added_names: frozenset[str]  # definitions the parser found added (simple and qualified)
    removed_names: frozenset[str]  # found removed, or renamed away from

    @classmethod
    def of(cls, pr: PullRequest, diffs: tuple[FileDiff, ...]) -> DiffSides:
        added: list[str] = []
        removed: list[str] = []
        for diff in diffs:
            for line in diff.patch.splitlines():
                if line.startswith("+") and not line.startswith("+++"):
                    added.append(line[1:])
                elif line.startswith("-") and not line.startswith("---"):
                    removed.append(line[1:])
        born: set[str] = set()
        gone: set[str] = set()
        for diff in diffs:
            for definition in diff.parsed.definitions if diff.parsed else ():
                names = {definition.name, definition.qualified}
                if definition.status == "added":
                    born |= names
                elif definition.status == "removed":
                    gone |= names
                elif definition.status == "renamed":
                    born |= names
                    gone |= {definition.old_name, definition.old_qualified}
        return cls(
            added="\n".join(added),
            removed="\n".join(removed),
            new_paths=frozenset(c.path for c in pr.files if c.status == "A"),
            deleted_paths=frozenset(c.path for c in pr.files if c.status == "D"),
            added_names=frozenset(born - {""}),
            removed_names=frozenset(gone - {""}),
        )

    def shows_added(self, name: str) -> bool:
        core = name.strip().rstrip("()")
        return bool(core) and (
            core in self.added or name in self.new_paths or core in self.added_names
        )

    def shows_removed(self, name: str) -> bool:
        core = name.strip().rstrip("()")
        return bool(core) and (
            core in self.removed or name in self.deleted_paths or core in self.removed_names
        )


def contradiction(sentence: str, lang: Language, sides: DiffSides) -> str | None:
    """What the diff contradicts in `sentence` (the rule's name), or None."""
    for match in _ADDS[lang].finditer(sentence):
        if not sides.shows_added(match.group(1)):
            return "claims.added-not-added"
    for match in _REMOVES[lang].finditer(sentence):
        if not sides.shows_removed(match.group(1)):
            return "claims.removed-not-removed"
    for pattern in _CHANGES[lang]:
        for match in pattern.finditer(sentence):
            before, after = match.group(1), match.group(2)
            if not (sides.shows_removed(before) and sides.shows_added(after)):
                return "claims.change-not-in-diff"
    return None
