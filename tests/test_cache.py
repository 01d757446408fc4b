"""The card cache: a second run only reads it; a killed run resumes where it stopped."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from prsum import pipeline
from prsum.cache import JsonStore, clear_store, content_key, store_size
from prsum.types import Card
from tests.conftest import RepoBuilder
from tests.pipeline import cards_for


def five_prs(repo: RepoBuilder) -> None:
    for number in range(1, 6):
        repo.commit(
            f"✨ Add feature {number} (#{number})",
            {f"src/feature_{number}.py": f"def feature_{number}(x):\n    return x + {number}\n"},
        )


def prsum(*args: str, cache: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PRSUM_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-m", "prsum", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def without_timing(cards: list[dict]) -> list[dict]:
    return [{key: value for key, value in card.items() if key != "timing"} for card in cards]


@pytest.mark.model
def test_a_killed_run_resumes_and_matches_an_uninterrupted_one(
    repo: RepoBuilder, small_model: Path, tmp_path: Path
) -> None:
    five_prs(repo)
    common = ["range", "v0..main", "--repo", str(repo.path), "--model", str(small_model)]
    cache = tmp_path / "cache"
    run = prsum(*common, "--format", "jsonl", cache=cache)
    assert run.stdout is not None
    finished = [run.stdout.readline() for _ in range(3)]  # jsonl: one line per finished card
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert all(line.strip() for line in finished)
    assert store_size(cache / "cards")[0] >= 3

    resumed = prsum(*common, "--format", "json", cache=cache)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    cards = json.loads(out)["cards"]
    cached = [card["timing"]["cached"] for card in cards]
    assert cached[:3] == [True, True, True] and cached.count(True) == store_size(cache / "cards")[
        0
    ] - cached.count(False)
    assert "from the cache" in err

    fresh = prsum(*common, "--format", "json", "--no-cache", cache=tmp_path / "other")
    out, err = fresh.communicate(timeout=300)
    assert fresh.returncode == 0, err
    assert without_timing(json.loads(out)["cards"]) == without_timing(cards)
    assert store_size(tmp_path / "other" / "cards") == (0, 0)  # --no-cache writes nothing either


def test_store_is_atomic_and_tolerates_damage(tmp_path: Path) -> None:
    store = JsonStore(tmp_path / "cards")
    key = content_key("a", "b")
    assert store.get(key) is None
    assert store.put(key, {"x": 1})
    assert store.get(key) == {"x": 1}
    path = next((tmp_path / "cards").rglob("*.json"))
    path.write_text("{truncated", encoding="utf-8")
    assert store.get(key) is None  # a damaged entry is a miss, not a crash
    assert not list((tmp_path / "cards").rglob("*.tmp"))
    assert clear_store(tmp_path / "cards") == 1
    assert store_size(tmp_path / "cards") == (0, 0)


def test_unwritable_cache_is_not_fatal(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert JsonStore(blocker / "cards").put("ab" * 32, {"x": 1}) is False


def test_the_package_sources_are_part_of_the_card_cache_key(
    repo: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cards are cached under a digest of prsum's own files: a copy of them elsewhere keys the
    same cards, and one prompt's text changed keys new ones."""
    repo.commit(
        "Add a parser (#10)", {"src/parser.py": "def parse(text):\n    return text.split()\n"}
    )
    package = Path(pipeline.__file__).parent
    same, edited = tmp_path / "same", tmp_path / "edited"
    # Byte code and adapters differ between installs and are not what a card comes from.
    shutil.copytree(package, same, ignore=shutil.ignore_patterns("__pycache__", "*.gguf"))
    shutil.copytree(same, edited)
    prompt = edited / "prompts" / "card-en.txt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    package_digest = pipeline.package_digest
    (same / "__pycache__").mkdir(exist_ok=True)
    (same / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"\0")
    (same / "adapters" / "another-lora.gguf").write_bytes(b"GGUF")
    assert package_digest.__wrapped__(same) == package_digest.__wrapped__(package)

    def card_from(root: Path) -> Card:
        monkeypatch.setattr(pipeline, "package_digest", lambda: package_digest(root))
        (card,) = cards_for(repo.path, "v0..main", strategy="facts")
        assert isinstance(card, Card)
        return card

    assert package_digest(same) != package_digest(edited)
    card_from(same)  # written, or already cached by an earlier run
    assert card_from(same).timing.cached
    assert not card_from(edited).timing.cached
    assert card_from(edited).timing.cached


def test_a_cached_cards_echoes_come_back_as_they_were(repo: RepoBuilder) -> None:
    # A union of dataclasses is revived as the one with the data's fields: a leftover read
    # back as a precedent failed, and every card with one was written again on every run.
    from prsum.serial import from_plain, to_plain

    scores = "def a(s, i):\n    g = index(i, device=s.device)\n    m = mean_of(s, g)\n"
    repo.commit("Add (#1)", {"src/a.py": scores, "src/b.py": "    m = mean_of(s, g)\n"})
    repo.commit("Device (#2)", {"src/a.py": scores.replace("(s, g)", "(s, g, device=s.device)")})
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card) and len(card.facts.echoes) == 2  # a precedent, a leftover
    cached = pipeline.CachedCard.of(card)
    assert from_plain(pipeline.CachedCard, json.loads(json.dumps(to_plain(cached)))) == cached
