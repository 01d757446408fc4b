"""The command line: parse, resolve settings once, call the library, render. The only typer import."""

from __future__ import annotations

import errno
import functools
import inspect
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

from prsum import render
from prsum.config import Settings, resolve_settings
from prsum.errors import EXIT_OK, EXIT_PARTIAL, OutputError, PrsumError, UsageError
from prsum.output import write_atomically
from prsum.types import Discovery, RangeQuery, RangeReport

if TYPE_CHECKING:
    from prsum.pipeline import Summarizer

EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="prsum",
    help="Offline pull-request summarizer: one evaluative card per merged PR, from a local git clone, "
    "written by a local GGUF model. No network, ever.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class OutputFormat(StrEnum):
    terminal = "terminal"
    md = "md"
    json = "json"
    jsonl = "jsonl"


class Lang(StrEnum):
    zh = "zh"
    en = "en"


class BackendChoice(StrEnum):
    llama = "llama"
    openai = "openai"


class StrategyChoice(StrEnum):
    auto = "auto"
    fields = "fields"
    whole = "whole"
    brief = "brief"
    facts = "facts"


class Style(StrEnum):
    auto = "auto"
    digest = "digest"
    diff = "diff"


RepoOption = Annotated[
    Path | None,
    typer.Option("--repo", help="The git clone to read. [default: current folder; env PRSUM_REPO]"),
]
ModelOption = Annotated[
    Path | None,
    typer.Option(
        "--model",
        help="A .gguf model file, or an embedded model by name: `coder` (Qwen2.5-Coder-1.5B-Instruct) "
        "or `small` (Gemma 3 270M with prsum's adapter). [default: PRSUM_MODEL, \\[tool.prsum] "
        "model, then the embedded default]",
    ),
]
LangOption = Annotated[
    Lang | None, typer.Option("--lang", help="Language of the cards. [default: zh]")
]
FormatOption = Annotated[
    OutputFormat | None,
    typer.Option(
        "--format", "-f", help="Output format. [default: terminal on a TTY, md otherwise]"
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write to this file (atomically) instead of stdout."),
]
CtxOption = Annotated[
    int | None,
    typer.Option("--ctx", help="Cap on the model's context, in tokens. [default: 4096]", min=512),
]
ThreadsOption = Annotated[
    int | None, typer.Option("--threads", help="CPU threads. [default: all cores]", min=1)
]
BotsOption = Annotated[
    bool,
    typer.Option(
        "--include-bots", help="Also write cards for direct commits by bots (`...[bot]`)."
    ),
]
StyleOption = Annotated[
    Style | None,
    typer.Option(
        "--prompt-style",
        help="What the model is shown of each file: `digest` (changed definitions), `diff` (the packed diff), "
        "or `auto` (digest for a model under 1 GiB writing field by field, else diff). [default: auto]",
    ),
]
MapChunksOption = Annotated[
    int | None,
    typer.Option(
        "--map-chunks",
        help="Diff view: at most this many model-written notes per PR on chunks that do not fit; 0 turns it off. [default: 4]",
        min=0,
    ),
]
GpuLayersOption = Annotated[
    int | None,
    typer.Option(
        "--gpu-layers",
        help="Layers to offload to a GPU, for a llama-cpp-python built with CUDA, Metal or Vulkan. [default: 0]",
        min=0,
    ),
]
BackendOption = Annotated[
    BackendChoice | None,
    typer.Option(
        "--backend",
        help="`llama`: the model runs in prsum; `openai`: an OpenAI-compatible server on your own network "
        "(llama.cpp, vLLM, SGLang) at --base-url. [default: llama]",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="The server for --backend openai, e.g. http://127.0.0.1:8080 (loopback or private addresses only; "
        "a key, if it needs one, in PRSUM_API_KEY).",
    ),
]
ServerModelOption = Annotated[
    str | None,
    typer.Option(
        "--server-model", help="The served model's name. [default: the first the server lists]"
    ),
]
JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs", "-j", help="Cards written at once (--backend openai). [default: 1]", min=1
    ),
]
StrategyOption = Annotated[
    StrategyChoice | None,
    typer.Option(
        "--strategy",
        help="How a card is written: `brief` (the model writes the headline and picks the verdict "
        "and reading time; the rest is built from facts), `whole` (the model writes the whole "
        "card, prose too: more to read, and more of it wrong), `fields` (one field at a time, for "
        "small base models), `facts` (no model: facts and the rubric's verdict only), or `auto` "
        "(brief for a model with its own chat template or a served one). "
        "[default: auto; env PRSUM_STRATEGY]",
    ),
]
NoRedactOption = Annotated[
    bool,
    typer.Option(
        "--no-redact",
        help="Do not mask credential-like text (keys, tokens, password= values) before the model.",
    ),
]
NoAdapterOption = Annotated[
    bool,
    typer.Option(
        "--no-adapter",
        help="An embedded model without prsum's card-writing adapter. [env PRSUM_ADAPTER=0]",
    ),
]
NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache", help="Neither read nor write the card cache (~/.cache/prsum/cards)."
    ),
]
DebugOption = Annotated[
    bool, typer.Option("--debug", help="Show tracebacks and llama.cpp's own log.")
]


