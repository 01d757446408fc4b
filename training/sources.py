"""The public histories the corpus may draw on, with their main language.

Cards are written only for these repositories (the corpus brief, issue 14, chose the first 38;
issue 16 added more to widen the training data), and never for a repository whose PRs
are used to measure prsum (../shared/eval).
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
    "encode/starlette": "Python",
    "Textualize/textual": "Python",
    "deepspeedai/DeepSpeed": "Python",
    "NVIDIA/Megatron-LM": "Python",
    "huggingface/datasets": "Python",
    "hiyouga/LLaMA-Factory": "Python",
    "Textualize/rich": "Python",
    "huggingface/diffusers": "Python",
    "pytorch/torchtune": "Python",
    "pallets/werkzeug": "Python",
    "BurntSushi/ripgrep": "Rust",
    "sharkdp/bat": "Rust",
    "tokio-rs/axum": "Rust",
    "clap-rs/clap": "Rust",
    "astral-sh/ruff": "Rust",
    "astral-sh/uv": "Rust",
    "tokio-rs/tokio": "Rust",
    "eza-community/eza": "Rust",
    "casey/just": "Rust",
    "ajeetdsouza/zoxide": "Rust",
    "starship/starship": "Rust",
    "charmbracelet/bubbletea": "Go",
    "junegunn/fzf": "Go",
    "spf13/viper": "Go",
    "prometheus/client_golang": "Go",
    "go-chi/chi": "Go",
    "urfave/cli": "Go",
    "gin-gonic/gin": "Go",
    "charmbracelet/lipgloss": "Go",
    "labstack/echo": "Go",
    "spf13/pflag": "Go",
    "go-task/task": "Go",
    "caddyserver/caddy": "Go",
    "vitejs/vite": "TypeScript",
    "colinhacks/zod": "TypeScript",
    "pmndrs/zustand": "TypeScript",
    "expressjs/express": "JavaScript",
    "fastify/fastify": "JavaScript",
    "vercel/swr": "TypeScript",
    "withastro/astro": "TypeScript",
    "unjs/h3": "TypeScript",
    "sindresorhus/ky": "TypeScript",
    "trpc/trpc": "TypeScript",
    "elysiajs/elysia": "TypeScript",
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
