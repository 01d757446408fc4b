"""Completion prompts for a base model, and the sentences our code writes around its answers.

A prompt is a frame (instructions and worked examples, package files that are byte-identical
for every PR of a run, so llama.cpp's KV cache keeps them between cards), then the PR, then
the card so far. The model writes one field at a time: the prompt ends with the field's label
and generation stops at the end of the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files

from prsum.digest import FileDigest
from prsum.types import (
    Category,
    Commit,
    Facts,
    FileChange,
    Focus,
    Language,
    PullRequest,
    Related,
    Verdict,
)

# Enters the card cache key: bump it whenever a frame, an example, a label or a phrase changes.
PROMPT_VERSION = "4"


@dataclass(frozen=True)
class Labels:
    """The words of one language's prompt layout; they must match its frame file."""

    pull_request: str
    card: str
    changes: str
    diff: str
    title: str
    authors: str
    facts: str
    headline: str
    verdict: str
    summary: str
    lesson: str
    commits: str
    message: str
    description: str
    tags: str
    reviews: str
    notes: str
    pull_requests: str
    highlights: str
    colon: str
    none: str
    verdicts: dict[Verdict, str]


LABELS: dict[Language, Labels] = {
    "zh": Labels(
        pull_request="合并请求",
        card="卡片",
        changes="改动",
        diff="差异",
        title="标题",
        authors="作者",
        facts="事实",
        headline="概括",
        verdict="结论",
        summary="摘要",
        lesson="收获",
        commits="提交",
        message="提交说明",
        description="说明",
        tags="标签",
        reviews="评审",
        notes="补充",
        pull_requests="合并请求",
        highlights="亮点",
        colon="：",
        none="无",
        verdicts={"deep": "精读", "skim": "浏览", "skip": "跳过"},
    ),
    "en": Labels(
        pull_request="Pull request",
        card="Card",
        changes="Changes",
        diff="Diff",
        title="Title",
        authors="Authors",
        facts="Facts",
        headline="Headline",
        verdict="Verdict",
        summary="Summary",
        lesson="Lesson",
        commits="Commits",
        message="Message",
        description="Description",
        tags="Labels",
        reviews="Reviews",
        notes="Notes",
        pull_requests="Pull requests",
        highlights="Highlights",
        colon=": ",
        none="none",
        verdicts={"deep": "deep", "skim": "skim", "skip": "skip"},
    ),
}

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
# `[module] type(scope)!: ` before a title's words (conventional commits, verl/sglang style).
_CONVENTION = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*(?:[A-Za-z]+(?:\([^)]*\))?!?:\s+)?")
_DECORATION = re.compile(r"^[^\w`]+|\s*\(#\d+\)\s*$")
_LEADING_VERB = re.compile(
    r"^(add|adds|added|update|updates|fix|fixes|fixed|make|makes|bump|upgrade|remove|removes|"
    r"use|support|improve|improves|refactor|release)\s+",
    re.IGNORECASE,
)


def frame(lang: Language, strategy: str = "fields") -> str:
    """What opens every prompt in `lang`: worked examples for the field-by-field protocol,
    instructions and the JSON layout for whole cards."""
    name = f"{lang}.txt" if strategy == "fields" else f"{strategy}-{lang}.txt"
    text = files("prsum.prompts").joinpath(name).read_text(encoding="utf-8")
    return text.rstrip() + "\n\n"


# Where a prompt's worked example begins: what comes after is about an invented PR.
_EXAMPLE_HEADINGS = ("An example, for an invented pull request:", "一个例子（虚构的合并请求）：")


def example_part(frame: str) -> str:
    """The worked example of a prompt's frame; empty for a frame without one (its words are
    instructions, which an answer may well repeat)."""
    for heading in _EXAMPLE_HEADINGS:
        if heading in frame:
            return frame[frame.index(heading) + len(heading) :]
    return ""


def allowed_verdicts_line(verdicts: Sequence[Verdict], lang: Language) -> str:
    """The verdicts the rubric leaves open for a PR, for the whole-card prompt."""
    if lang == "zh":
        return "可选结论：" + "、".join(verdicts)
    return "Allowed verdicts: " + ", ".join(verdicts)


def label(lang: Language, name: str) -> str:
    """`name` followed by the language's colon, as a field starts in the card."""
    return f"{name}{LABELS[lang].colon}"


