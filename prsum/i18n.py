"""User-facing strings only: the fixed words of prsum's outputs in each language (cards,
reports, release notes), as the renderers and card assembly show them.

Nothing here is shown to a model (the prompts are prsum.prompts). Two parts: the phrase
tables (`PHRASES`), and the sentences a card is built from when the words are ours, not the
model's (headline, verdict sentence, pointers, focus reasons, follow-ups, from facts). A new
language is one more entry here and one more frame file in prsum/prompts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prsum.digest import FileDigest
from prsum.facts import without_convention
from prsum.filekinds import is_changelog
from prsum.spans import code
from prsum.types import (
    Assertion,
    Category,
    Echo,
    Facts,
    FileChange,
    Focus,
    Language,
    LineEdit,
    LockChange,
    Origin,
    Precedent,
    PullRequest,
    Reach,
    Related,
    Release,
    SettingChange,
    Verdict,
)


@dataclass(frozen=True)
class Phrases:
    """One language's words. Templates take `str.format` fields named in their comments."""

    verdicts: dict[Verdict, str]  # the phrase a card's paragraph opens with
    minutes: str  # {phrase} {minutes}
    colon: str
    list_separator: str
    clause_separator: str
    sentence_joiner: str
    read_first: str
    lesson: str
    follow_up: str
    undoes: str  # {label}
    whitespace_only: str  # said of a PR whose files change only in whitespace
    interrupted: str
    bots_skipped: str  # {count}
    branch_sync: str  # {sha} {subject}
    failure: str  # {label} {message}
    coverage: str  # {total} {whole} {clipped} {left} {prompt} {context} {view}
    left_out: str  # {count}
    left_out_reason: str  # {reason} {count}
    left_out_reasons: str  # {reasons}
    views: dict[str, str]
    notes_title: str  # {span}
    note_entry: str  # {headline} {number} {who}
    direct_entry: str  # {sha} {subject} {author}
    bots_not_listed: str  # {count}
    sections: dict[str, str]
    contributors: str
    direct_commits: str
    branch_syncs: str
    nothing_to_highlight: str
    highlights_intro: str
    highlight_item: str  # {headline} {label}
    highlight_separator: str
    highlights_end: str


PHRASES: dict[Language, Phrases] = {
    "zh": Phrases(
        verdicts={"deep": "值得精读", "skim": "值得快速浏览", "skip": "不必精读代码细节"},
        minutes="{phrase}（约 {minutes} 分钟）",
        colon="：",
        list_separator="、",
        clause_separator="，",
        sentence_joiner="",
        read_first="先读",
        lesson="收获",
        follow_up="后续",
        undoes="撤销的是 {label}。",
        whitespace_only="它只改了空白：除空白外，各文件的内容都没有变。",
        interrupted="运行被中断，以上只是已完成的卡片。",
        bots_skipped="跳过 {count} 个机器人直接提交。",
        branch_sync="分支同步 {sha}：{subject}",
        failure="{label}：{message}",
        coverage=(
            "模型所见：{total} 个文件，完整 {whole}，截断 {clipped}，{left}；"
            "提示 {prompt} / {context} tokens（{view}）"
        ),
        left_out="略去 {count}",
        left_out_reason="{reason} {count}",
        left_out_reasons="（{reasons}）",
        views={"digest": "摘要视图", "diff": "差异视图"},
        notes_title="发布说明草稿：{span}",
        note_entry="- {headline}（{number}，{who}）",
        direct_entry="- {sha} {subject}（{author}）",
        bots_not_listed="- 另有 {count} 个机器人提交未列出",
        sections={
            "breaking": "破坏性变更",
            "features": "新功能",
            "fixes": "修复",
            "performance": "性能",
            "docs": "文档",
            "internal": "内部改动",
        },
        contributors="贡献者",
        direct_commits="直接提交",
        branch_syncs="分支同步",
        nothing_to_highlight="本次发布没有需要精读的改动。",
        highlights_intro="本次发布的重点：",
        highlight_item="{headline}（{label}）",
        highlight_separator="；",
        highlights_end="。",
    ),
    "en": Phrases(
        verdicts={
            "deep": "Worth reading closely",
            "skim": "Worth a quick read",
            "skip": "No need to read the code",
        },
        minutes="{phrase} (about {minutes} minutes)",
        colon=": ",
        list_separator=", ",
        clause_separator=", ",
        sentence_joiner=" ",
        read_first="Read first",
        lesson="Lesson",
        follow_up="Follow-up",
        undoes="It undoes {label}.",
        whitespace_only="It changes only whitespace: every file's text is otherwise the same.",
        interrupted="The run was interrupted; these are the cards finished so far.",
        bots_skipped="Skipped {count} direct commits by bots.",
        branch_sync="Branch sync {sha}: {subject}",
        failure="{label}: {message}",
        coverage=(
            "Model saw: {total} files, {whole} whole, {clipped} clipped, {left}; "
            "prompt {prompt} / {context} tokens ({view})"
        ),
        left_out="{count} left out",
        left_out_reason="{count} {reason}",
        left_out_reasons=" ({reasons})",
        views={"digest": "digest view", "diff": "diff view"},
        notes_title="Release notes draft: {span}",
        note_entry="- {headline} ({number}, {who})",
        direct_entry="- {sha} {subject} ({author})",
        bots_not_listed="- and {count} commits by bots, not listed",
        sections={
            "breaking": "Breaking changes",
            "features": "Features",
            "fixes": "Fixes",
            "performance": "Performance",
            "docs": "Docs",
            "internal": "Internal",
        },
        contributors="Contributors",
        direct_commits="Direct commits",
        branch_syncs="Branch syncs",
        nothing_to_highlight="Nothing in this release needs a close read.",
        highlights_intro="This release: ",
        highlight_item="{headline} ({label})",
        highlight_separator="; ",
        highlights_end=".",
    ),
}


