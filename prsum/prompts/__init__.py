"""The model's prompts: frames, the PR's layout, the labels; nothing a user reads (prsum.i18n).

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
from prsum.types import Commit, Facts, FileChange, Language, PullRequest, Verdict


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
