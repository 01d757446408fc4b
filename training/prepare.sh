#!/usr/bin/env bash
# Prepares what the GPU machine needs, in the git-ignored folder .train/ (run from the repository
# root, after `make install` and `python -m training.build`):
#   .train/model/part.*   the default model (as runs use it: output matrix in Q4_0), in pieces
#                         small enough for one transfer each, and its sha256
#   .train/convert/       llama.cpp's LoRA-to-GGUF converter and gguf-py, from the
#                         llama-cpp-python source distribution on PyPI (the version installed)
#   .train/whl/           the gguf wheel (transformers needs it to read a GGUF; not on the GPU image)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
mkdir -p .train/model .train/convert .train/whl
model=$("$PY" -c 'from prsum.config import default_threads, resolve_settings
from prsum.llm.models import default_model
print(default_model(resolve_settings({}, env={}).cache_dir, default_threads()))')
rm -f .train/model/part.*
# 24 MiB: a call carries the working tree too, and with the 30 MB adapter in it a bigger piece
# goes over the 64 MiB a call takes.
split -b 24M "$model" .train/model/part.
sha256sum "$model" | cut -d' ' -f1 > .train/model/sha256
name=$(basename "$model"); echo "$name" > .train/model/name
version=$("$PY" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$PY" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$work"
tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
vendor=$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)
rm -rf .train/convert/*
cp -r "$vendor"/convert_lora_to_gguf.py "$vendor"/convert_hf_to_gguf.py "$vendor"/conversion "$vendor"/gguf-py .train/convert/
"$PY" -m pip download -q --no-deps --only-binary=:all: gguf -d .train/whl
ls -la .train/model
