"""`python -m llama_cpp.server`, with two llama.cpp defaults set as prsum's embedded backend sets them.

On CPUs with AMX, llama.cpp's repacked weights crash on the first decode (see
`prsum.llm.llama.without_amx_repacking`), and Gemma 3 needs its full sliding-window cache for a
reused prompt prefix to stay correct. The server takes neither as a setting, so this runs the
server's own `__main__` with both defaults adjusted. Arguments are the server's.

`start()` runs it on a free port of 127.0.0.1 for the tests and the benchmarks.
"""

from __future__ import annotations

import os
import runpy
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO

STARTUP_SECONDS = 120


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(
    model: Path, log: IO[str], ctx: int = 4096, chat_format: str | None = "gemma"
) -> tuple[subprocess.Popen[bytes], str]:
    """The server running `model` on 127.0.0.1, once it answers; the process and its base URL.
    `chat_format` is the server's name for the model family's format (the small model, a base
    model, has no template of its own); None uses the template inside the model."""
    port = _free_port()
    threads = str(len(os.sched_getaffinity(0)))
    process = subprocess.Popen(
        [
            *(sys.executable, __file__, "--model", str(model), "--host", "127.0.0.1"),
            *("--port", str(port), "--n_ctx", str(ctx), "--flash_attn", "true"),
            *("--n_threads", threads, "--n_threads_batch", threads),
            *(("--chat_format", chat_format) if chat_format else ()),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).resolve().parent.parent,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            with urllib.request.urlopen(f"{url}/v1/models", timeout=5):
                return process, url
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"llama_cpp.server did not start (log: {log.name})") from None
            time.sleep(0.5)


def _serve() -> None:
    from prsum.llm.llama import llama_defaults, without_amx_repacking

    with (
        llama_defaults("llama_context_default_params", swa_full=True),
        without_amx_repacking(),
    ):
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    _serve()