def _settings(flags: Mapping[str, object]) -> Settings:
    """Settings from the flags given, by setting name: one not given (None) defers to the
    environment and pyproject."""
    settings = resolve_settings(
        {
            name: (value.value if isinstance(value, Enum) else value)
            for name, value in flags.items()
            if value is not None
        }
    )
    if settings.refused:
        typer.echo(
            f"prsum: warning: ignored in {settings.repo / 'pyproject.toml'} [tool.prsum]: "
            f"{', '.join(settings.refused)}; a repository may not set these (use flags, PRSUM_* "
            "or ~/.config/prsum/config.toml)",
            err=True,
        )
    return settings


def _on(switch: bool) -> bool | None:
    """A switch such as `--include-bots`: on when given, else left to the environment and
    pyproject."""
    return True if switch else None


def _off(switch: bool) -> bool | None:
    """A `--no-X` switch: X off when given, else left to the environment and pyproject."""
    return False if switch else None


@contextmanager
def _errors_to_exit(debug: bool) -> Iterator[None]:
    """One line on stderr and the error's exit code; a traceback only with --debug."""
    if debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    try:
        yield
    except PrsumError as exc:
        if debug:
            raise
        typer.echo(f"prsum: error: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    except (typer.Exit, KeyboardInterrupt, BrokenPipeError):
        # A closed pipe (`prsum list | head`) ends the run quietly: click exits 1 without a word.
        raise
    except Exception as exc:
        if debug:
            raise
        typer.echo(
            f"prsum: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            err=True,
        )
        raise typer.Exit(EXIT_PARTIAL) from None


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    if not stderr:
        _require_stdout()
    return Console(stderr=stderr, highlight=False)


def _require_stdout() -> None:
    if sys.stdout is None:
        raise OutputError("standard output is closed: pass -o FILE to write the result to a file")


@contextmanager
def _writing_stdout() -> Iterator[None]:
    """Writes to stdout that fail (a full disk) become one line and exit 2, as git reports them;
    what is still buffered is dropped so that Python does not fail again at exit."""
    try:
        yield
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise
        _drop_stdout()
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None


def _drop_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _summarizer(settings: Settings) -> Summarizer:
    # Imported here: the model-side modules are not needed by `list` and `models`.
    from prsum.pipeline import Summarizer

    return Summarizer(settings)


def _chosen_format(fmt: OutputFormat | None, output: Path | None) -> OutputFormat:
    if fmt is not None:
        return fmt
    on_tty = sys.stdout is not None and sys.stdout.isatty()
    return OutputFormat.terminal if output is None and on_tty else OutputFormat.md


def _emit(text: str, output: Path | None) -> None:
    if output is not None:
        write_atomically(output, text)
        return
    _require_stdout()
    with _writing_stdout():
        sys.stdout.write(text)


def _write_cards(
    summarizer: Summarizer, discovery: Discovery, fmt: OutputFormat, output: Path | None
) -> int:
    """Run the use case, render its report, and return the exit code."""
    from prsum.render.terminal import ProgressDisplay, print_report

    started = time.perf_counter()
    summarizer.load()
    stream_lines = fmt is OutputFormat.jsonl and output is None
    progress = ProgressDisplay(_console(stderr=True), len(discovery.entries))
    with progress.shown():
        report = summarizer.run(
            discovery,
            progress.update,
            on_card=(lambda card: _emit(render.cards_to_jsonl([card]), None))
            if stream_lines
            else None,
        )
    if fmt is OutputFormat.terminal and output is None:
        with _writing_stdout():
            print_report(report, _console())
    elif not stream_lines:
        if fmt is OutputFormat.json:
            text = render.report_to_json(report)
        elif fmt is OutputFormat.jsonl:
            text = render.cards_to_jsonl(report.cards)
        else:
            text = render.report_to_markdown(report)
        _emit(text, output)
    _report_to_stderr(report, summarizer.settings, fmt, time.perf_counter() - started)
    if report.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_PARTIAL if report.failures else EXIT_OK


def _report_to_stderr(
    report: RangeReport, settings: Settings, fmt: OutputFormat, seconds: float
) -> None:
    if report.cache_unwritable:
        typer.echo(
            f"prsum: warning: cannot write the card cache in {settings.cache_dir}: cards were not cached",
            err=True,
        )
    cached = sum(1 for card in report.cards if card.timing.cached)
    typer.echo(
        f"prsum: {len(report.cards)} cards ({cached} from the cache), {len(report.failures)} failed, "
        f"{seconds:.1f} s",
        err=True,
    )
    bots = report.discovery.bot_commits
    if bots and fmt is not OutputFormat.terminal:
        typer.echo(
            f"prsum: skipped {len(bots)} direct commits by bots (--include-bots to keep them)",
            err=True,
        )
    for failure in report.failures:
        typer.echo(f"prsum: error: {failure.pr.label}: {failure.message}", err=True)
    if report.interrupted:
        typer.echo(f"prsum: interrupted: {len(report.cards)} finished cards were written", err=True)


RangeArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="[A..B]",
        help="Revision range, e.g. v1.2..v1.3; B alone is all history up to B. "
        "May be left out with --since, --until or --last (then it is HEAD).",
        show_default=False,
    ),
]
PathsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[-- PATH...]",
        help="Only PRs touching these folders, files or globs.",
        show_default=False,
    ),
]
SinceOption = Annotated[
    str | None,
    typer.Option("--since", help="Only commits merged after this date (git's date formats)."),
]
UntilOption = Annotated[
    str | None, typer.Option("--until", help="Only commits merged before this date.")
]
LastOption = Annotated[
    int | None, typer.Option("--last", help="Only the last N PRs and direct commits.", min=1)
]
FollowSyncOption = Annotated[
    bool, typer.Option("--follow-sync", help="List the PRs each branch-sync merge brings in.")
]
PrMetaOption = Annotated[
    Path | None,
    typer.Option(
        "--pr-meta",
        help="JSON from `gh pr list --json number,title,body,labels,author,reviews,comments`.",
    ),
]


