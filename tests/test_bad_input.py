"""Hostile and broken input: each case ends in a card, or in one line and a documented exit code."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prsum.cli import app
from prsum.types import Card, RangeQuery
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend
from tests.pipeline import cards_for, summarizer_for
from tests.test_cli import assert_one_line_error, run_prsum


def test_bare_repository(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("Add (#1)", {"a.py": "a = 1\n"})
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(repo.path), str(tmp_path / "bare.git")], check=True
    )
    result = run_prsum("list", "v0..main", "--repo", str(tmp_path / "bare.git"), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert [pr["number"] for pr in json.loads(result.stdout)["prs"]] == [1]
    assert all(isinstance(card, Card) for card in cards_for(tmp_path / "bare.git", "v0..main"))


def test_empty_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    assert_one_line_error(
        run_prsum("range", "HEAD", "--repo", str(tmp_path / "empty")), "has no commits yet"
    )


def test_shallow_clone_with_missing_parents(repo: RepoBuilder, tmp_path: Path) -> None:
    for number in range(1, 5):
        repo.commit(f"Change {number} (#{number})", {f"m{number}.py": f"x = {number}\n"})
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", f"file://{repo.path}", str(tmp_path / "shallow")],
        check=True,
    )
    results = cards_for(tmp_path / "shallow", "HEAD")
    assert [card.pr.number for card in results] == [4, 3]
    assert all(isinstance(card, Card) for card in results)


def test_submodule_binary_and_non_utf8(repo: RepoBuilder, tmp_path: Path) -> None:
    sha = repo.head()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha},vendor/lib")
    repo.write({"logo.png": bytes(range(256)) * 8, "latin.txt": b"caf\xe9 cr\xe8me\n"})
    repo.git("add", "logo.png", "latin.txt")
    message = tmp_path / "message"
    message.write_bytes("Caf\xe9 changes (#7)\n".encode("latin-1"))
    repo.git("-c", "i18n.commitEncoding=latin-1", "commit", "-q", "-F", str(message))
    (card,) = cards_for(repo.path, "v0..main")
    assert isinstance(card, Card) and card.pr.number == 7
    assert next(f for f in card.pr.files if f.path == "logo.png").binary
    assert {f.path for f in card.pr.files} == {"vendor/lib", "logo.png", "latin.txt"}


def test_a_100_mb_text_file(repo: RepoBuilder) -> None:
    line = "value = compute(alpha, beta, gamma, delta)  # generated row\n"
    repo.write({"data/huge.py": line * (100 * 2**20 // len(line))})
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "Add a huge module (#8)")
    for style in ("digest", "diff"):
        (card,) = cards_for(repo.path, "v0..main", prompt_style=style)
        assert isinstance(card, Card)
        assert card.coverage.prompt_tokens <= card.coverage.context_size


def test_unwritable_output_path(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("Add (#1)", {"a.py": "a = 1\n"})
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    result = run_prsum("list", "v0..main", "--repo", str(repo.path), "-o", str(blocker / "out.md"))
    assert_one_line_error(result, f"cannot write {blocker / 'out.md'}")
    assert blocker.read_text() == "x"


def test_unwritable_cache_is_a_warning(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("Add (#1)", {"a.py": "a = 1\n"})
    blocker = tmp_path / "cache-file"
    blocker.write_text("not a folder")
    summarizer = summarizer_for(
        repo.path,
        env={"PRSUM_CACHE_DIR": str(blocker)},
        model=FakeBackend(),
    )
    (card,) = summarizer.cards(summarizer.discover(RangeQuery("v0..main")).entries)
    assert isinstance(card, Card) and summarizer.cache_unwritable


@pytest.mark.model
def test_a_model_larger_than_free_memory(
    repo: RepoBuilder, small_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prsum.llm import llama

    repo.commit("Add (#1)", {"a.py": "a = 1\n"})
    monkeypatch.setattr(llama, "available_memory", lambda: 100 * 2**20)
    result = CliRunner().invoke(
        app,
        [
            "range",
            "v0..main",
            "--repo",
            str(repo.path),
            "--model",
            str(small_model),
            "--no-cache",
        ],
    )
    needed = small_model.stat().st_size * 1.1 / 2**30
    assert result.exit_code == 2
    assert f"needs about {needed:.1f} GiB of memory and 0.1 GiB is available" in result.output


@pytest.mark.model
def test_ctrl_c_keeps_finished_cards(repo: RepoBuilder, small_model: Path, tmp_path: Path) -> None:
    # More PRs than a run writes in the moment the test takes to see its first card, even on
    # a loaded machine: the interrupt must land mid-run.
    prs = 120
    for number in range(1, prs + 1):
        repo.commit(
            f"✨ Add feature {number} (#{number})",
            {f"src/f{number}.py": f"def f{number}(x):\n    return x * {number}\n"},
        )
    output = tmp_path / "cards.json"
    cache = tmp_path / "cache"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prsum",
            "range",
            "v0..main",
            "--repo",
            str(repo.path),
            "--model",
            str(small_model),
            "-f",
            "json",
            "-o",
            str(output),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PRSUM_CACHE_DIR": str(cache)},
        # A shell's background job starts with SIGINT ignored, and Python installs no
        # KeyboardInterrupt handler then (the run went on to all 120 cards): Ctrl-C's default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not list((cache / "cards").rglob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    # The model call in progress when the interrupt lands ends first; on a loaded machine (CI
    # beside a model run) that took over a minute.
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    document = json.loads(output.read_text())
    assert document["complete"] is False and 1 <= len(document["cards"]) < prs


def test_the_bad_input_script_reports_no_failure() -> None:
    script = Path(__file__).resolve().parents[1] / "bench" / "badinput.sh"
    command = Path(sys.executable).parent / "prsum"
    result = subprocess.run(
        ["bash", str(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "PRSUM": str(command)},
        timeout=300,
    )
    rows = result.stdout.strip().splitlines()
    assert len(rows) == 59 and all(row.startswith("ok ") for row in rows), result.stdout
