"""Settings, resolved once: flag > PRSUM_* environment > [tool.prsum] in the target repo >
the user's config file > default.

The repository under review is data, not an authority: its `[tool.prsum]` may set only what
can neither move data off the machine nor turn a protection off (see REPOSITORY_SETTINGS).
Where cards are sent (`backend`, `base_url`, `server_model`, `jobs`), whether secrets are
masked (`redact`) and a model or metadata file outside the repository come from flags, the
environment or the user's own `~/.config/prsum/config.toml`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from prsum.errors import ConfigError
from prsum.profiles import EMBEDDED
from prsum.types import Language

Source = Literal["flag", "env", "pyproject", "user", "default"]
PromptStyleSetting = Literal["auto", "digest", "diff"]
PROMPT_STYLES: tuple[PromptStyleSetting, ...] = ("auto", "digest", "diff")
StrategySetting = Literal["auto", "fields", "whole", "brief", "facts"]
STRATEGIES: tuple[StrategySetting, ...] = ("auto", "fields", "whole", "brief", "facts")
BackendName = Literal["llama", "openai"]
BACKENDS: tuple[BackendName, ...] = ("llama", "openai")
LANGUAGES: tuple[Language, ...] = ("zh", "en")
DEFAULT_CONTEXT = 4096
MIN_CONTEXT = 512
DEFAULT_MAP_CHUNKS = 4


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know, with where each value came from."""

    repo: Path
    model: Path | str | None  # a GGUF file, or an embedded model's name; None: the default
    lang: Language
    ctx: int
    threads: int
    include_bots: bool
    prompt_style: PromptStyleSetting
    pr_meta: Path | None
    map_chunks: int  # model-written notes per PR for diff chunks that do not fit (diff view)
    cache: bool  # read and write the card cache
    redact: bool  # mask credential-like text before any model sees it
    gpu_layers: int  # layers llama.cpp offloads to a GPU (a CUDA/Metal/Vulkan build); 0: CPU only
    cache_dir: Path
    backend: BackendName = "llama"  # llama: the embedded model; openai: a server on base_url
    base_url: str | None = None
    server_model: str | None = None  # the served model's name; None: the first the server lists
    jobs: int = 1  # cards written at once (server backend only)
    strategy: StrategySetting = "auto"  # how cards are written: prsum.cards.strategy
    adapter: bool = True  # an embedded model with prsum's adapter, where it has one
    api_key: str | None = field(default=None, repr=False)  # PRSUM_API_KEY only: never in files
    sources: Mapping[str, Source] = field(default_factory=dict)
    # `[tool.prsum]` keys of the target repository that were not applied, with why: the CLI
    # names them once on stderr.
    refused: tuple[str, ...] = ()


# What the target repository's [tool.prsum] may set: nothing here sends data anywhere or
# weakens a protection. `model` and `pr_meta` only as files inside the repository.
REPOSITORY_SETTINGS = frozenset(
    {"lang", "ctx", "threads", "prompt_style", "map_chunks", "include_bots", "gpu_layers"}
    | {"cache", "model", "pr_meta", "strategy", "adapter"}
)
REPOSITORY_PATH_SETTINGS = frozenset({"model", "pr_meta"})
# Every key a config table may hold; the user's config file may set all of them.
SETTING_KEYS = REPOSITORY_SETTINGS | {"backend", "base_url", "server_model", "jobs", "redact"}


def _to_choice(kind: str, choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def convert(value: Any) -> str:
        for choice in choices:
            if str(value).strip().lower() == choice:
                return choice
        raise ConfigError(f"unknown {kind} {value!r}: choose one of {', '.join(choices)}")

    return convert


_to_language = _to_choice("language", LANGUAGES)
_to_prompt_style = _to_choice("prompt style", PROMPT_STYLES)
_to_backend = _to_choice("backend", BACKENDS)
_to_strategy = _to_choice("strategy", STRATEGIES)


def _to_positive_int(minimum: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"expected a whole number, got {value!r}") from None
        if number < minimum:
            raise ConfigError(f"expected a number of at least {minimum}, got {number}")
        return number

    return convert


def _to_threads(value: Any) -> int:
    """1 to twice the cores: more threads than that only contend (and thousands never finish)."""
    threads = _to_positive_int(1)(value)
    limit = 2 * default_threads()
    if threads > limit:
        raise ConfigError(f"at most {limit} threads on this machine (2 per core), got {threads}")
    return threads


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"expected true or false, got {value!r}")


def _read_toml(path: Path, what: str) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {what} from {path}: {exc}") from None


def read_pyproject_table(repo: Path) -> dict[str, Any]:
    """The `[tool.prsum]` table of the target repo's pyproject.toml, or {} when there is none."""
    pyproject = repo / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    table = _read_toml(pyproject, "[tool.prsum]").get("tool", {}).get("prsum", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.prsum] in {pyproject} is not a table")
    return table