@dataclass(frozen=True)
class CardOptions:
    """The options of every command that writes cards, declared once: `with_options` puts them
    in a command's signature and hands them to it as one value."""

    repo: RepoOption = None
    model: ModelOption = None
    lang: LangOption = None
    ctx: CtxOption = None
    threads: ThreadsOption = None
    pr_meta: PrMetaOption = None
    prompt_style: StyleOption = None
    map_chunks: MapChunksOption = None
    no_cache: NoCacheOption = False
    no_redact: NoRedactOption = False
    gpu_layers: GpuLayersOption = None
    backend: BackendOption = None
    base_url: BaseUrlOption = None
    server_model: ServerModelOption = None
    jobs: JobsOption = None
    strategy: StrategyOption = None
    no_adapter: NoAdapterOption = False


def _card_settings(card: CardOptions, include_bots: bool = False) -> Settings:
    """The settings a card command's options give."""
    return _settings(_card_flags(card, include_bots))


def _card_flags(card: CardOptions, include_bots: bool) -> dict[str, Any]:
    """Each card option under the name of the setting it gives (a `--no-…` switch turns its
    setting off)."""
    return {
        "repo": card.repo,
        "model": card.model,
        "lang": card.lang,
        "ctx": card.ctx,
        "threads": card.threads,
        "include_bots": _on(include_bots),
        "pr_meta": card.pr_meta,
        "prompt_style": card.prompt_style,
        "map_chunks": card.map_chunks,
        "cache": _off(card.no_cache),
        "redact": _off(card.no_redact),
        "gpu_layers": card.gpu_layers,
        "backend": card.backend,
        "base_url": card.base_url,
        "server_model": card.server_model,
        "jobs": card.jobs,
        "strategy": card.strategy,
        "adapter": _off(card.no_adapter),
    }


