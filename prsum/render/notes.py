"""Release notes as Markdown, as JSON, or through a user's Jinja2 template (its only import)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prsum.errors import UsageError
from prsum.notes import ReleaseNotes


def notes_to_dict(notes: ReleaseNotes) -> dict[str, Any]:
    """The structured notes: what `--format json` prints and what a template receives."""
    return {"schema": "prsum.notes/1", **asdict(notes)}


def notes_to_json(notes: ReleaseNotes) -> str:
    return json.dumps(notes_to_dict(notes), ensure_ascii=False, indent=2) + "\n"


def notes_to_markdown(notes: ReleaseNotes) -> str:
    zh = notes.lang == "zh"
    lines = [f"# {notes.title}", "", notes.highlights, ""]
    for section in notes.sections:
        lines += [f"## {section.title}", ""]
        for entry in section.entries:
            who = ("、" if zh else ", ").join(entry.authors)
            number = f"#{entry.number}" if entry.number is not None else entry.sha[:7]
            lines.append(
                f"- {entry.headline}（{number}，{who}）"
                if zh
                else f"- {entry.headline} ({number}, {who})"
            )
        lines.append("")
    if notes.contributors:
        lines += [
            "## 贡献者" if zh else "## Contributors",
            "",
            ("、" if zh else ", ").join(notes.contributors),
            "",
        ]
    if notes.direct_commits or notes.bot_commits_skipped:
        lines += ["## 直接提交" if zh else "## Direct commits", ""]
        lines += [
            f"- {c.sha[:7]} {c.subject}（{c.author}）"
            if zh
            else f"- {c.sha[:7]} {c.subject} ({c.author})"
            for c in notes.direct_commits
        ]
        if notes.bot_commits_skipped:
            count = notes.bot_commits_skipped
            lines.append(
                f"- 另有 {count} 个机器人提交未列出"
                if zh
                else f"- and {count} commits by bots, not listed"
            )
        lines.append("")
    if notes.sync_merges:
        lines += ["## 分支同步" if zh else "## Branch syncs", ""]
        lines += [f"- {c.sha[:7]} {c.subject}" for c in notes.sync_merges]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def load_template(template: Path) -> Any:
    """A user's Jinja2 template, compiled: a broken one fails before any card is written."""
    import jinja2

    try:
        source = template.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read --template {template}: {exc.strerror or exc}") from None
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )
    try:
        return environment.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise UsageError(f"--template {template}, line {exc.lineno}: {exc.message}") from None


def notes_with_template(notes: ReleaseNotes, template: Any) -> str:
    """The notes rendered by a compiled template, given the structured notes as `notes`."""
    import jinja2

    try:
        rendered: str = template.render(notes=notes_to_dict(notes))
    except jinja2.TemplateError as exc:
        raise UsageError(f"--template: {exc}") from None
    return rendered