# --- sentences from facts -------------------------------------------------------------

CATEGORY_WORDS: dict[Language, dict[Category, str]] = {
    "zh": {
        "feature": "新功能",
        "fix": "修复",
        "perf": "性能改进",
        "refactor": "重构",
        "docs": "文档更新",
        "test": "测试调整",
        "ci": "CI 配置调整",
        "deps": "依赖升级",
        "release": "版本发布",
        "revert": "回退",
        "chore": "杂项维护",
    },
    "en": {
        "feature": "New feature",
        "fix": "Fix",
        "perf": "Performance",
        "refactor": "Refactor",
        "docs": "Docs",
        "test": "Tests",
        "ci": "CI",
        "deps": "Dependency bump",
        "release": "Release",
        "revert": "Revert",
        "chore": "Maintenance",
    },
}
_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")
_DECORATION = re.compile(r"^[^\w`]+|\s*\(#\d+\)\s*$")
_LEADING_VERB = re.compile(
    r"^(add|adds|added|update|updates|fix|fixes|fixed|make|makes|bump|upgrade|remove|removes|"
    r"use|support|improve|improves|refactor|release)\s+",
    re.IGNORECASE,
)


def fallback_headline(pr: PullRequest, facts: Facts, lang: Language) -> str:
    """A plain headline from facts, for when the model gives nothing usable. (A definition
    named beside the file count, "改动 `main` 等 1 个文件", read as a file's name: judged false.)"""
    word = CATEGORY_WORDS[lang][facts.category]
    version = _VERSION.search(pr.title)
    if lang == "zh":
        if facts.category == "release" and version:
            return f"发布 {version.group(0)} 版本"
        return f"{word}：改动 {facts.files_changed} 个文件"
    # The category says "add", "fix" or "bump": the title without its own verb says what.
    what = _LEADING_VERB.sub("", _DECORATION.sub("", without_convention(pr.title))).strip()
    what = what or pr.title
    if facts.category == "release" and version:
        return f"Release {version.group(0)}"
    return f"{word}: {what[0].lower() + what[1:] if what[1:2].islower() else what}"


