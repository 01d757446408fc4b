"""Model resolution and discovery: which GGUF, why, and the ones already on the machine."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from prsum.config import resolve_settings
from prsum.errors import ModelError
from prsum.llm.models import (
    adapter_of,
    assembled,
    check_gguf,
    find_local_models,
    resolve_model,
    tuned,
)
from prsum.profiles import EMBEDDED, EmbeddedModel

GGUF = b"GGUF\x03\x00\x00\x00" + bytes(64)


def gguf(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(GGUF)
    return path


def test_resolution_order_flag_env_pyproject(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    from_file = gguf(repo / "models" / "team.gguf")
    (repo / "pyproject.toml").write_text('[tool.prsum]\nmodel = "models/team.gguf"\n')
    assert resolve_model(resolve_settings({"repo": str(repo)}, env={})).path == from_file
    env_model = gguf(tmp_path / "env.gguf")
    chosen = resolve_model(
        resolve_settings({"repo": str(repo)}, env={"PRSUM_MODEL": str(env_model)})
    )
    assert (chosen.path, chosen.reason) == (env_model, "from PRSUM_MODEL")
    flag_model = gguf(tmp_path / "flag.gguf")
    chosen = resolve_model(
        resolve_settings(
            {"repo": str(repo), "model": str(flag_model)}, env={"PRSUM_MODEL": str(env_model)}
        )
    )
    assert (chosen.path, chosen.reason) == (flag_model, "from --model")


def chunk_packages(root: Path, pieces: list[bytes]) -> EmbeddedModel:
    """An embedded model made of made-up chunk packages under `root`, put on sys.path."""
    chunks = []
    for number, piece in enumerate(pieces, 1):
        package = root / f"prsum_test_chunks_{root.name}_{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / "piece.bin").write_bytes(piece)
        chunks.append((package.name, "data/piece.bin"))
    whole = b"".join(pieces)
    return EmbeddedModel(
        name="tiny",
        file="tiny.gguf",
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        chunks=tuple(chunks),
        title="a made-up model",
        licence="none",
    )


def test_an_embedded_model_is_joined_from_its_chunks_once_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pieces = [GGUF, b"weights" * 1000, b"more weights"]
    (tmp_path / "site").mkdir()
    model = chunk_packages(tmp_path / "site", pieces)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    cache = tmp_path / "cache"
    path = assembled(model, cache)
    assert path == cache / "models" / "tiny.gguf" and path.read_bytes() == b"".join(pieces)
    made = path.stat().st_mtime_ns
    assert assembled(model, cache).stat().st_mtime_ns == made  # joined once, then reused
    # A damaged chunk: one line, nothing left behind, no model file to load.
    damaged = replace(model, sha256="0" * 64, file="damaged.gguf")
    with pytest.raises(ModelError, match="a chunk package is damaged"):
        assembled(damaged, cache)
    assert sorted(p.name for p in (cache / "models").iterdir()) == ["tiny.gguf"]
    missing = replace(model, chunks=(("prsum_no_such_chunk", "data/piece.bin"),))
    with pytest.raises(ModelError, match=r"not installed .*prsum\[default-model\]"):
        assembled(replace(missing, file="missing.gguf"), cache)


def test_an_embedded_model_is_chosen_by_its_name(tmp_path: Path) -> None:
    settings = resolve_settings({"repo": str(tmp_path), "model": "coder"}, env={})
    assert settings.model == "coder"
    (tmp_path / "pyproject.toml").write_text('[tool.prsum]\nmodel = "small"\n')
    assert resolve_settings({"repo": str(tmp_path)}, env={}).model == "small"
    # Any other value is a file, relative to where it was given.
    flagged = resolve_settings({"repo": str(tmp_path), "model": "coder.gguf"}, env={}, cwd=tmp_path)
    assert flagged.model == tmp_path / "coder.gguf"


def test_check_gguf_rejects_what_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        check_gguf(tmp_path / "missing.gguf")
    with pytest.raises(ModelError, match="is not a file"):
        check_gguf(tmp_path)
    (tmp_path / "text.gguf").write_text("hello")
    with pytest.raises(ModelError, match="not a GGUF model file"):
        check_gguf(tmp_path / "text.gguf")


def test_discovery_in_every_known_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    repo.mkdir()
    in_repo = gguf(repo / "models" / "local.gguf")
    snapshot = gguf(
        home
        / ".cache/huggingface/hub/models--Qwen--Qwen2.5-Coder-1.5B-Instruct-GGUF/snapshots/abc123/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    )
    lm_studio = gguf(home / ".lmstudio/models/lmstudio-community/gemma-3-1b/gemma-3-1b-Q4_K_M.gguf")
    ollama = home / ".ollama/models"
    blob = gguf(ollama / "blobs" / ("sha256-" + "ab" * 32))
    manifest = ollama / "manifests/registry.ollama.ai/library/qwen2.5-coder/1.5b"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        json.dumps(
            {
                "layers": [
                    {
                        "mediaType": "application/vnd.ollama.image.license",
                        "digest": "sha256:" + "cd" * 32,
                    },
                    {
                        "mediaType": "application/vnd.ollama.image.model",
                        "digest": "sha256:" + "ab" * 32,
                    },
                ]
            }
        )
    )
    (ollama / "manifests/registry.ollama.ai/library/broken").mkdir(parents=True)
    (ollama / "manifests/registry.ollama.ai/library/broken/latest").write_text("{not json")
    settings = resolve_settings(
        {"repo": str(repo)}, env={"HOME": str(home), "PRSUM_CACHE_DIR": str(tmp_path / "cache")}
    )
    found = {
        (model.source, model.name): model.path
        for model in find_local_models(settings, env={"HOME": str(home)})
    }
    assert found[("models/", "local.gguf")] == in_repo
    assert (
        found[
            (
                "Hugging Face",
                "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            )
        ]
        == snapshot
    )
    assert found[("LM Studio", "gemma-3-1b-Q4_K_M.gguf")] == lm_studio
    assert found[("Ollama", "qwen2.5-coder:1.5b")] == blob
    assert len(found) == 4


def test_environment_overrides_for_hf_and_ollama(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    gguf(hub / "models--org--m/snapshots/r1/m.gguf")
    settings = resolve_settings(
        {"repo": str(tmp_path)}, env={"PRSUM_CACHE_DIR": str(tmp_path / "cache")}
    )
    found = find_local_models(
        settings, env={"HOME": str(tmp_path / "nohome"), "HF_HUB_CACHE": str(hub)}
    )
    assert [(m.source, m.name) for m in found] == [("Hugging Face", "org/m/m.gguf")]


def test_gpu_layers_reach_llama_cpp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import llama_cpp

    from prsum.llm.llama import LlamaBackend
    from prsum.pipeline import open_llama_backend

    seen: dict[str, object] = {}

    class Recorder:
        def __init__(self, **kwargs: object) -> None:
            seen.update(kwargs)
            self.metadata = {"general.architecture": "x", "x.context_length": "8192"}

    monkeypatch.setattr(llama_cpp, "Llama", Recorder)
    settings = resolve_settings({"repo": str(tmp_path), "gpu_layers": 99, "threads": 2}, env={})
    model = resolve_model(
        resolve_settings({"repo": str(tmp_path), "model": str(gguf(tmp_path / "m.gguf"))}, env={})
    )
    backend = open_llama_backend(settings, model, "0" * 64)
    assert isinstance(backend, LlamaBackend)
    backend._load(vocab_only=False)
    assert (seen["n_gpu_layers"], seen["n_threads"], seen["n_threads_batch"], seen["swa_full"]) == (
        99,
        2,
        2,
        True,
    )


@pytest.mark.model
def test_optimize_requantizes_the_output_matrix_once(small_model: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from prsum.cli import app
    from prsum.llm.llama import LlamaBackend
    from prsum.llm.models import assembled, optimized_path

    cache = Path(os.environ["PRSUM_CACHE_DIR"])
    packaged = assembled(EMBEDDED["small"], cache)
    # The small model a run resolves to is the packaged model, optimized, kept in the cache.
    assert small_model == optimized_path(packaged, cache)
    env = {**os.environ, "PRSUM_MODEL": "small"}
    base = resolve_model(resolve_settings({}, env={**env, "PRSUM_ADAPTER": "0"}))
    assert (base.path, base.adapter) == (small_model, None)
    # With prsum's adapter (the default), the same model with the adapter merged in, once.
    tuned_model = resolve_model(resolve_settings({}, env=env))
    adapter = adapter_of(EMBEDDED["small"])
    assert adapter is not None
    assert tuned_model.adapter == adapter and "merged in" in tuned_model.reason
    assert tuned_model.path == tuned(small_model, adapter, cache)

    target = tmp_path / "small.gguf"
    result = CliRunner().invoke(app, ["models", "optimize", str(packaged), "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == small_model.read_bytes()  # the same bytes, deterministically
    assert target.stat().st_size < 0.7 * packaged.stat().st_size
    made = small_model.stat().st_mtime_ns
    again = CliRunner().invoke(app, ["models", "optimize", str(packaged)])
    assert again.output.startswith(f"{small_model} (")
    assert small_model.stat().st_mtime_ns == made  # made once into the cache, then reused

    backend = LlamaBackend(target, ctx_cap=512, threads=2, sha256="0" * 64)
    assert backend.complete("def add(a, b):\n", max_tokens=8, stop=["\n\n"]).text.strip()


def test_optimize_refuses_what_is_not_a_model(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from prsum.cli import app

    text = tmp_path / "notes.txt"
    text.write_text("hello")
    result = CliRunner().invoke(app, ["models", "optimize", str(text)])
    assert result.exit_code == 2
    assert (
        result.output
        == f"prsum: error: {text} is not a GGUF model file (llama.cpp needs .gguf weights)\n"
    )


def write_gguf(path: Path, tensors: dict[str, np.ndarray], **floats: float) -> None:
    """A GGUF file of `tensors` (F32, or Q8_0 where named `*.q8`) and float metadata."""
    import gguf

    writer = gguf.GGUFWriter(path, arch="gemma3")
    for key, value in floats.items():
        writer.add_float32(key.replace("_", "."), value)
    for name, data in tensors.items():
        if name.endswith(".q8"):
            q8 = gguf.GGMLQuantizationType.Q8_0
            writer.add_tensor(
                name.removesuffix(".q8"), gguf.quants.quantize(data, q8), raw_dtype=q8
            )
        else:
            writer.add_tensor(name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_an_adapter_is_merged_into_the_weights_it_names(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    from prsum.llm.merge import merge_adapter

    rng = np.random.default_rng(7)
    weight = rng.normal(size=(8, 64)).astype(np.float32)
    norm = rng.normal(size=64).astype(np.float32)
    down = rng.normal(size=(2, 64)).astype(np.float32)  # lora_a: rank x inputs
    up = rng.normal(size=(8, 2)).astype(np.float32)  # lora_b: outputs x rank
    model, adapter, target = tmp_path / "m.gguf", tmp_path / "a.gguf", tmp_path / "t.gguf"
    write_gguf(model, {"blk.0.attn_q.weight.q8": weight, "blk.0.attn_norm.weight": norm})
    lora = {"blk.0.attn_q.weight.lora_a": down, "blk.0.attn_q.weight.lora_b": up}
    write_gguf(adapter, lora, adapter_lora_alpha=4.0)

    merge_adapter(model, adapter, target)
    merged = {t.name: t for t in gguf.GGUFReader(target).tensors}
    q = merged["blk.0.attn_q.weight"]
    assert q.tensor_type == gguf.GGMLQuantizationType.Q8_0
    expected = weight + up @ down * (4.0 / 2)  # alpha / rank
    assert np.abs(gguf.quants.dequantize(q.data, q.tensor_type) - expected).max() < 0.1
    assert np.array_equal(merged["blk.0.attn_norm.weight"].data, norm)  # untouched


def test_a_new_adapter_replaces_the_merge_of_the_old_one(tmp_path: Path) -> None:
    pytest.importorskip("gguf")
    rng = np.random.default_rng(3)
    model = tmp_path / "base.gguf"
    write_gguf(model, {"blk.0.attn_q.weight.q8": rng.normal(size=(8, 64)).astype(np.float32)})
    other = tmp_path / "models" / "other.0123456789ab.tuned.gguf"  # another model's merge
    other.parent.mkdir()
    other.write_bytes(b"GGUF")

    def adapter(name: str) -> Path:
        path = tmp_path / name
        lora = {
            "blk.0.attn_q.weight.lora_a": rng.normal(size=(2, 64)).astype(np.float32),
            "blk.0.attn_q.weight.lora_b": rng.normal(size=(8, 2)).astype(np.float32),
        }
        write_gguf(path, lora, adapter_lora_alpha=4.0)
        return path

    first = tuned(model, adapter("one.gguf"), tmp_path)
    assert tuned(model, tmp_path / "one.gguf", tmp_path) == first  # reused, not merged again
    second = tuned(model, adapter("two.gguf"), tmp_path)
    assert second != first and second.is_file() and not first.exists()
    assert other.is_file()  # only this model's merges are replaced


def test_two_adapters_average_into_one_of_their_rank(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    from training.soup import soup

    rng = np.random.default_rng(5)
    down = rng.normal(size=(2, 64)).astype(np.float32)  # both share it: their average is rank 2
    ups = [rng.normal(size=(8, 2)).astype(np.float32) for _ in range(2)]
    paths = [tmp_path / "a.gguf", tmp_path / "b.gguf"]
    for path, up in zip(paths, ups, strict=True):
        lora = {"blk.0.attn_q.weight.lora_a": down, "blk.0.attn_q.weight.lora_b": up}
        write_gguf(path, lora, adapter_lora_alpha=4.0)

    kept = soup(*paths, 0.25, tmp_path / "soup.gguf")
    result = gguf.GGUFReader(tmp_path / "soup.gguf")
    factors = {t.name: np.asarray(t.data, dtype=np.float32) for t in result.tensors}
    assert factors["blk.0.attn_q.weight.lora_a"].shape == (2, 64)  # the inputs' rank
    update = factors["blk.0.attn_q.weight.lora_b"] @ factors["blk.0.attn_q.weight.lora_a"]
    expected = (0.25 * ups[0] + 0.75 * ups[1]) @ down
    assert np.abs(update - expected).max() < 0.01 * np.abs(expected).max()  # f16
    assert kept == [pytest.approx(1.0)]
    assert float(result.fields["adapter.lora.alpha"].contents()) == 4.0

    (tmp_path / "text.gguf").write_text("not a model")
    with pytest.raises(SystemExit, match="cannot read"):
        soup(tmp_path / "text.gguf", paths[1], 0.5, tmp_path / "other.gguf")
    model = tmp_path / "model.gguf"
    write_gguf(model, {"blk.0.attn_q.weight": ups[0]})
    with pytest.raises(SystemExit, match="is not a LoRA adapter"):
        soup(model, paths[1], 0.5, tmp_path / "other.gguf")


def test_an_adapter_for_another_model_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("gguf")
    from prsum.llm.merge import merge_adapter

    model, adapter = tmp_path / "m.gguf", tmp_path / "a.gguf"
    write_gguf(model, {"blk.0.attn_norm.weight": np.ones(64, dtype=np.float32)})
    pair = np.ones((2, 64), dtype=np.float32)
    write_gguf(
        adapter,
        {"blk.0.attn_q.weight.lora_a": pair, "blk.0.attn_q.weight.lora_b": pair.T.copy()},
        adapter_lora_alpha=4.0,
    )
    with pytest.raises(ModelError, match="does not fit"):
        merge_adapter(model, adapter, tmp_path / "t.gguf")
    assert not list(tmp_path.glob("*t.gguf*"))  # nothing partial is left behind


def test_without_gguf_the_merge_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prsum.llm.merge import merge_adapter

    monkeypatch.setitem(sys.modules, "gguf", None)  # an import of it now fails
    with pytest.raises(ModelError, match=r"needs the gguf package: pip install"):
        merge_adapter(tmp_path / "m.gguf", tmp_path / "a.gguf", tmp_path / "t.gguf")
