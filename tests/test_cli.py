"""The installed command line: help texts, and bad input answered with one line and exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prsum.cli import app
from tests.conftest import RepoBuilder


def run_prsum(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, as a user runs it; `env` adds to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "prsum", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.mark.parametrize("command", ["range", "show", "list", "models"])
def test_every_command_has_help(command: str) -> None:
    result = run_prsum(command, "--help")
    assert result.returncode == 0
    assert "Usage:" in result.stdout
    info = app.registered_commands
    assert all(c.callback.__doc__ for c in info)  # type: ignore[union-attr]


def assert_one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prsum: error: "), result.stderr
    assert fragment in lines[0]


def test_not_a_git_repository(tmp_path: Path) -> None:
    assert_one_line_error(
        run_prsum("list", "HEAD", "--repo", str(tmp_path)), "not a git repository"
    )


def test_unknown_revision(repo: RepoBuilder) -> None:
    assert_one_line_error(
        run_prsum("range", "v0..no-such-tag", "--repo", str(repo.path)),
        "unknown revision 'no-such-tag'",
    )


def test_empty_and_reversed_ranges(repo: RepoBuilder) -> None:
    repo.commit("Change (#1)", {"a.py": "a = 1\n"})
    assert_one_line_error(
        run_prsum("range", "main..main", "--repo", str(repo.path)), "selects no commits"
    )
    assert_one_line_error(
        run_prsum("list", "main..v0", "--repo", str(repo.path)), "selects no commits"
    )


def test_missing_and_non_gguf_model_files(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("Change (#1)", {"a.py": "a = 1\n"})
    missing = tmp_path / "missing.gguf"
    assert_one_line_error(
        run_prsum("range", "v0..main", "--repo", str(repo.path), "--model", str(missing)),
        "does not exist",
    )
    text = tmp_path / "notes.gguf"
    text.write_text("not a model\n")
    assert_one_line_error(
        run_prsum("range", "v0..main", "--repo", str(repo.path), "--model", str(text)),
        "not a GGUF model file",
    )
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert_one_line_error(
        run_prsum("show", "HEAD", "--repo", str(repo.path), "--model", str(truncated)),
        "cannot load",
    )


def test_bad_setting_from_the_environment(repo: RepoBuilder) -> None:
    result = run_prsum("list", "v0..main", "--repo", str(repo.path), env={"PRSUM_LANG": "fr"})
    assert_one_line_error(result, "PRSUM_LANG: unknown language")


def test_list_json_without_a_model(repo: RepoBuilder) -> None:
    repo.commit("Add a (#1)", {"a.py": "a = 1\n"})
    repo.commit(
        "📝 Update release notes",
        {"NOTES.md": "x\n"},
        author="github-actions[bot] <bot@example.com>",
    )
    # A model that does not exist proves discovery never loads one.
    result = run_prsum(
        "list",
        "v0..main",
        "--repo",
        str(repo.path),
        "--format",
        "json",
        env={"PRSUM_MODEL": "/nonexistent.gguf"},
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert [pr["number"] for pr in document["prs"]] == [1]
    assert [(c["subject"], c["bot"]) for c in document["direct_commits"]] == [
        ("📝 Update release notes", True)
    ]


def test_token_estimates_work_offline(repo: RepoBuilder, no_network: None) -> None:
    from typer.testing import CliRunner

    repo.commit("Add a (#1)", {"a.py": "def a():\n    return 1\n" * 40})
    result = CliRunner().invoke(
        app, ["list", "v0..main", "--repo", str(repo.path), "--format", "json", "--tokens"]
    )
    assert result.exit_code == 0, result.output
    (pr,) = json.loads(result.stdout)["prs"]
    assert 200 < pr["diff_tokens_estimate"] < 1000


def test_every_card_option_reaches_a_setting() -> None:
    """A card option declared once is passed on under its setting's name (a `--no-…` switch
    under the setting it turns off): none is dropped on the way."""
    import dataclasses

    from prsum.cli import CardOptions, _card_flags
    from prsum.config import SETTING_KEYS

    flags = _card_flags(CardOptions(), include_bots=False)
    names = {field.name.removeprefix("no_") for field in dataclasses.fields(CardOptions)}
    assert names == set(flags) - {"include_bots"}  # a range's option, passed along
    assert set(flags) - {"repo"} <= SETTING_KEYS