# What the category says and no more: "routine" and "changelog" were judged false where a bump
# also adapted code or a release touched no changelog (4 of r6's facts-built claims).
_CATEGORY_PHRASES: dict[Language, dict[Category, str]] = {
    "zh": {
        "feature": "新功能",
        "fix": "缺陷修复",
        "perf": "性能改进",
        "refactor": "重构",
        "docs": "只改了文档",
        "test": "只改了测试",
        "ci": "只改了 CI 配置",
        "deps": "依赖升级",
        "release": "版本发布",
        "revert": "回退之前的改动",
        "chore": "日常维护",
    },
    "en": {
        "feature": "A new feature",
        "fix": "A bug fix",
        "perf": "A performance change",
        "refactor": "A refactor",
        "docs": "Docs only",
        "test": "Tests only",
        "ci": "CI configuration only",
        "deps": "A dependency bump",
        "release": "A release",
        "revert": "A revert of earlier work",
        "chore": "Maintenance",
    },
}


def verdict_sentence(verdict: Verdict, facts: Facts, lang: Language) -> str:
    """Why the verdict, from facts: the opening of every summary. (No line count: what prsum
    counts as source lines is not what a reader counts, and the card's header gives the sizes.)"""
    if lang == "zh":
        scale = {
            "skip": "，没有需要细读的逻辑",
            "skim": "，范围不大",
            "deep": "，触及核心逻辑",
        }[verdict]
        breaking = "，而且是破坏性变更" if facts.breaking.is_breaking else ""
        return f"{_CATEGORY_PHRASES['zh'][facts.category]}{scale}{breaking}。"
    scale = {
        "skip": ", with no logic that needs a close read",
        "skim": ", limited in scope",
        "deep": ", reaching core logic",
    }[verdict]
    breaking = ", and a breaking change" if facts.breaking.is_breaking else ""
    return f"{_CATEGORY_PHRASES['en'][facts.category]}{scale}{breaking}."


def pointer_sentence(places: Sequence[Focus], lang: Language) -> str:
    """Where to start reading, and where to go next."""
    if lang == "zh":
        said = [f"`{p.path}` 中的 `{p.symbol}`" if p.symbol else f"`{p.path}`" for p in places]
        return "建议先读 " + "，再看 ".join(said) + "。"
    said = [f"`{p.symbol}` in `{p.path}`" if p.symbol else f"`{p.path}`" for p in places]
    return "Start with " + ", then ".join(said) + "."


def edits_sentence(path: str, edits: Sequence[LineEdit], lang: Language) -> str:
    """The code a file edits in place, quoted: "`a` becomes `b`", "adds `if x:`"."""
    zh = lang == "zh"
    said = []
    for edit in edits:
        if edit.before and edit.after:
            said.append(
                f"{code(edit.before)} 改为 {code(edit.after)}"
                if zh
                else f"{code(edit.before)} becomes {code(edit.after)}"
            )
        elif edit.after:
            said.append(f"新增 {code(edit.after)}" if zh else f"adds {code(edit.after)}")
        else:
            said.append(f"删去 {code(edit.before)}" if zh else f"drops {code(edit.before)}")
    if zh:
        return f"`{path}` 中，" + "；".join(said) + "。"
    return f"In `{path}`, " + "; ".join(said) + "."


def echo_sentence(echo: Echo, lang: Language) -> str:
    """A line of the repository that bears on a quoted edit: its precedent or its leftover."""
    zh = lang == "zh"
    if isinstance(echo, Precedent):
        path = echo.edit.path
        if zh:
            return f"`{path}` 中未改动的 {code(echo.line)} 已有 {code(echo.text)}。"
        return f"{code(echo.line)}, unchanged in `{path}`, already has {code(echo.text)}."
    if echo.files == 1:
        if zh:
            return f"旧的 {code(echo.text)} 仍留在 `{echo.path}` 中（{echo.count} 行）。"
        lines = "line" if echo.count == 1 else "lines"
        return f"The old {code(echo.text)} still stands in `{echo.path}` ({echo.count} {lines})."
    if zh:
        return (
            f"旧的 {code(echo.text)} 仍留在 {echo.files} 个文件的 {echo.count} 行中，"
            f"包括 `{echo.path}`。"
        )
    return (
        f"The old {code(echo.text)} still stands in {echo.count} lines of {echo.files} files, "
        f"`{echo.path}` among them."
    )