def user_config_path(env: Mapping[str, str]) -> Path:
    """The user's own settings file: PRSUM_CONFIG, else $XDG_CONFIG_HOME/prsum/config.toml."""
    if env.get("PRSUM_CONFIG"):
        return Path(env["PRSUM_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "prsum" / "config.toml"


def read_user_config(env: Mapping[str, str]) -> dict[str, Any]:
    """The user's config file (top-level keys, the same names as [tool.prsum]), or {}."""
    path = user_config_path(env)
    if not path.is_file():
        return {}
    table = _read_toml(path, "settings")
    unknown = sorted(set(table) - SETTING_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown setting {unknown[0]!r}")
    return table


def _trusted_repository_table(
    repo: Path, table: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The part of a repository's [tool.prsum] that it may set, and what was refused and why."""
    allowed: dict[str, Any] = {}
    refused: list[str] = []
    for key, value in table.items():
        if key not in REPOSITORY_SETTINGS:
            refused.append(key if key in SETTING_KEYS else f"{key} (unknown)")
        elif key in REPOSITORY_PATH_SETTINGS and not _inside(repo, str(value)):
            refused.append(f"{key} (a file outside the repository)")
        else:
            allowed[key] = value
    return allowed, refused


def _inside(repo: Path, value: str) -> bool:
    """True when the path `value` (relative to the repository) lies in it once symbolic links
    are followed."""
    path = Path(os.path.expanduser(value))
    return (repo / path).resolve().is_relative_to(repo.resolve())


def default_threads() -> int:
    """All cores: llama.cpp's own default is half of them, which halves prefill speed here."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def user_cache_dir(env: Mapping[str, str]) -> Path:
    """Where prsum keeps the assembled default model and model hashes."""
    if env.get("PRSUM_CACHE_DIR"):
        return Path(env["PRSUM_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "prsum"


def resolve_settings(
    flags: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Resolve every setting once. `flags` holds only the options the user gave (None = not given)."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    sources: dict[str, Source] = {}

    repo_value = flags.get("repo") or env.get("PRSUM_REPO")
    repo = Path(repo_value).expanduser() if repo_value else cwd
    repo = repo if repo.is_absolute() else (cwd / repo)
    sources["repo"] = "flag" if flags.get("repo") else ("env" if repo_value else "default")
    table, refused = _trusted_repository_table(
        repo, read_pyproject_table(repo) if repo.is_dir() else {}
    )
    user = read_user_config(env)

    def pick(name: str, convert: Callable[[Any], Any], default: Any) -> Any:
        if flags.get(name) is not None:
            sources[name] = "flag"
            raw, where = flags[name], f"--{name}"
        elif env.get(f"PRSUM_{name.upper()}"):
            sources[name] = "env"
            raw, where = env[f"PRSUM_{name.upper()}"], f"PRSUM_{name.upper()}"
        elif name in table:
            sources[name] = "pyproject"
            raw, where = table[name], f"[tool.prsum] {name}"
        elif name in user:
            sources[name] = "user"
            raw, where = user[name], f"{user_config_path(env)}: {name}"
        else:
            sources[name] = "default"
            return default
        try:
            return convert(raw)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    def model_setting(value: Any) -> Path | str:
        """An embedded model's name (`coder`, `small`), else a file."""
        return str(value) if str(value) in EMBEDDED else path_setting("model")(value)

    def path_setting(name: str) -> Callable[[Any], Path]:
        def convert(value: Any) -> Path:
            # A path named in a file is relative to where that file is.
            path = Path(os.path.expanduser(str(value)))
            base = {"pyproject": repo, "user": user_config_path(env).parent}.get(sources[name], cwd)
            return path if path.is_absolute() else base / path

        return convert

    return Settings(
        repo=repo,
        model=pick("model", model_setting, None),
        lang=pick("lang", _to_language, "zh"),
        ctx=pick("ctx", _to_positive_int(MIN_CONTEXT), DEFAULT_CONTEXT),
        threads=pick("threads", _to_threads, default_threads()),
        include_bots=pick("include_bots", _to_bool, False),
        prompt_style=pick("prompt_style", _to_prompt_style, "auto"),
        pr_meta=pick("pr_meta", path_setting("pr_meta"), None),
        map_chunks=pick("map_chunks", _to_positive_int(0), DEFAULT_MAP_CHUNKS),
        cache=pick("cache", _to_bool, True),
        redact=pick("redact", _to_bool, True),
        gpu_layers=pick("gpu_layers", _to_positive_int(0), 0),
        strategy=pick("strategy", _to_strategy, "auto"),
        adapter=pick("adapter", _to_bool, True),
        cache_dir=user_cache_dir(env),
        sources=sources,
        refused=tuple(refused),
        **_backend_settings(flags.get("model") is not None, pick, env),
    )


def _backend_settings(
    flagged_model: bool,
    pick: Callable[[str, Callable[[Any], Any], Any], Any],
    env: Mapping[str, str],
) -> dict[str, Any]:
    """Which model runs the cards: the embedded one, or a server with jobs in parallel."""
    backend = pick("backend", _to_backend, "llama")
    base_url = pick("base_url", str, None)
    jobs = pick("jobs", _to_positive_int(1), 1)
    if backend == "openai" and not base_url:
        raise ConfigError("--backend openai needs --base-url, e.g. http://127.0.0.1:8080")
    if backend == "llama" and jobs > 1:
        raise ConfigError(
            "--jobs needs --backend openai: the embedded model writes one card at a time"
        )
    if backend == "openai" and flagged_model:
        raise ConfigError(
            "--model names a GGUF file for the embedded backend; name a served model with --server-model"
        )
    return {
        "backend": backend,
        "base_url": base_url,
        "server_model": pick("server_model", str, None),
        "jobs": jobs,
        "api_key": env.get("PRSUM_API_KEY") or None,
    }