@dataclass(frozen=True)
class RangeOptions:
    """Which part of history `range` and `list` read, declared once as CardOptions are."""

    rev_range: RangeArgument = None
    paths: PathsArgument = None
    include_bots: BotsOption = False
    since: SinceOption = None
    until: UntilOption = None
    last: LastOption = None


# The order --help lists the commands' parameters in, their own and their option groups' alike.
_HELP_ORDER = (
    *("rev", "rev_range", "paths", "repo", "model", "lang", "fmt", "template", "output", "ctx"),
    *("threads", "include_bots", "since", "until", "last", "follow_sync", "pr_meta"),
    *("prompt_style", "map_chunks", "no_cache", "no_redact", "gpu_layers", "backend"),
    *("base_url", "server_model", "jobs", "strategy", "no_adapter", "tokens", "debug"),
)


def _parameters(group: type[Any]) -> list[inspect.Parameter]:
    """A dataclass's fields as keyword parameters, with their typer annotations and defaults."""
    annotations = get_type_hints(group, include_extras=True)
    return [
        inspect.Parameter(
            option.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=option.default,
            annotation=annotations[option.name],
        )
        for option in fields(group)
    ]


def with_options(*groups: type[Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """`command(*values, ...)`, one value per dataclass of `groups`, as typer sees it: the
    groups' fields are parameters beside the command's own, in `_HELP_ORDER` (typer reads the
    signature), and are gathered into one value per group for the call."""
    shared = [parameter for group in groups for parameter in _parameters(group)]

    def add_options(command: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())[len(groups) :]
        parameters = sorted(
            (
                parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
                for parameter in [*own, *shared]
            ),
            key=lambda parameter: _HELP_ORDER.index(parameter.name),
        )

        @functools.wraps(command)
        def with_groups(**arguments: Any) -> None:
            values = [
                group(**{option.name: arguments.pop(option.name) for option in fields(group)})
                for group in groups
            ]
            command(*values, **arguments)

        with_groups.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        with_groups.__annotations__ = {
            parameter.name: parameter.annotation for parameter in parameters
        }
        return with_groups

    return add_options


def _query(settings: Settings, selection: RangeOptions, follow_sync: bool) -> RangeQuery:
    bounds = (selection.rev_range, selection.since, selection.until, selection.last)
    if all(bound is None for bound in bounds):
        raise UsageError("give a range A..B, or --since, --until or --last to read back from HEAD")
    return RangeQuery(
        spec=selection.rev_range or "HEAD",
        since=selection.since,
        until=selection.until,
        last=selection.last,
        paths=tuple(selection.paths or ()),
        include_bots=settings.include_bots,
        follow_sync=follow_sync,
    )


@app.command("range")
@with_options(CardOptions, RangeOptions)
def range_command(
    card: CardOptions,
    selection: RangeOptions,
    fmt: FormatOption = None,
    output: OutputOption = None,
    debug: DebugOption = False,
) -> None:
    """Write a card for every PR merged along the first-parent line of A..B."""
    with _errors_to_exit(debug):
        settings = _card_settings(card, selection.include_bots)
        summarizer = _summarizer(settings)
        query = _query(settings, selection, follow_sync=False)
        discovery = summarizer.discover(query)
        code = _write_cards(summarizer, discovery, _chosen_format(fmt, output), output)
    raise typer.Exit(code)


@app.command("show")
@with_options(CardOptions)
def show_command(
    card: CardOptions,
    rev: Annotated[str, typer.Argument(metavar="REV", help="One PR: a sha, a tag, or #N.")],
    fmt: FormatOption = None,
    output: OutputOption = None,
    debug: DebugOption = False,
) -> None:
    """Write the card of one PR."""
    with _errors_to_exit(debug):
        settings = _card_settings(card)
        summarizer = _summarizer(settings)
        code = _write_cards(summarizer, summarizer.find(rev), _chosen_format(fmt, output), output)
    raise typer.Exit(code)


@app.command("list")
@with_options(RangeOptions)
def list_command(
    selection: RangeOptions,
    repo: RepoOption = None,
    fmt: FormatOption = None,
    output: OutputOption = None,
    follow_sync: FollowSyncOption = False,
    pr_meta: PrMetaOption = None,
    tokens: Annotated[
        bool,
        typer.Option(
            "--tokens", help="Also estimate each diff's size in tokens (reads every patch)."
        ),
    ] = False,
    debug: DebugOption = False,
) -> None:
    """List the PRs, direct commits, bot commits and branch syncs of a range. No model is loaded."""
    with _errors_to_exit(debug):
        settings = _settings(
            {"repo": repo, "include_bots": _on(selection.include_bots), "pr_meta": pr_meta}
        )
        from prsum.discovery import estimate_diff_tokens, list_prs

        discovery = list_prs(settings, _query(settings, selection, follow_sync))
        estimates = estimate_diff_tokens(settings, discovery) if tokens else None
        chosen = _chosen_format(fmt, output)
        if chosen is OutputFormat.terminal and output is None:
            from prsum.render.terminal import print_discovery

            with _writing_stdout():
                print_discovery(discovery, estimates, _console())
        elif chosen in (OutputFormat.json, OutputFormat.jsonl):
            _emit(render.discovery_to_json(discovery, estimates), output)
        else:
            _emit(render.discovery_to_markdown(discovery, estimates), output)


@app.command("notes")
@with_options(CardOptions)
def notes_command(
    card: CardOptions,
    rev_range: Annotated[
        str | None,
        typer.Argument(
            metavar="[A..B]",
            help="The release's range. B alone: from the latest tag before B. Nothing: from the latest tag to HEAD.",
            show_default=False,
        ),
    ] = None,
    paths: PathsArgument = None,
    fmt: Annotated[
        OutputFormat | None, typer.Option("--format", "-f", help="md or json. [default: md]")
    ] = None,
    template: Annotated[
        Path | None,
        typer.Option(
            "--template",
            help="A Jinja2 template, given the structured notes (the json form) as `notes`.",
        ),
    ] = None,
    output: OutputOption = None,
    include_bots: BotsOption = False,
    debug: DebugOption = False,
) -> None:
    """Draft release notes for a range: highlights, sections by kind of change, contributors."""
    from prsum.render.notes import (
        load_template,
        notes_to_json,
        notes_to_markdown,
        notes_with_template,
    )
    from prsum.render.terminal import ProgressDisplay

    with _errors_to_exit(debug):
        if fmt not in (None, OutputFormat.md, OutputFormat.json):
            raise UsageError("notes are written as md or json (or through --template)")
        compiled = load_template(template) if template is not None else None
        settings = _card_settings(card, include_bots)
        summarizer = _summarizer(settings)
        spec = summarizer.notes_range(rev_range)
        discovery = summarizer.discover(
            _query(settings, RangeOptions(rev_range=spec, paths=paths), follow_sync=False)
        )
        summarizer.load()
        progress = ProgressDisplay(_console(stderr=True), len(discovery.prs))
        with progress.shown():
            notes, failures = summarizer.release_notes(discovery, progress.update)
        if compiled is not None:
            text = notes_with_template(notes, compiled)
        elif fmt is OutputFormat.json:
            text = notes_to_json(notes)
        else:
            text = notes_to_markdown(notes)
        _emit(text, output)
        for failure in failures:
            typer.echo(f"prsum: error: {failure.pr.label}: {failure.message}", err=True)
    raise typer.Exit(EXIT_PARTIAL if failures else EXIT_OK)


models_app = typer.Typer(
    help="Which model a run would use and why, the GGUF files found locally, and optimizing one.",
)
app.add_typer(models_app, name="models")


@models_app.callback(invoke_without_command=True)
def models_command(
    context: typer.Context,
    repo: RepoOption = None,
    model: ModelOption = None,
    no_adapter: NoAdapterOption = False,
    debug: DebugOption = False,
) -> None:
    """Say which model a run would use and why, and list the GGUF files found locally."""
    from prsum.llm.models import find_local_models, resolve_model
    from prsum.render.terminal import print_models

    if context.invoked_subcommand is not None:
        return
    with _errors_to_exit(debug):
        settings = _settings({"repo": repo, "model": model, "adapter": _off(no_adapter)})
        chosen, problem = None, None
        try:
            resolved = resolve_model(settings)
            chosen = (resolved.path, resolved.reason)
        except PrsumError as exc:
            problem = str(exc)
        print_models(chosen, problem, find_local_models(settings), _console())
        if problem is not None:
            raise typer.Exit(2)


@models_app.command("optimize")
def models_optimize_command(
    model: Annotated[Path, typer.Argument(metavar="MODEL", help="The .gguf file to optimize.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Where to write it. [default: prsum's cache, by the file's hash]"
        ),
    ] = None,
    threads: ThreadsOption = None,
    debug: DebugOption = False,
) -> None:
    """Requantize a model's embedding/output matrix to Q4_0 for faster decoding (the rest stays).

    Pays off for small models, where that matrix is most of what is read per token; the
    default model is used this way already.
    """
    from prsum.llm.models import optimized

    with _errors_to_exit(debug):
        settings = _settings({"threads": threads})
        path = optimized(model, settings.cache_dir, settings.threads, output)
        before, after = model.stat().st_size, path.stat().st_size
        typer.echo(
            f"{path} ({before / 2**20:.0f} MiB -> {after / 2**20:.0f} MiB); use it with --model {path}"
        )


cache_app = typer.Typer(help="The card cache: what is kept, and clearing it.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")
_STORES = ("cards", "notes", "model-hashes")


@cache_app.command("stats")
def cache_stats_command(debug: DebugOption = False) -> None:
    """How many cards and notes the cache holds, and where."""
    from prsum.cache import store_size

    with _errors_to_exit(debug):
        settings = _settings({})
        typer.echo(f"cache: {settings.cache_dir}")
        for name in _STORES:
            entries, size = store_size(settings.cache_dir / name)
            typer.echo(f"  {name:<13} {entries:>6} entries  {size / 1024:>9.1f} KiB")


@cache_app.command("clear")
def cache_clear_command(debug: DebugOption = False) -> None:
    """Forget every cached card and chunk note (the assembled default model stays)."""
    from prsum.cache import clear_store

    with _errors_to_exit(debug):
        settings = _settings({})
        removed = sum(clear_store(settings.cache_dir / name) for name in ("cards", "notes"))
        typer.echo(f"removed {removed} cached cards and notes from {settings.cache_dir}")


def _guard_standard_streams() -> None:
    """Keep file descriptors 0-2 taken. Started with one closed (`prsum ... >&-`), the next file
    opened would get its number, and a library writing to "stdout" would write into it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != fd:  # the lowest free number is this one; keep it whatever happens
                os.dup2(opened, fd)
                os.close(opened)


def main() -> None:
    _guard_standard_streams()
    app()