def reach_sentence(reaches: Sequence[Reach], shown: int, lang: Language) -> str:
    """Where what the PR changes is used in files it leaves unchanged: for each function, at
    most `shown` of those files, "and other files" for the rest (never a count: a file that
    imports it through a package's re-export is not found, so no count is all of them)."""
    zh = lang == "zh"
    parts = []
    for reach in reaches:
        files = [f"`{path}`" for path in reach.users[:shown]]
        more = len(reach.users) > shown
        if zh:
            users = "、".join(files) + " 等文件" if more else _series(files, lang) + " "
            parts.append(f"{users}使用了 `{reach.name}`")
        else:
            users = _series([*files, "other files"] if more else files, lang)
            parts.append(f"`{reach.name}` is used in {users}")
    if zh:
        return "在本 PR 未改动的文件中，" + "；".join(parts) + "。"
    return "Beyond the files this PR changes, " + "; ".join(parts) + "."


def assertion_sentence(assertion: Assertion, lang: Language) -> str:
    """A check the tests add, quoted: what behaviour the PR pins."""
    if lang == "zh":
        return f"`{assertion.path}` 中，测试新增检查 {code(assertion.line)}。"
    return f"In `{assertion.path}`, the tests now check {code(assertion.line)}."


def lock_sentence(path: str, changes: Sequence[LockChange], more: int, lang: Language) -> str:
    """What a lock file changes: packages moved from one pinned version to another, dropped
    or added; `more` the packages it changes beyond those."""
    zh = lang == "zh"
    parts = []
    for change in changes:
        name = code(change.name)
        if change.before and change.after:
            parts.append(
                f"{name} {change.before} 改为 {change.after}"
                if zh
                else f"{name} {change.before} becomes {change.after}"
            )
        elif change.before:
            parts.append(
                f"删除 {name} {change.before}" if zh else f"{name} {change.before} is dropped"
            )
        else:
            parts.append(f"新增 {name} {change.after}" if zh else f"{name} {change.after} is added")
    if more:
        plural = "s" * (more > 1)
        if zh:
            parts.append(f"另有 {more} 个包变化" if parts else f"{more} 个包的锁定版本变化")
        else:
            parts.append(
                f"{more} more package{plural} change{'s' * (more == 1)}"
                if parts
                else f"the pinned versions of {more} package{plural} change"
            )
    if zh:
        return f"`{path}` 中，" + "；".join(parts) + "。"
    return f"In `{path}`, " + "; ".join(parts) + "."


# How a setting's change is told, by its kind and by which of its values are shown: {key},
# {before}, {after} are code spans.
_SETTING_PHRASES: dict[Language, dict[tuple[str, bool, bool], str]] = {
    "en": {
        ("added", False, True): "sets {key} to {after}",
        ("added", False, False): "adds {key}",
        ("removed", True, False): "removes {key} ({before})",
        ("removed", False, False): "removes {key}",
        ("changed", True, True): "changes {key} from {before} to {after}",
        ("edited", True, True): "changes {before} to {after} in {key}",
        ("item_added", False, True): "adds {after} to {key}",
        ("item_added", False, False): "adds an item to {key}",
        ("item_removed", True, False): "removes {before} from {key}",
        ("item_removed", False, False): "removes an item from {key}",
        ("moved", True, True): "moves {before} to {key} ({after})",
        ("item_moved", True, True): "moves {after} from {before} to {key}",
    },
    "zh": {
        ("added", False, True): "新设 {key} 为 {after}",
        ("added", False, False): "新增 {key}",
        ("removed", True, False): "删去 {key}（{before}）",
        ("removed", False, False): "删去 {key}",
        ("changed", True, True): "{key} 从 {before} 改为 {after}",
        ("edited", True, True): "{key} 中 {before} 改为 {after}",
        ("item_added", False, True): "{key} 新增 {after}",
        ("item_added", False, False): "{key} 新增一项",
        ("item_removed", True, False): "{key} 去掉 {before}",
        ("item_removed", False, False): "{key} 去掉一项",
        ("moved", True, True): "{before}（{after}）移到 {key}",
        ("item_moved", True, True): "{after} 从 {before} 移到 {key}",
    },
}
_SETTING_CHANGED: dict[Language, str] = {"en": "changes {key}", "zh": "改动 {key}"}


