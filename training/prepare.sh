#!/usr/bin/env bash
# Prepares what the GPU machine needs, in the git-ignored folder .train/ (run from the repository
# root, after `make install` and `python -m training.build`). MODEL (default coder) names the
# embedded model to tune; PIECE (default 24M) the size of its pieces:
#   .train/model/part.*   the model (as runs use it), in pieces small enough for one transfer
#                         each (a call carries the working tree too: 24M leaves room for a tree
#                         with the small model's 30 MB adapter in it), and its sha256
#   .train/convert/       llama.cpp's LoRA-to-GGUF converter and gguf-py, from the
#                         llama-cpp-python source distribution on PyPI (the version installed)
#   .train/whl/           the gguf and peft wheels (transformers needs gguf to read a GGUF; neither is
#                         on the GPU image)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
mkdir -p .train/model .train/convert .train/whl
model=$("$PY" -c 'import sys
from prsum.config import default_threads, resolve_settings
from prsum.llm.models import embedded_path
from prsum.profiles import EMBEDDED
cache = resolve_settings({}, env={}).cache_dir
print(embedded_path(EMBEDDED[sys.argv[1]], cache, default_threads()))' "${MODEL:-coder}")
rm -f .train/model/part.*
split -b "${PIECE:-24M}" "$model" .train/model/part.
sha256sum "$model" | cut -d' ' -f1 > .train/model/sha256
name=$(basename "$model"); echo "$name" > .train/model/name
version=$("$PY" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$PY" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$work"
tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
vendor=$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)
rm -rf .train/convert/*
cp -r "$vendor"/convert_lora_to_gguf.py "$vendor"/convert_hf_to_gguf.py "$vendor"/conversion "$vendor"/gguf-py .train/convert/
"$PY" -m pip download -q --no-deps --only-binary=:all: gguf peft -d .train/whl
ls -la .train/model
