"""Terminal output with rich (its only import): cards, tables, progress."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from prsum.i18n import PHRASES
from prsum.llm.models import LocalModel
from prsum.render import coverage_line, sub_line, verdict_opening
from prsum.render.inert import one_line, printable
from prsum.spans import CODE_SPAN, span_code
from prsum.types import Card, CardFailure, Discovery, PullRequest, RangeReport

_VERDICT_STYLES = {"deep": "bold magenta", "skim": "bold cyan", "skip": "dim"}


def _shown(text: str) -> str:
    """History or model text for rich markup: no escape sequences, no markup of its own."""
    return escape(one_line(text))


def _inline_code(text: str) -> Text:
    """Text with `code spans` highlighted; escape sequences and control characters removed
    (prsum.render.inert), so the repository cannot write to the terminal itself."""
    result, text, last = Text(), printable(text), 0
    for span in CODE_SPAN.finditer(text):
        result.append(text[last : span.start()])
        result.append(span_code(span), style="bold yellow")
        last = span.end()
    result.append(text[last:])
    return result


def card_panel(card: Card) -> Panel:
    body = card.body
    words = PHRASES[card.lang]
    colon = words.colon
    paragraph = Text(verdict_opening(card) + colon, style=_VERDICT_STYLES[body.verdict])
    paragraph.append_text(_inline_code(body.summary))
    parts: list[Text] = [Text(one_line(sub_line(card)), style="dim"), paragraph]
    for focus in body.focus:
        place = f"`{focus.path}`" + (f" `{focus.symbol}`" if focus.symbol else "")
        parts.append(_inline_code(f"• {words.read_first}{colon}{place} — {focus.why}"))
    parts += [_inline_code(f"• {words.lesson}{colon}{text}") for text in body.lessons]
    parts += [_inline_code(f"• {words.follow_up}{colon}{text}") for text in body.follow_ups]
    parts.append(Text(one_line(coverage_line(card)), style="dim"))
    return Panel(
        Group(*parts),
        title=_shown(body.headline),
        title_align="left",
        border_style=_VERDICT_STYLES[body.verdict],
    )


def print_report(report: RangeReport, console: Console) -> None:
    for card in report.cards:
        console.print(card_panel(card))
    words = PHRASES[report.lang]
    for failure in report.failures:
        console.print(f"[red]{_shown(failure.pr.label)}[/red]: {_shown(failure.message)}")
    if report.discovery.bot_commits:
        count = len(report.discovery.bot_commits)
        console.print(f"[dim]{escape(words.bots_skipped.format(count=count))}[/dim]")
    for sync in report.discovery.sync_merges:
        line = words.branch_sync.format(sha=sync.sha[:7], subject=one_line(sync.subject))
        console.print(f"[dim]{escape(line)}[/dim]")


def print_discovery(
    discovery: Discovery, token_estimates: Mapping[str, int] | None, console: Console
) -> None:
    table = Table(title=_shown(discovery.range_spec), title_justify="left")
    columns = ["PR", "kind", "sha", "title", "authors", "files", "+/−"]
    for column in columns + (["tokens≈"] if token_estimates is not None else []):
        table.add_column(column, overflow="fold")
    for entry in discovery.entries:
        row = [
            entry.label if entry.number is not None else "—",
            entry.kind,
            entry.sha[:7],
            _shown(entry.title),
            _shown(", ".join(entry.authors)),
            str(len(entry.files)),
            f"+{entry.added} −{entry.deleted}",
        ]
        if token_estimates is not None:
            row.append(str(token_estimates[entry.sha]))
        table.add_row(*row)
    console.print(table)
    console.print(
        f"{len(discovery.prs)} PRs, {len(discovery.direct_commits)} direct commits, "
        f"{len(discovery.bot_commits)} bot commits skipped, {len(discovery.sync_merges)} branch syncs"
    )


def print_models(
    chosen: tuple[Path, str] | None,
    problem: str | None,
    found: Sequence[LocalModel],
    console: Console,
) -> None:
    if chosen is not None:
        console.print(
            f"[bold]model[/bold]  {_shown(str(chosen[0]))}\n[bold]why[/bold]    {_shown(chosen[1])}"
        )
    if problem is not None:
        console.print(f"[red]no usable model[/red]: {_shown(problem)}")
    if not found:
        console.print("[bold]local GGUF files[/bold]: none found")
        return
    table = Table(title="local GGUF files (use one with --model PATH)", title_justify="left")
    for column in ("where", "name", "path"):
        table.add_column(column, overflow="fold")
    for model in found:
        table.add_row(model.source, _shown(model.name), _shown(str(model.path)))
    console.print(table)


class ProgressDisplay:
    """A progress bar on stderr while cards are written; silent when stderr is not a terminal."""

    def __init__(self, console: Console, total: int) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        self._task = self._progress.add_task("cards", total=total)

    def update(self, done: int, total: int, pr: PullRequest, result: Card | CardFailure) -> None:
        self._progress.update(self._task, completed=done, description=f"cards · {_shown(pr.label)}")

    @contextmanager
    def shown(self) -> Iterator[ProgressDisplay]:
        with self._progress:
            yield self