def facts_line(facts: Facts, lang: Language) -> str:
    """The one-line summary of deterministic facts shown to the model."""
    if lang == "zh":
        parts = [
            f"类别 {facts.category}",
            f"{facts.files_changed} 个文件，+{facts.lines_added} −{facts.lines_deleted}",
            "改了测试" if facts.tests_touched else "没有改测试",
        ]
        if facts.breaking.is_breaking:
            parts.append("破坏性变更")
        return "；".join(parts)
    noun = "file" if facts.files_changed == 1 else "files"
    parts = [
        f"category {facts.category}",
        f"{facts.files_changed} {noun}, +{facts.lines_added} -{facts.lines_deleted}",
        "tests touched" if facts.tests_touched else "tests not touched",
    ]
    if facts.breaking.is_breaking:
        parts.append("breaking change")
    return "; ".join(parts)


def facts_phrases(lang: Language) -> tuple[str, ...]:
    """Wordings of the facts line: a model answer that repeats them describes nothing."""
    if lang == "zh":
        return ("改了测试", "没有改测试", "个文件，+")
    return ("tests touched", "tests not touched", "files, +", "file, +")


def change_line(change: FileChange, digest: FileDigest | None, lang: Language) -> str:
    """One file of the PR with the definitions it adds, changes, renames and removes, as in
    the examples."""
    zh = lang == "zh"

    def names(items: tuple[str, ...]) -> str:
        return ("、" if zh else ", ").join(f"`{item}`" for item in items)

    parts = []
    if digest and digest.added:
        parts.append(("新增 " if zh else "adds ") + names(digest.added))
    if digest and digest.changed:
        parts.append(("修改 " if zh else "changes ") + names(digest.changed))
    if digest and digest.renamed:
        arrows = (
            f"`{old}` → `{new}`" if zh else f"`{old}` to `{new}`" for old, new in digest.renamed
        )
        parts.append(("重命名 " if zh else "renames ") + ("、" if zh else ", ").join(arrows))
    if digest and digest.removed:
        parts.append(("删除 " if zh else "removes ") + names(digest.removed))
    if zh:
        head = f"- {change.path}（{change.status}，+{change.added} −{change.deleted}）"
        return head + ("：" + "；".join(parts) if parts else "")
    head = f"- {change.path} ({change.status}, +{change.added} -{change.deleted})"
    return head + (": " + "; ".join(parts) if parts else "")


_KIND_WORDS: dict[Language, dict[str, str]] = {
    "zh": {
        "source": "源码",
        "test": "测试",
        "docs": "文档",
        "config": "配置",
        "ci": "CI",
        "lock": "锁",
        "vendored": "第三方",
    },
    "en": {
        "source": "source",
        "test": "test",
        "docs": "docs",
        "config": "config",
        "ci": "CI",
        "lock": "lock",
        "vendored": "vendored",
    },
}


def group_line(kind: str, changes: Sequence[FileChange], lang: Language) -> str:
    """Several files of one kind compressed into one line: count, size, the first names."""
    added = sum(change.added for change in changes)
    deleted = sum(change.deleted for change in changes)
    names = [change.path for change in changes[:2]]
    word = _KIND_WORDS[lang].get(kind, kind)
    if lang == "zh":
        return f"- {word}文件 {len(changes)} 个（+{added} −{deleted}）：{'、'.join(names)} 等"
    return f"- {len(changes)} {word} files (+{added} -{deleted}): {', '.join(names)}, …"


_EXCERPT_CHARS = 300
_REVIEW_CHARS = 160
_MAX_COMMITS = 6
_MAX_REVIEWS = 2


def excerpt(text: str, limit: int = _EXCERPT_CHARS) -> str:
    """The first paragraph of `text` on one line, cut at `limit` characters."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    flat = " ".join(paragraph.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def context_lines(pr: PullRequest, commits: Sequence[Commit], lang: Language) -> list[str]:
    """What else is known of the PR: its own commits, and the forge's body, labels and reviews."""
    labels = LABELS[lang]
    lines = []
    if len(commits) > 1:
        lines.append(label(lang, labels.commits).rstrip())
        lines += [f"- {excerpt(commit.subject, 100)}" for commit in commits[:_MAX_COMMITS]]
    meta = pr.meta
    if meta is not None:
        if meta.body:
            lines.append(label(lang, labels.description) + excerpt(meta.body, _EXCERPT_CHARS))
        if meta.labels:
            lines.append(label(lang, labels.tags) + ", ".join(meta.labels))
        lines += [
            label(lang, labels.reviews) + excerpt(text, _REVIEW_CHARS)
            for text in meta.review_comments[:_MAX_REVIEWS]
        ]
    return lines


