#!/usr/bin/env bash
# Runs on the GPU machine (its python3 has torch and transformers; peft and gguf come as wheels
# in .train/whl): reassembles the model from the pieces already copied to /tmp/model, checks
# it, trains the adapter and converts it to GGUF, handed back in pieces with its sha256.
# Arguments: the folder for results ($OUT there), then any options of training/train.py
# (--epochs, --rank, --tokens-per-batch). DATA names the examples (default
# training/data/examples.npz), ADAPTER the adapter's file name (default cards-lora-f16.gguf).
set -euo pipefail
out=$1
shift
data=${DATA:-training/data/examples.npz}
adapter=${ADAPTER:-cards-lora-f16.gguf}
name=$(cat .train/model/name)
cat /tmp/model/part.* > "/tmp/model/$name"
echo "$(cat .train/model/sha256)  /tmp/model/$name" | sha256sum -c -
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .train/whl/*.whl
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 training/train.py --model "/tmp/model/$name" --data "$data" --out "$out" \
    --max-seconds "${MAX_SECONDS:-420}" "$@"
python3 .train/convert/convert_lora_to_gguf.py "$out/adapter" --base "$out/base" \
    --outfile "$out/$adapter" --outtype f16
# The device hands back files of at most 16 MiB: the adapter comes back in pieces, with its
# sha256 to check them against once joined.
(cd "$out" && sha256sum "$adapter" > "$adapter.sha256" \
    && split -b 12m "$adapter" "$adapter.part." \
    && rm -f "$adapter" adapter/adapter_model.safetensors)
