"""Discovery on the real histories in ../shared, scored against eval/references.json."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from prsum.history import History


def clone(bundle: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(bundle), str(target)], check=True)
    return target


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
            clones[name] = clone(shared / "fixtures" / f"{name}.bundle", tmp_path / name)
        discovery = History(clones[name]).discover(expected["range"])
        assert [pr.number for pr in discovery.prs] == expected["prs_first_parent"]
        direct = [pr.sha for pr in discovery.direct_commits] + [
            c.sha for c in discovery.bot_commits
        ]
        assert sorted(direct) == sorted(expected["direct_commits"])
        assert [c.sha for c in discovery.sync_merges] == expected["sync_merges"]