def pr_block(
    pr: PullRequest,
    facts: Facts,
    change_lines: list[str],
    diff_text: str | None,
    lang: Language,
    extra_lines: Sequence[str] = (),
) -> str:
    """The PR section of the prompt, laid out like the examples, ending at the card heading.

    The title comes last, right above the headline: a small model leans on what is closest,
    and the headline is mostly the title said again in the reader's words.
    """
    labels = LABELS[lang]
    number = f"#{pr.number}" if pr.number is not None else pr.sha[:7]
    lines = [
        f"### {labels.pull_request} {number}",
        label(lang, labels.changes).rstrip(),
        *change_lines,
    ]
    if diff_text is not None:
        lines += [label(lang, labels.diff).rstrip(), "<diff>", diff_text.rstrip("\n"), "</diff>"]
    lines += [
        *extra_lines,
        label(lang, labels.authors) + ", ".join(pr.authors),
        label(lang, labels.facts) + facts_line(facts, lang),
        label(lang, labels.title) + pr.title,
        f"### {labels.card}",
    ]
    return "\n".join(lines) + "\n"


_MESSAGE_CHARS = 800
# Where a project tells its users what changed: a changelog document (not `history.py`), or a
# fragment in a folder of them (towncrier's newsfragments, changesets).
_CHANGELOG = re.compile(
    r"(?i)((^|/)(changelog|changes|history|news|release[-_ ]?notes)(\.(md|rst|txt|adoc))?$"
    r"|(^|/)(changelog\.d|changes|newsfragments|\.changeset)/)"
)


def pr_brief(
    pr: PullRequest,
    facts: Facts,
    change_lines: list[str],
    diff_text: str | None,
    lang: Language,
    extra_lines: Sequence[str] = (),
) -> str:
    """The PR as an instruction-following model reads it in its user turn (the `card` prompt):
    the title and message first, then what prsum measured, the files, the diff."""
    labels = LABELS[lang]
    number = f"#{pr.number}" if pr.number is not None else pr.sha[:7]
    lines = [
        f"{labels.pull_request} {number}{labels.colon}{pr.title}",
        label(lang, labels.authors) + ", ".join(pr.authors),
    ]
    body = pr.message.strip().partition("\n")[2].strip()
    if body:
        flat = " ".join(body.split())
        cut = flat if len(flat) <= _MESSAGE_CHARS else flat[: _MESSAGE_CHARS - 1] + "…"
        lines.append(label(lang, labels.message) + cut)
    lines += [
        *extra_lines,
        label(lang, labels.facts) + facts_line(facts, lang),
        label(lang, labels.changes).rstrip(),
        *change_lines,
    ]
    if diff_text is not None:
        lines += [label(lang, labels.diff).rstrip(), "<diff>", diff_text.rstrip("\n"), "</diff>"]
    return "\n".join(lines) + "\n"


# How each prompt lays out the PR: the small models' prompts end at the card heading, the title
# last (what they were trained or shown examples on); an instruction-following model reads it
# in a user turn of its own.
PR_LAYOUTS: dict[str, Callable[..., str]] = {
    "card": pr_brief,
    "whole": pr_block,
    "fields": pr_block,
}


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
    what = _LEADING_VERB.sub("", _DECORATION.sub("", _CONVENTION.sub("", pr.title))).strip()
    what = what or pr.title
    if facts.category == "release" and version:
        return f"Release {version.group(0)}"
    return f"{word}: {what[0].lower() + what[1:] if what[1:2].islower() else what}"


_CATEGORY_PHRASES: dict[Language, dict[Category, str]] = {
    "zh": {
        "feature": "新功能",
        "fix": "缺陷修复",
        "perf": "性能改进",
        "refactor": "重构",
        "docs": "只改了文档",
        "test": "只改了测试",
        "ci": "只改了 CI 配置",
        "deps": "依赖的例行升级",
        "release": "版本号与发布说明的例行更新",
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
        "deps": "A routine dependency bump",
        "release": "A routine version and changelog update",
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
    if facts.breaking.is_breaking and not any(_CHANGELOG.search(c.path) for c in pr.files):
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
    if lang == "zh":
        return f"之后 {related.label} 又改动了 `{related.name}`。"
    return f"`{related.name}` was touched again by {related.label}."
