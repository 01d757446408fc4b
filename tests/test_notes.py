"""Release notes: every PR once, in the right section; the rest listed apart; templates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prsum.cli import app
from prsum.notes import contributors
from prsum.pipeline import Summarizer
from prsum.render.notes import load_template, notes_to_dict, notes_with_template
from prsum.types import PullRequest, RangeQuery
from tests.conftest import RepoBuilder, clone_fixture
from tests.pipeline import summarizer_for


def notes_for(repo: Path, spec: str | None) -> tuple[dict, Summarizer]:
    summarizer = summarizer_for(repo)
    discovery = summarizer.discover(RangeQuery(summarizer.notes_range(spec)))
    notes, failures = summarizer.release_notes(discovery)
    assert failures == ()
    return notes_to_dict(notes), summarizer


def numbers_by_section(document: dict) -> dict[str, list[int | None]]:
    return {
        section["key"]: [entry["number"] for entry in section["entries"]]
        for section in document["sections"]
    }


def test_typer_release(shared: Path, tmp_path: Path) -> None:
    document, _ = notes_for(clone_fixture(shared, "typer", tmp_path / "typer"), "0.26.8..0.27.1")
    sections = numbers_by_section(document)
    listed = [number for numbers in sections.values() for number in numbers]
    assert sorted(listed) == sorted(
        [
            1919,
            1405,
            1909,
            1906,
            1904,
            1903,
            1902,
            1899,
            1863,
            1896,
            1877,
            1897,
            1873,
            1895,
            1872,
            1883,
            1880,
            1879,
            1876,
            1874,
            1834,
            1849,
        ]
    )
    assert len(listed) == len(set(listed)) == 22
    assert next(iter(sections)) == "breaking" and 1863 in sections["breaking"]
    assert {1896, 1849, 1876, 1874, 1897, 1834} <= set(sections["internal"])
    assert document["bot_commits_skipped"] == 20
    assert "dependabot[bot]" not in document["contributors"]


def test_click_release(shared: Path, tmp_path: Path) -> None:
    document, _ = notes_for(clone_fixture(shared, "click", tmp_path / "click"), "8.4.2..8.5.0")
    listed = [number for numbers in numbers_by_section(document).values() for number in numbers]
    assert len(listed) == len(set(listed)) == 37 and None not in listed
    assert [c["sha"][:7] for c in document["direct_commits"]] == ["8b19813", "c353590", "4e869f3"]
    assert [c["sha"][:7] for c in document["sync_merges"]] == [
        "240603f",
        "3a40e43",
        "bc36cd1",
        "a9a218c",
    ]


def test_range_defaults_to_the_latest_tag(repo: RepoBuilder) -> None:
    repo.commit("First (#1)", {"a.py": "a = 1\n"})
    repo.tag("v1")
    repo.commit("Second (#2)", {"b.py": "b = 1\n"})
    repo.tag("v2")
    repo.commit("Third (#3)", {"c.py": "c = 1\n"})
    document, summarizer = notes_for(repo.path, None)
    assert document["range_spec"] == "v2..HEAD"
    assert summarizer.notes_range("v2") == "v1..v2"
    assert summarizer.notes_range("v0..v2") == "v0..v2"


def test_contributors_are_one_per_person_by_name_or_email() -> None:
    def pr(authors: tuple[str, ...], emails: tuple[str, ...]) -> PullRequest:
        return PullRequest(
            1,
            "squash",
            "a" * 40,
            None,
            "t",
            "t",
            authors,
            "2026-01-01T00:00:00+00:00",
            (),
            author_emails=emails,
        )

    prs = [
        pr(("Ada Lovelace", "Grace Hopper"), ("ada@example.com", "grace@example.com")),
        pr(
            ("ada", "dependabot[bot]"), ("ada@example.com", "bot@example.com")
        ),  # same email, other name
        pr(("Grace Hopper",), ("grace@work.example",)),  # same name, other email
        pr(("Linus",), ("linus@example.com",)),
    ]
    assert contributors(prs) == ("Ada Lovelace", "Grace Hopper", "Linus")


KEEP_A_CHANGELOG = """## [{{ notes.range_spec.split('..')[1] }}]
{% for section in notes.sections %}{% set heading = {'breaking': 'Changed', 'features': 'Added', 'fixes': 'Fixed'}.get(section.key, 'Changed') %}
### {{ heading }}
{% for entry in section.entries %}- {{ entry.headline }} (#{{ entry.number }})
{% endfor %}{% endfor %}"""


def test_template_renders_keep_a_changelog(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("✨ Add greeting (#1)", {"src/greet.py": "def greet():\n    return 'hi'\n"})
    repo.commit("🐛 Fix the exit code (#2)", {"src/app.py": "def main():\n    return 1\n"})
    repo.tag("v1")
    template = tmp_path / "changelog.j2"
    template.write_text(KEEP_A_CHANGELOG, encoding="utf-8")
    summarizer = summarizer_for(repo.path, lang="en")
    notes, _ = summarizer.release_notes(summarizer.discover(RangeQuery("v0..v1")))
    text = notes_with_template(notes, load_template(template))
    assert text.startswith("## [v1]\n")
    assert "### Added\n- Add greeting (#1)\n" in text
    assert "### Fixed\n- Fix the exit code (#2)\n" in text


def test_bad_template_is_one_line(repo: RepoBuilder, tmp_path: Path) -> None:
    repo.commit("Add (#1)", {"a.py": "a = 1\n"})
    template = tmp_path / "bad.j2"
    template.write_text("{% for x in %}", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "notes",
            "v0..main",
            "--repo",
            str(repo.path),
            "--template",
            str(template),
            "--model",
            "/nonexistent.gguf",
        ],
    )
    assert result.exit_code == 2
    assert f"--template {template}, line 1:" in result.output  # before the model is even checked


@pytest.mark.model
def test_notes_end_to_end_on_the_real_model(
    repo: RepoBuilder, small_model: Path, no_network: None
) -> None:
    repo.commit(
        "💥 Rename the entry point (#1)\n\nBREAKING CHANGE: main is now run",
        {"src/app.py": "def run():\n    return 0\n"},
    )
    repo.commit(
        "✨ Add a greeter (#2)", {"src/greet.py": "def greet(name):\n    return f'hi {name}'\n"}
    )
    repo.commit("Tidy", {"README.md": "# demo\n\ntidy\n"})
    result = CliRunner().invoke(
        app,
        [
            "notes",
            "v0..main",
            "--repo",
            str(repo.path),
            "--model",
            str(small_model),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert numbers_by_section(document)["breaking"] == [1]
    assert numbers_by_section(document)["features"] == [2]
    assert [c["subject"] for c in document["direct_commits"]] == ["Tidy"]
    assert document["highlights"]
