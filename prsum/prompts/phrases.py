"""The fixed words of prsum's outputs in each language: cards, reports, release notes.

With the prompts and the sentences cards are built from (prsum.prompts), this package holds
every zh/en text prsum shows; a new language is one more entry here and one more frame file.
"""

from __future__ import annotations

from dataclasses import dataclass

from prsum.types import Language, Verdict


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
