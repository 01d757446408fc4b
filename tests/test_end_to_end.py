"""The whole pipeline on the real embedded model, offline: git history in, valid cards out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from prsum.cards import in_language
from prsum.cli import app
from prsum.llm.llama import LlamaBackend
from tests.conftest import RepoBuilder, clone_fixture
from tests.test_render import SCHEMA

CJK = re.compile(r"[\u3400-\u9fff]")
pytestmark = pytest.mark.model

GREETER = '''def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone by name."""
    return f"Hello, {name}{punctuation}"


class Greeter:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def greet(self, name: str) -> str:
        return f"{self.prefix} {name}"
'''


@pytest.fixture
def history(repo: RepoBuilder) -> RepoBuilder:
    """Four PRs' worth of history: a merge commit, a squash, a bot commit and a direct commit."""
    repo.branch("greeter")
    repo.commit("Add a greeter", {"src/greeter.py": GREETER})
    repo.commit(
        "Test the greeter",
        {
            "tests/test_greeter.py": "from greeter import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n"
        },
    )
    repo.checkout("main")
    repo.merge("greeter", "Merge pull request #2 from ada/greeter\n\nAdd a greeter module")
    repo.commit(
        "🐛 Fix the exit code of main (#3)",
        {"src/app.py": "import sys\n\n\ndef main():\n    return 1 if sys.argv[1:] else 0\n"},
        author="Grace Hopper <grace@example.com>",
    )
    repo.commit(
        "📝 Update release notes",
        {"RELEASE.md": "- greeter\n"},
        author="github-actions[bot] <bot@example.com>",
    )
    repo.commit("Bump version to 0.2.0", {"VERSION": "0.2.0\n"})
    return repo


def run_range(repo: Path, model: Path | None, *extra: str, spec: str = "v0..main") -> dict:
    """`prsum range` as JSON; `model` None for the server backend, which names no file."""
    chosen = ("--model", str(model)) if model is not None else ()
    result = CliRunner().invoke(
        app, ["range", spec, "--repo", str(repo), *chosen, "--format", "json", *extra]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_range_writes_valid_chinese_cards_offline(
    history: RepoBuilder, small_model: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[bool] = []
    original_load = LlamaBackend._load

    def counting_load(self: LlamaBackend, vocab_only: bool) -> object:
        loads.append(vocab_only)
        return original_load(self, vocab_only)

    monkeypatch.setattr(LlamaBackend, "_load", counting_load)
    document = run_range(history.path, small_model)
    cards = document["cards"]
    assert [(c["pr"]["number"], c["pr"]["kind"]) for c in cards] == [
        (None, "direct"),
        (3, "squash"),
        (2, "merge"),
    ]
    assert len(document["skipped"]["bot_commits"]) == 1
    for card in cards:
        jsonschema.validate(card, SCHEMA)
        assert in_language(card["card"]["headline"], "zh"), card["card"]["headline"]
        assert in_language(card["card"]["summary"], "zh"), card["card"]["summary"]
        assert card["coverage"]["prompt_tokens"] <= card["coverage"]["context_size"]
    merge = cards[2]
    assert sorted(f["path"] for f in merge["pr"]["files"]) == [
        "src/greeter.py",
        "tests/test_greeter.py",
    ]
    assert merge["card"]["focus"][0]["path"] == "src/greeter.py"
    assert loads.count(False) == 1, "the weights must load once per run"


def test_english_cards_and_the_same_card_for_the_same_input(
    history: RepoBuilder, small_model: Path, no_network: None
) -> None:
    first = run_range(history.path, small_model, "--lang", "en")["cards"]
    second = run_range(history.path, small_model, "--lang", "en")["cards"]
    for card in first:
        # English prose; a headline built from facts may be as short as "Release 0.2.0".
        assert not CJK.search(card["card"]["headline"]), card["card"]["headline"]
        assert in_language(card["card"]["summary"], "en"), card["card"]["summary"]
    assert [c["card"] for c in first] == [c["card"] for c in second]


def test_markdown_output_file(history: RepoBuilder, small_model: Path, tmp_path: Path) -> None:
    target = tmp_path / "cards.md"
    result = CliRunner().invoke(
        app,
        [
            "show",
            "#3",
            "--repo",
            str(history.path),
            "--model",
            str(small_model),
            "-o",
            str(target),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = target.read_text(encoding="utf-8").splitlines()
    assert lines[2].startswith("### ")
    assert lines[3].startswith("<sub>#3 · ") and "Grace Hopper" in lines[3]
    assert lines[5].startswith(("值得", "不必精读代码细节"))


def test_typer_release_range(
    shared: Path, small_model: Path, tmp_path: Path, no_network: None
) -> None:
    clone = clone_fixture(shared, "typer", tmp_path / "typer")
    document = run_range(clone, small_model, spec="0.27.0..0.27.1")
    assert [c["pr"]["number"] for c in document["cards"]] == [
        1919,
        1405,
        1909,
        1906,
        1904,
        1903,
        1902,
    ]
    assert len(document["skipped"]["bot_commits"]) == 6
    for card in document["cards"]:
        jsonschema.validate(card, SCHEMA)
        assert in_language(card["card"]["headline"], "zh") and in_language(
            card["card"]["summary"], "zh"
        )


@pytest.mark.parametrize("context", ["2048", "8192"])
def test_a_50000_line_pr_on_the_real_model(
    repo: RepoBuilder, small_model: Path, context: str
) -> None:
    from tests.test_cards import huge_pr

    huge_pr(repo)
    document = run_range(repo.path, small_model, "--ctx", context)
    (card,) = document["cards"]
    jsonschema.validate(card, SCHEMA)
    coverage = card["coverage"]
    assert coverage["context_size"] == int(context)
    assert coverage["prompt_tokens"] <= coverage["context_size"]
    assert coverage["files_total"] == 300
    listed = (
        len(coverage["files_whole"])
        + len(coverage["files_clipped"])
        + len(coverage["files_left_out"])
    )
    assert listed == 300 and coverage["files_left_out"]


def test_the_coder_writes_brief_true_chinese_cards_by_default(
    history: RepoBuilder, coder_model: Path, no_network: None
) -> None:
    from tests.test_strategies import assert_whole_cards_hold

    document = run_range(history.path, None, "--model", "coder", "--no-cache", spec="v0..main~2")
    cards = document["cards"]
    assert [(c["pr"]["number"], c["pr"]["kind"]) for c in cards] == [(3, "squash"), (2, "merge")]
    assert_whole_cards_hold(cards, history, base_model=False, strategy="brief")
    for card in cards:
        assert card["model"]["file"] == coder_model.name and card["model"]["adapter"] is None
        assert card["coverage"]["view"] == "diff"
        body = card["card"]
        assert in_language(body["headline"] + body["summary"], "zh"), body
        assert body["verdict"] in ("skim", "deep")  # product code: never skip (the rubric)
        # The model chose the verdict and reading time; its prose is not printed (facts' is).
        assert {"verdict", "minutes"} <= set(body["by_model"]) <= {"headline", "verdict", "minutes"}
        assert not body["lessons"]
    # Each card's headline is the model's own words where the checks pass it.
    assert any("headline" in card["card"]["by_model"] for card in cards)