def settings_sentence(
    path: str, changes: Sequence[SettingChange], more: int, new_file: bool, lang: Language
) -> str:
    """What a configuration file sets: settings added (with their values where short),
    changed (from, to), removed, and values added to or removed from a list; `more` the
    settings it changes beyond those."""
    phrases = _SETTING_PHRASES[lang]
    parts = [
        phrases.get(
            (change.kind, bool(change.before), bool(change.after)), _SETTING_CHANGED[lang]
        ).format(key=code(change.key), before=code(change.before), after=code(change.after))
        for change in changes
    ]
    if lang == "zh":
        if more:
            parts.append(f"另有 {more} 项设置改动")
        return (f"新文件 `{path}` 中，" if new_file else f"`{path}` 中，") + "；".join(parts) + "。"
    if more:
        parts.append(f"{more} more setting{'s' * (more > 1)} change{'s' * (more == 1)}")
    where = f"In `{path}` (a new file), it " if new_file else f"In `{path}`, it "
    return where + "; ".join(parts) + "."


def spread_sentence(change: SettingChange, paths: Sequence[str], lang: Language) -> str:
    """One setting's change made alike in several configuration files: how many, and the
    first two of them."""
    told = (
        _SETTING_PHRASES[lang]
        .get((change.kind, bool(change.before), bool(change.after)), _SETTING_CHANGED[lang])
        .format(key=code(change.key), before=code(change.before), after=code(change.after))
    )
    first = [f"`{path}`" for path in paths[:2]]
    if lang == "zh":
        return f"{len(paths)} 个文件中，{told}：{'、'.join(first)} 等。"
    return f"In {len(paths)} files, it {told}: {', '.join(first)} and {len(paths) - 2} more."


def origin_sentence(origin: Origin, lang: Language) -> str:
    """Which earlier PR (or commit) last changed the lines this one removes, and how long
    before it."""
    pr = origin.label.startswith("#")
    earlier = _earlier(origin.days, lang)
    if lang == "zh":
        share = "" if origin.whole else "大多"
        when = f"那个 PR 比它{earlier}合并" if pr else f"那次提交比它{earlier}"
        return f"它删去的行{share}是 {origin.label}（“{origin.title}”）最后改动的，{when}。"
    share = "The" if origin.whole else "Most of the"
    when = f"merged {earlier}" if pr else f"committed {earlier}"
    return (
        f"{share} lines it removes were last changed in {origin.label} (“{origin.title}”), {when}."
    )


def release_sentence(release: Release, lang: Language) -> str:
    """What a release ships: the changes merged since the version last changed, and those of
    them that change the most source lines."""
    zh = lang == "zh"
    earlier = _earlier(release.days, lang)
    named = [
        f"{item.label}（“{item.title}”）" if zh else f"{item.label} (“{item.title}”)"
        for item in release.largest
    ]
    if zh:
        others = [f"{release.direct} 次直接提交"] if release.direct else []
        others += [f"{release.syncs} 次其他分支的合并"] if release.syncs else []
        counts = [f"合并了 {release.prs} 个 PR"] if release.prs else []
        if others:
            counts.append(f"{'另' if counts else ''}有 {_series(others, lang)}")
        since = f"自版本号上次改动（{release.label}，“{release.title}”，{earlier}）以来，"
        largest = f"；改动源代码行数最多的是 {_series(named, lang)}" if named else ""
        return since + "，".join(counts) + largest + "。"
    counts = [f"{release.prs} PR{'s were' if release.prs > 1 else ' was'} merged"][: release.prs]
    if release.direct:
        plural = "s were" if release.direct > 1 else " was"
        counts.append(f"{release.direct} commit{plural} made directly")
    if release.syncs:
        times = f"{release.syncs} times" if release.syncs > 1 else "once"
        counts.append(f"other branches were merged in {times}")
    since = f"Since the version last changed, in {release.label} (“{release.title}”), {earlier}, "
    largest = ""
    if len(named) > 1:
        largest = f"; those that change the most source lines are {_series(named, lang)}"
    elif named:
        largest = f"; the one that changes the most source lines is {named[0]}"
    return since + _series(counts, lang) + largest + "."


