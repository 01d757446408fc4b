"""Average two LoRA adapters of the same model and rank into one of that rank (a "model soup").

Two runs that differ in one option (here the zh weight of the loss) learn different trades
between the languages; their weight-space average can hold more of each than either alone.
The average of two rank-r updates has rank up to 2r: it is cut back to r by a singular value
decomposition per weight matrix, so the result is as small as its inputs (the share of the
update's energy that the cut keeps is printed; measured above 99.5% for runs 11 and 12).

    python -m training.soup A.gguf B.gguf --weight 0.5 --out cards-lora-f16.gguf

`--weight` is A's share (B gets the rest). Needs numpy and gguf (the `default-model` extra).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import gguf
import numpy as np

from prsum.llm.merge import LORA_A, LORA_B, writer_like


def factors(path: Path) -> tuple[gguf.GGUFReader, dict[str, np.ndarray]]:
    """The adapter's reader and its tensors; a file that is no GGUF ends the run in one line."""
    try:
        reader = gguf.GGUFReader(path)
        alpha = reader.fields.get("adapter.lora.alpha")
    except (OSError, ValueError) as exc:
        raise SystemExit(f"cannot read {path}: {exc}") from None
    if alpha is None:
        raise SystemExit(f"{path} is not a LoRA adapter (no adapter.lora.alpha)")
    return reader, {t.name: np.asarray(t.data, dtype=np.float32) for t in reader.tensors}


def soup(first: Path, second: Path, weight: float, out: Path) -> list[float]:
    """Write `weight` × `first`'s update + (1 − `weight`) × `second`'s to `out`, at their rank;
    the share of each matrix's update that the rank cut keeps."""
    reader, a = factors(first)
    other, b = factors(second)
    alpha = float(reader.fields["adapter.lora.alpha"].contents())
    if alpha != float(other.fields["adapter.lora.alpha"].contents()) or a.keys() != b.keys():
        raise SystemExit(f"{first.name} and {second.name} are not adapters of one shape")
    writer = writer_like(reader, out)
    kept = []
    for name in sorted(n.removesuffix(LORA_A) for n in a if n.endswith(LORA_A)):
        rank = a[name + LORA_A].shape[0]
        # Both updates are scaled alike (alpha / rank), so their unscaled products average.
        update = weight * (a[name + LORA_B] @ a[name + LORA_A]) + (1 - weight) * (
            b[name + LORA_B] @ b[name + LORA_A]
        )
        left, values, right = np.linalg.svd(update, full_matrices=False)
        kept.append(float((values[:rank] ** 2).sum() / (values**2).sum()))
        root = np.sqrt(values[:rank])  # split evenly between the two factors
        writer.add_tensor(name + LORA_A, (root[:, None] * right[:rank]).astype(np.float16))
        writer.add_tensor(name + LORA_B, (left[:, :rank] * root[None, :]).astype(np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--weight", type=float, default=0.5, help="the first adapter's share")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not 0 <= args.weight <= 1:
        parser.error("--weight is a share between 0 and 1")
    kept = soup(args.first, args.second, args.weight, args.out)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"{args.out}: sha256 {digest}; the rank cut keeps {min(kept):.2%} or more of each update")


if __name__ == "__main__":
    main()
