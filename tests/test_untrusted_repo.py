"""The repository is untrusted: its text cannot leak secrets, drive the terminal, configure where
data goes, run code through a template, or lose other PRs' cards when one of its objects is bad."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prsum.cli
from prsum.cli import app
from prsum.config import resolve_settings
from prsum.errors import ConfigError, OutputError
from prsum.output import replace_file, write_atomically
from prsum.pipeline import Summarizer
from prsum.render.inert import json_dumps, md_inline, md_prose, printable
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend

GITHUB_TOKEN = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa98"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "hunter2hunter2"
SECRETS = (GITHUB_TOKEN, AWS_KEY, PASSWORD)
# Clear the screen, set the window title, an OSC 8 link to javascript:, an 8-bit CSI.
ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b]8;;javascript:alert(1)\x1b\\click\x1b]8;;\x1b\\\x9b31m"
RAW_CONTROL = ("\x1b", "\x07", "\x9b")


@pytest.fixture
def hostile(repo: RepoBuilder) -> RepoBuilder:
    """Secrets and escape sequences in every place history text can hold them."""
    repo.commit(
        f"Add the parser (#3)\n\nBody with {GITHUB_TOKEN} and password={PASSWORD}",
        {"src/parser.py": "def parse(text):\n    return text.split()\n"},
        author=f"Mallory {AWS_KEY}{ESCAPES} <mallory{GITHUB_TOKEN}@example.com>",
    )
    repo.shas["direct"] = repo.commit(
        f"Rotate {AWS_KEY} and {GITHUB_TOKEN}, password={PASSWORD} {ESCAPES}",
        {"notes.txt": "rotated\n"},
    )
    repo.branch("side", "v0")
    repo.commit("Side work", {"side.txt": "side\n"})
    repo.checkout("main")
    repo.merge("side", f"Merge branch 'side' {GITHUB_TOKEN}{ESCAPES}")
    repo.commit(
        f"Title <script>alert(1)</script> [x](javascript:alert(1)) {ESCAPES} (#4)",
        {"src/render.py": "def render():\n    return 1\n"},
    )
    return repo


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    """The CLI's model is a scripted one: these tests are about what prsum does with the text."""
    backend = FakeBackend()
    monkeypatch.setattr(
        prsum.cli, "_summarizer", lambda settings: Summarizer(settings, backend=backend)
    )
    return backend


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output and "internal error" not in result.output
    return result.exit_code, result.stdout


OUTPUTS = [
    ("list", "md"),
    ("list", "json"),
    ("list", "terminal"),
    ("range", "md"),
    ("range", "json"),
    ("range", "jsonl"),
    ("range", "terminal"),
    ("notes", "md"),
    ("notes", "json"),
]


@pytest.mark.parametrize(("command", "fmt"), OUTPUTS)
def test_no_secret_and_no_raw_escape_reaches_any_output(
    hostile: RepoBuilder, fake_model: FakeBackend, command: str, fmt: str
) -> None:
    code, stdout = run(command, "v0..main", "--repo", str(hostile.path), "--format", fmt)
    assert code == 0
    assert hostile.shas["direct"][:7] in stdout  # the direct commit is in every output
    for secret in SECRETS:
        assert secret not in stdout, secret
    for control in RAW_CONTROL:
        assert control not in stdout, repr(control)
    if fmt == "md":
        assert "<script>" not in stdout and "](javascript:" not in stdout


