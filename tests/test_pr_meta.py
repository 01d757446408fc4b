"""Offline forge metadata (`--pr-meta`): PR bodies, labels and reviews reach the prompt and the card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prsum.errors import ConfigError
from prsum.prmeta import load_pr_meta
from prsum.types import RangeQuery
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend
from tests.pipeline import summarizer_for
from tests.test_cli import run_prsum

GH_JSON = [
    {
        "number": 7,
        "title": "Add a parser",
        "body": "The parser replaces three regexes that disagreed on quoting.\n\nDetails follow.",
        "labels": [{"name": "enhancement"}, {"name": "parser"}],
        "author": {"login": "ada"},
        "reviews": [
            {
                "author": {"login": "grace"},
                "body": "Nice: one place decides quoting.",
                "state": "APPROVED",
            }
        ],
        "comments": [{"author": {"login": "linus"}, "body": "Does it handle tabs?"}],
    },
    {
        "number": 8,
        "title": "Other",
        "body": "",
        "labels": [],
        "author": {"login": "bob"},
        "reviews": [],
        "comments": [],
    },
]


@pytest.fixture
def meta_file(tmp_path: Path) -> Path:
    path = tmp_path / "prs.json"
    path.write_text(json.dumps(GH_JSON), encoding="utf-8")
    return path


def test_body_labels_and_reviews_reach_the_prompt_and_the_card(
    repo: RepoBuilder, meta_file: Path
) -> None:
    repo.commit(
        "Add a parser (#7)", {"src/parser.py": "def parse(text):\n    return text.split()\n"}
    )
    backend = FakeBackend(answers={"概括": ["新增解析器"], "摘要": ["新增 `parse`。"]})
    summarizer = summarizer_for(repo.path, backend, pr_meta=str(meta_file))
    (pr,) = summarizer.discover(RangeQuery("v0..main")).entries
    card = summarizer.card_for(pr)
    prompt = backend.prompts[0]
    assert "说明：The parser replaces three regexes that disagreed on quoting." in prompt
    assert "Details follow" not in prompt  # the first paragraph only
    assert "标签：enhancement, parser" in prompt
    assert "评审：Nice: one place decides quoting." in prompt
    assert card.provenance.sources == ("git", "gh-json:prs.json")
    assert card.provenance.labels == ("enhancement", "parser")
    assert card.provenance.reviewers == ("grace",)
    assert card.provenance.pr_body.startswith("The parser replaces")


def test_without_meta_the_prompt_has_no_description(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#7)", {"src/parser.py": "def parse(text):\n    return text\n"})
    backend = FakeBackend()
    summarizer = summarizer_for(repo.path, backend)
    card = summarizer.card_for(summarizer.discover(RangeQuery("v0..main")).entries[0])
    assert "说明：" not in backend.prompts[0]
    assert card.provenance.sources == ("git",)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('{"number": 1}', "holds a JSON dict"),
        ('[{"title": "no number"}]', "entry 0 has no PR number"),
    ],
)
def test_malformed_files_get_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_pr_meta(path)


def test_missing_file_on_the_command_line(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("Add (#1)", {"a.py": "a = 1\n"})
    result = run_prsum(
        "list", "v0..main", "--repo", str(repo.path), "--pr-meta", str(tmp_path / "nope.json")
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"prsum: error: --pr-meta {tmp_path / 'nope.json'} does not exist: expected a JSON list from `gh pr list --json number,title,body,labels,author,reviews,comments`"
    ]


def test_list_shows_labels(repo: RepoBuilder, meta_file: Path) -> None:
    repo.commit("Add a parser (#7)", {"src/parser.py": "x = 1\n"})
    result = run_prsum(
        "list",
        "v0..main",
        "--repo",
        str(repo.path),
        "--pr-meta",
        str(meta_file),
        "--format",
        "json",
    )
    assert json.loads(result.stdout)["prs"][0]["labels"] == ["enhancement", "parser"]
