#!/usr/bin/env bash
# Runs on the GPU machine (its python3 has torch, transformers and peft): reassembles the
# default model from the pieces already copied to /tmp/model, checks it, trains the adapter
# and converts it to GGUF, handed back in pieces with its sha256. Arguments: the folder for
# results ($OUT there), then any options of training/train.py (--epochs, --rank,
# --tokens-per-batch).
set -euo pipefail
out=$1
shift
name=$(cat .train/model/name)
cat /tmp/model/part.* > "/tmp/model/$name"
echo "$(cat .train/model/sha256)  /tmp/model/$name" | sha256sum -c -
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .train/whl/*.whl
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 training/train.py --model "/tmp/model/$name" --data training/data/examples.npz --out "$out" \
    --max-seconds 480 "$@"
python3 .train/convert/convert_lora_to_gguf.py "$out/adapter" --base "$out/base" \
    --outfile "$out/cards-lora-f16.gguf" --outtype f16
# The device hands back files under a size limit that a rank-64 adapter (30 MB) passes over:
# the adapter comes back in pieces, with its sha256 to check them against once joined.
(cd "$out" && sha256sum cards-lora-f16.gguf > cards-lora-f16.gguf.sha256 \
    && split -b 12m cards-lora-f16.gguf cards-lora-f16.gguf.part. \
    && rm -f cards-lora-f16.gguf adapter/adapter_model.safetensors)
