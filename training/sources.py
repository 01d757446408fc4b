"""The public histories the corpus may draw on, with their main language.

The list is fixed by the corpus brief (issue 14): cards are written only for these repositories,
and never for a repository whose PRs are used to measure prsum (../shared/eval).
"""

from __future__ import annotations

SOURCES: dict[str, str] = {
    "pallets/flask": "Python",
    "encode/httpx": "Python",
    "pydantic/pydantic": "Python",
    "fastapi/fastapi": "Python",
    "psf/black": "Python",
    "pytest-dev/pytest": "Python",
    "python-poetry/poetry": "Python",
    "pypa/pip": "Python",
    "huggingface/peft": "Python",
    "huggingface/trl": "Python",
    "huggingface/accelerate": "Python",
    "OpenRLHF/OpenRLHF": "Python",
    "sgl-project/sglang": "Python",
    "vllm-project/vllm": "Python",
    "Lightning-AI/litgpt": "Python",
    "BurntSushi/ripgrep": "Rust",
    "sharkdp/bat": "Rust",
    "tokio-rs/axum": "Rust",
    "clap-rs/clap": "Rust",
    "astral-sh/ruff": "Rust",
    "astral-sh/uv": "Rust",
    "charmbracelet/bubbletea": "Go",
    "junegunn/fzf": "Go",
    "spf13/viper": "Go",
    "prometheus/client_golang": "Go",
    "go-chi/chi": "Go",
    "vitejs/vite": "TypeScript",
    "colinhacks/zod": "TypeScript",
    "pmndrs/zustand": "TypeScript",
    "expressjs/express": "JavaScript",
    "vercel/swr": "TypeScript",
    "withastro/astro": "TypeScript",
    "ggml-org/llama.cpp": "C/C++",
    "fmtlib/fmt": "C/C++",
    "nlohmann/json": "C/C++",
    "redis/redis": "C/C++",
    "square/okhttp": "JVM",
    "google/gson": "JVM",
}

# Repositories whose PRs measure prsum (../shared/eval/references.json names them by these short
# names). None of their PRs may enter training data or prompts, whoever owns the repository.
REFERENCE_REPOSITORY_NAMES: frozenset[str] = frozenset(
    {"typer", "click", "fd", "cobra", "hono", "verl"}
)

MAX_PRS_PER_REPOSITORY = 60


def is_reference_repository(repo: str) -> bool:
    """True for any `owner/name` whose name is one of the measuring repositories."""
    return repo.rsplit("/", 1)[-1].lower() in REFERENCE_REPOSITORY_NAMES
