"""Discovery on the real histories in ../shared, scored against eval/references.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prsum.history import History
from tests.conftest import clone_fixture


@pytest.fixture(scope="module")
def references() -> dict:
    from tests.conftest import SHARED

    path = SHARED / "eval" / "references.json"
    if not path.is_file():
        pytest.skip("../shared is not present on this machine")
    return json.loads(path.read_text(encoding="utf-8"))


def test_each_reference_range_is_discovered_exactly(
    references: dict, tmp_path: Path, shared: Path
) -> None:
    clones: dict[str, Path] = {}
    for expected in references["ranges"]:
        name = expected["repo"]
        if name not in clones:
            clones[name] = clone_fixture(shared, name, tmp_path / name)
        discovery = History(clones[name]).discover(expected["range"])
        assert [pr.number for pr in discovery.prs] == expected["prs_first_parent"]
        direct = [pr.sha for pr in discovery.direct_commits] + [
            c.sha for c in discovery.bot_commits
        ]
        assert sorted(direct) == sorted(expected["direct_commits"])
        assert [c.sha for c in discovery.sync_merges] == expected["sync_merges"]


def test_typer_1863_coverage_shows_the_logic_whole_and_docs_compressed(
    shared: Path, tmp_path: Path
) -> None:
    from prsum.cards import CardWriter
    from prsum.facts import compute_facts
    from tests.fakes import FakeBackend

    history = History(clone_fixture(shared, "typer", tmp_path / "typer"))
    pr = history.find_pr("42196d4")
    diffs = history.diff(pr)
    card = CardWriter(FakeBackend(), "zh", "digest").write(pr, compute_facts(pr, diffs), diffs)
    assert card.coverage.files_total == 133
    assert {"typer/_click/core.py", "typer/_click/types.py", "typer/core.py"} <= set(
        card.coverage.files_whole
    )
    docs = [item for item in card.coverage.files_left_out if item.path.startswith("docs/")]
    assert docs and all(item.reason.startswith("compressed") for item in docs)
