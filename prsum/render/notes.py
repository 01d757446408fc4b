"""Release notes as Markdown, as JSON, or through a user's Jinja2 template (its only import)."""

from __future__ import annotations

import operator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prsum.errors import UsageError
from prsum.i18n import PHRASES
from prsum.notes import NoteEntry, NoteSection, OtherEntry, ReleaseNotes
from prsum.render.inert import json_dumps, md_inline, md_prose, printable


def notes_to_dict(notes: ReleaseNotes) -> dict[str, Any]:
    """The structured notes: what `--format json` prints and what a template receives."""
    return {"schema": "prsum.notes/1", **asdict(notes)}


def notes_to_json(notes: ReleaseNotes) -> str:
    return json_dumps(notes_to_dict(notes), indent=2) + "\n"


def notes_to_markdown(notes: ReleaseNotes) -> str:
    """The notes as Markdown: history text escaped, the model's prose made inert."""
    words = PHRASES[notes.lang]
    lines = [f"# {md_inline(notes.title)}", "", md_prose(notes.highlights), ""]
    for section in notes.sections:
        lines += [f"## {section.title}", ""]
        for entry in section.entries:
            lines.append(
                words.note_entry.format(
                    headline=md_prose(entry.headline, single_line=True),
                    number=f"#{entry.number}" if entry.number is not None else entry.sha[:7],
                    who=md_inline(words.list_separator.join(entry.authors)),
                )
            )
        lines.append("")
    if notes.contributors:
        lines += [
            f"## {words.contributors}",
            "",
            md_inline(words.list_separator.join(notes.contributors)),
            "",
        ]
    if notes.direct_commits or notes.bot_commits_skipped:
        lines += [f"## {words.direct_commits}", ""]
        lines += [
            words.direct_entry.format(
                sha=commit.sha[:7],
                subject=md_inline(commit.subject),
                author=md_inline(commit.author),
            )
            for commit in notes.direct_commits
        ]
        if notes.bot_commits_skipped:
            lines.append(words.bots_not_listed.format(count=notes.bot_commits_skipped))
        lines.append("")
    if notes.sync_merges:
        lines += [f"## {words.branch_syncs}", ""]
        lines += [f"- {c.sha[:7]} {md_inline(c.subject)}" for c in notes.sync_merges]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# Bounds on what one template operation may build, so a template cannot exhaust memory or time.
_MAX_POWER_EXPONENT = 64
_MAX_REPEATED_LENGTH = 1_000_000


def _sandbox() -> Any:
    """A sandboxed Jinja2 environment without a loader: templates are data from a repository,
    so they may read the notes but not Python's internals, the file system or other templates."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class NotesSandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"**", "*"})

        def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
            if operator_name == "**":
                if isinstance(right, int | float) and abs(right) > _MAX_POWER_EXPONENT:
                    raise jinja2.exceptions.SecurityError("exponent too large in a template")
                return operator.pow(left, right)
            if isinstance(left, int) and isinstance(right, str | list):
                left, right = right, left
            if (
                isinstance(left, str | list)
                and isinstance(right, int)
                and len(left) * right > _MAX_REPEATED_LENGTH
            ):
                raise jinja2.exceptions.SecurityError("repetition too long in a template")
            return operator.mul(left, right)

    return NotesSandbox(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )


def load_template(template: Path) -> Any:
    """A user's Jinja2 template, compiled and tried on example notes: a broken one fails before
    any card is written."""
    import jinja2

    try:
        source = template.read_bytes().decode("utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read --template {template}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--template {template} is not UTF-8 text") from None
    try:
        compiled = _sandbox().from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise UsageError(f"--template {template}, line {exc.lineno}: {exc.message}") from None
    notes_with_template(example_notes(), compiled)
    return compiled


def notes_with_template(notes: ReleaseNotes, template: Any) -> str:
    """The notes rendered by a compiled template, given the structured notes as `notes`.

    The template gets the notes with control characters made visible (prsum.render.inert):
    what it writes out is its own, but the repository's text cannot carry escape sequences.
    """
    import jinja2

    try:
        rendered: str = template.render(notes=_printable_strings(notes_to_dict(notes)))
    except jinja2.TemplateError as exc:
        raise UsageError(f"--template: {_one_line(exc)}") from None
    except (TypeError, ValueError, LookupError, ArithmeticError, RecursionError) as exc:
        # A loader-less {% include %}, a bad filter argument, a division by zero.
        raise UsageError(f"--template: {type(exc).__name__}: {_one_line(exc)}") from None
    return rendered


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _printable_strings(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {key: _printable_strings(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable_strings(item) for item in value]
    return value


def example_notes() -> ReleaseNotes:
    """Notes with every field filled, to try a template on before the model runs."""
    entry = NoteEntry(1, "0" * 40, "Example", ("Example Author",), "feature", "deep")
    other = OtherEntry("1" * 40, "Example commit", "Example Author")
    return ReleaseNotes(
        range_spec="v1.0.0..v1.1.0",
        title="Release notes draft: v1.0.0 → v1.1.0",
        highlights="Example highlights (#1).",
        sections=(NoteSection("features", "Features", (entry,)),),
        contributors=("Example Author",),
        direct_commits=(other,),
        bot_commits_skipped=1,
        sync_merges=(other,),
        lang="en",
    )