def test_no_secret_reaches_the_model_or_the_cache(
    hostile: RepoBuilder, fake_model: FakeBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRSUM_CACHE_DIR", str(tmp_path / "cache"))
    code, _ = run("range", "v0..main", "--repo", str(hostile.path), "--format", "json")
    assert code == 0
    cached = [path.read_text(encoding="utf-8") for path in (tmp_path / "cache").rglob("*.json")]
    assert cached
    for text in [*fake_model.prompts, *cached]:
        for secret in SECRETS:
            assert secret not in text


def test_a_template_gets_no_raw_escape(
    hostile: RepoBuilder, fake_model: FakeBackend, tmp_path: Path
) -> None:
    template = tmp_path / "notes.j2"
    template.write_text(
        "{% for c in notes.direct_commits %}{{ c.subject }} {{ c.author }}\n{% endfor %}"
        "{% for c in notes.sync_merges %}{{ c.subject }}\n{% endfor %}"
    )
    code, stdout = run(
        "notes", "v0..main", "--repo", str(hostile.path), "--template", str(template)
    )
    assert code == 0 and "Rotate" in stdout
    assert not any(control in stdout for control in RAW_CONTROL)
    assert not any(secret in stdout for secret in SECRETS)


def test_a_template_cannot_run_code(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("Add a (#1)", {"a.py": "a = 1\n"})
    marker = tmp_path / "ran"
    template = tmp_path / "evil.j2"
    template.write_text(
        "{{ self.__init__.__globals__.__builtins__.__import__('os')"
        f".popen('touch {marker}').read() }}}}"
    )
    result = subprocess.run(
        [sys.executable, "-m", "prsum", "notes", "v0..main", "--repo", str(repo.path),
         "--template", str(template)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("prsum: error: --template") and "Traceback" not in result.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("{% include 'other.j2' %}", "no loader"),
        ("{{ 'x' * 100000000 }}", "repetition too long"),
        ("{{ 2 ** 100000000 }}", "exponent too large"),
        ("{{ notes.no_such_field }}", "no_such_field"),
    ],
)
def test_template_errors_are_one_line_before_any_card(
    repo: RepoBuilder, fake_model: FakeBackend, tmp_path: Path, source: str, fragment: str
) -> None:
    repo.commit("Add a (#1)", {"a.py": "a = 1\n"})
    template = tmp_path / "t.j2"
    template.write_text(source)
    result = CliRunner().invoke(
        app, ["notes", "v0..main", "--repo", str(repo.path), "--template", str(template)]
    )
    assert result.exit_code == 2
    assert fragment in result.stderr and "Traceback" not in result.output
    assert fake_model.prompts == []  # refused before the model wrote anything


def test_a_template_that_is_not_utf8(repo: RepoBuilder, tmp_path: Path) -> None:
    template = tmp_path / "t.j2"
    template.write_bytes(b"\xff\xfe{{ notes.title }}")
    result = CliRunner().invoke(
        app, ["notes", "v0..main", "--repo", str(repo.path), "--template", str(template)]
    )
    assert result.exit_code == 2 and "not UTF-8" in result.stderr


def test_repository_settings_cannot_move_data_or_drop_masking(
    hostile: RepoBuilder, fake_model: FakeBackend
) -> None:
    (hostile.path / "pyproject.toml").write_text(
        '[tool.prsum]\nbackend = "openai"\nbase_url = "http://127.0.0.1:18777"\n'
        'server_model = "x"\nredact = false\nlang = "en"\nmodel = "/etc/passwd"\n'
    )
    settings = resolve_settings({"repo": str(hostile.path)}, env={})
    assert (settings.backend, settings.base_url, settings.server_model) == ("llama", None, None)
    assert settings.redact is True and settings.model is None
    assert settings.lang == "en"  # what cannot move data is still the repository's to set
    assert set(settings.refused) == {
        "backend",
        "base_url",
        "server_model",
        "redact",
        "model (a file outside the repository)",
    }
    result = CliRunner().invoke(app, ["range", "v0..main", "--repo", str(hostile.path)])
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "ignored" in line]
    assert len(warnings) == 1 and "backend, base_url" in warnings[0]
    assert not any(secret in result.stdout for secret in SECRETS)


def test_a_model_path_may_not_leave_the_repository_through_a_link(
    repo: RepoBuilder, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.gguf"
    outside.write_bytes(b"GGUF")
    (repo.path / "models").mkdir()
    (repo.path / "models" / "m.gguf").symlink_to(outside)
    (repo.path / "inside.gguf").write_bytes(b"GGUF")
    (repo.path / "pyproject.toml").write_text('[tool.prsum]\nmodel = "models/m.gguf"\n')
    assert resolve_settings({"repo": str(repo.path)}, env={}).model is None
    (repo.path / "pyproject.toml").write_text('[tool.prsum]\nmodel = "inside.gguf"\n')
    assert resolve_settings({"repo": str(repo.path)}, env={}).model == repo.path / "inside.gguf"


def test_the_users_config_file_may_set_the_server(repo: RepoBuilder, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('backend = "openai"\nbase_url = "http://127.0.0.1:8080"\nredact = false\n')
    settings = resolve_settings({"repo": str(repo.path)}, env={"PRSUM_CONFIG": str(config)})
    assert (settings.backend, settings.base_url, settings.redact) == (
        "openai",
        "http://127.0.0.1:8080",
        False,
    )
    assert settings.sources["backend"] == "user"
    # The repository's own choice of what it may set still wins over the user's default.
    config.write_text('lang = "en"\n')
    (repo.path / "pyproject.toml").write_text('[tool.prsum]\nlang = "zh"\n')
    assert (
        resolve_settings({"repo": str(repo.path)}, env={"PRSUM_CONFIG": str(config)}).lang == "zh"
    )
    config.write_text('colour = "blue"\n')
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        resolve_settings({"repo": str(repo.path)}, env={"PRSUM_CONFIG": str(config)})


def test_threads_are_bounded(repo: RepoBuilder) -> None:
    with pytest.raises(ConfigError, match="at most"):
        resolve_settings({"repo": str(repo.path), "threads": 10_000}, env={})


def corrupt_object(repo: RepoBuilder, sha: str) -> None:
    path = repo.path / ".git" / "objects" / sha[:2] / sha[2:]
    path.chmod(0o644)
    path.write_bytes(b"garbage")


def test_one_damaged_object_costs_one_pr(repo: RepoBuilder, fake_model: FakeBackend) -> None:
    for number in (1, 2, 3):
        repo.commit(
            f"Add f{number} (#{number})",
            {f"m{number}.py": f"def f{number}():\n    return {number}\n"},
        )
    corrupt_object(repo, repo.git("rev-parse", "HEAD~1:m2.py"))
    result = CliRunner().invoke(
        app, ["range", "v0..main", "--repo", str(repo.path), "--format", "json", "--no-cache"]
    )
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert [card["pr"]["number"] for card in document["cards"]] == [3, 1]
    (failure,) = document["failures"]
    assert failure["number"] == 2 and "unable to read" in failure["message"]
    assert not failure["message"].endswith("'")  # gitpython's quoting is not passed on


def test_a_damaged_head_is_not_called_empty(repo: RepoBuilder) -> None:
    corrupt_object(repo, repo.head())
    result = CliRunner().invoke(app, ["list", "--last", "1", "--repo", str(repo.path)])
    assert result.exit_code == 2
    assert "damaged" in result.stderr and "no commits yet" not in result.stderr


def test_closed_and_full_stdout(repo: RepoBuilder) -> None:
    repo.commit("Add a (#1)", {"a.py": "a = 1\n"})
    command = [sys.executable, "-m", "prsum", "list", "v0..main", "--repo", str(repo.path)]
    closed = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            timeout=60, pass_fds=(), close_fds=True,
                            preexec_fn=lambda: os.close(1))  # fmt: skip
    assert closed.returncode == 2 and "standard output is closed" in closed.stderr
    with open("/dev/full", "w") as full:
        result = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "prsum: error: cannot write to standard output: No space left on device"
    )


def test_output_keeps_an_existing_files_mode_and_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("old")
    target.chmod(0o644)
    link = tmp_path / "link.md"
    link.symlink_to(target.name)
    write_atomically(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "notes.md"]


def test_a_failed_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        replace_file(tmp_path / "card.json", "{}", private=True)
    with pytest.raises(OutputError, match="No space left"):
        write_atomically(tmp_path / "out.md", "text")
    assert list(tmp_path.iterdir()) == []


def test_inert_text_per_format() -> None:
    assert printable(f"a{ESCAPES}b\x00c") == "aclickb\\x00c"
    assert printable("x\u202ey") == "x\\u202ey"  # a bidirectional override, shown
    assert md_inline("<b>*x*</b> [a](http://e.example)\n# h") == (
        "&lt;b&gt;\\*x\\*&lt;/b&gt; \\[a\\](`http://e.example)`  # h"
    ).replace("  #", " #")
    assert md_prose("see `<b>` and <i> [a](javascript:x)") == (
        "see `<b>` and &lt;i&gt; \\[a\\](`javascript:x)`"
    )
    assert json_dumps(["\x1b\x9b"]) == '["\\u001b\\u009b"]'