def _series(items: Sequence[str], lang: Language) -> str:
    """Items in a sentence: "a, b and c", "a、b和 c"."""
    if len(items) < 2:
        return "".join(items)
    if lang == "zh":
        return "、".join(items[:-1]) + "和 " + items[-1]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _earlier(days: int, lang: Language) -> str:
    """How long before: days up to two months, then months up to two years, then years, each
    to the nearest ("about 2 years" for 2 years and 11 months was judged wrong)."""
    zh = lang == "zh"
    if days == 0:
        return "早不到一天" if zh else "less than a day earlier"
    if days < 60:
        return f"早 {days} 天" if zh else f"{days} day{'s' * (days > 1)} earlier"
    if days < 730:
        months = round(days / 30.44)
        return f"早约 {months} 个月" if zh else f"about {months} months earlier"
    years = round(days / 365.25)
    return f"早约 {years} 年" if zh else f"about {years} years earlier"


def account_sentence(account: str, lang: Language) -> str:
    """What the change's description says beyond its title, quoted as its words: the card
    vouches for the quote, not for what it claims."""
    if lang == "zh":
        return f"说明中写道：“{account}”"
    return f"The description says: “{account}”"


def files_sentence(paths: Sequence[str], lang: Language) -> str:
    """The files a small PR touches, for a card that points at nothing to read closely."""
    if lang == "zh":
        return "改动的文件：" + "、".join(f"`{path}`" for path in paths) + "。"
    return "Files: " + ", ".join(f"`{path}`" for path in paths) + "."


def focus_reason(digest: FileDigest, change: FileChange, lang: Language) -> str:
    """Why a place is worth reading first: the definitions its diff adds and changes."""
    zh = lang == "zh"
    separator = "、" if zh else ", "
    parts = []
    if digest.added:
        parts.append(
            ("新增 " if zh else "adds ") + separator.join(f"`{name}`" for name in digest.added[:3])
        )
    if digest.changed:
        parts.append(
            ("修改 " if zh else "changes ")
            + separator.join(f"`{name}`" for name in digest.changed[:3])
        )
    size = f"+{change.added} −{change.deleted}" if zh else f"+{change.added} -{change.deleted}"
    if not parts:  # no definition to name: only the size ("where most of it is" was judged
        return f"改动 {size}" if zh else f"changes {size}"  # false beside bigger test files)
    return "；".join(parts) + f"（{size}）" if zh else "; ".join(parts) + f" ({size})"


def follow_ups(pr: PullRequest, facts: Facts, lang: Language) -> list[str]:
    """What is left to do or to know, as history and measured facts show it."""
    zh = lang == "zh"
    items = [_related_phrase(related, lang) for related in pr.related]
    # A PR that writes its own changelog entry has warned its users already (judged false).
    if facts.breaking.is_breaking and not any(is_changelog(c.path) for c in pr.files):
        items.append(
            "在发布说明中提醒依赖旧行为的用户。"
            if zh
            else "Warn users of the old behaviour in the release notes."
        )
    items.extend(
        (f"处理新增的 {todo}" if zh else f"Resolve the new {todo}")
        for todo in facts.todos_added[:2]
    )
    if (
        facts.category in ("feature", "fix")
        and facts.source_lines_changed
        and not facts.tests_touched
    ):
        items.append(
            "补上测试：这次行为变化没有测试保护。"
            if zh
            else "Add tests: this behaviour change is not pinned by any."
        )
    return items[:3]


def _related_phrase(related: Related, lang: Language) -> str:
    """A later PR that undid this one or touched its code again, in the reader's language."""
    if related.relation == "reverted_by":
        return (
            f"后来被 {related.label} 撤销。"
            if lang == "zh"
            else f"Reverted later by {related.label}."
        )
    # "Touched again" was read as "the fix was revised" (judged false): the later PR changed
    # the same definition, not necessarily the same lines.
    if lang == "zh":
        return f"后来 {related.label} 也改动了 `{related.name}`。"
    return f"{related.label} later changed `{related.name}` too."
