"""The server backend against a real `python -m llama_cpp.server` running the embedded models."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from prsum.grounding import cited_names
from prsum.llm.models import adapter_of, tuned
from prsum.profiles import EMBEDDED
from tests import llama_server as llama_server_script
from tests.conftest import RepoBuilder
from tests.test_end_to_end import history, run_range  # noqa: F401  # the fixture is used below
from tests.test_render import SCHEMA
from tests.test_strategies import assert_whole_cards_hold


def _served(model: Path, folder: Path, chat_format: str | None) -> Iterator[str]:
    """`model` behind llama_cpp.server on 127.0.0.1 while the caller runs; its base URL."""
    with (folder / "server.log").open("w") as log:
        try:
            process, url = llama_server_script.start(model, log, chat_format=chat_format)
        except RuntimeError as exc:
            pytest.fail(f"{exc}: {Path(log.name).read_text()[-2000:]}")
        yield url
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def llama_server(small_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The small model with prsum's adapter merged in (as embedded runs use it), served."""
    adapter = adapter_of(EMBEDDED["small"])
    assert adapter is not None
    model = tuned(small_model, adapter, Path(os.environ["PRSUM_CACHE_DIR"]))
    yield from _served(model, tmp_path_factory.mktemp("server"), "gemma")


@pytest.fixture(scope="module")
def coder_server(coder_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The coder model, served with the chat template inside it."""
    yield from _served(coder_model, tmp_path_factory.mktemp("coder-server"), None)


@pytest.mark.model
def test_two_jobs_on_a_server_write_cards_like_the_embedded_model(
    history: RepoBuilder,  # noqa: F811
    small_model: Path,
    llama_server: str,
) -> None:
    served = run_range(
        history.path,
        None,
        "--backend",
        "openai",
        "--base-url",
        llama_server,
        "--jobs",
        "2",
        "--no-cache",
        "--strategy",
        "fields",
    )["cards"]
    embedded = run_range(
        history.path, None, "--model", "small", "--no-cache", "--strategy", "fields"
    )["cards"]

    assert [card["pr"] for card in served] == [card["pr"] for card in embedded]
    for card, twin in zip(served, embedded, strict=True):
        jsonschema.validate(card, SCHEMA)
        assert card["model"]["backend"] == "openai" and twin["model"]["backend"] == "llama"
        assert card["coverage"]["view"] == twin["coverage"]["view"] == "digest"
        sha = card["pr"]["sha"]
        evidence = history.git("show", "--first-parent", "--format=%B", sha)
        written = [
            card["card"]["headline"],
            card["card"]["summary"],
            *card["card"]["lessons"],
            *card["card"]["follow_ups"],
            *(focus["why"] for focus in card["card"]["focus"]),
        ]
        for text in written:
            for name in cited_names(text):
                assert name.strip("()") in evidence, f"{name!r} in {text!r} is not in the PR"
        assert [focus["path"] for focus in card["card"]["focus"]] == [
            focus["path"] for focus in twin["card"]["focus"]
        ]


def served_cards(history: RepoBuilder, server: str, *flags: str) -> list[dict]:  # noqa: F811
    """The cards of the history's first two PRs, written by the coder through `server`."""
    document = run_range(
        history.path,
        None,
        *("--backend", "openai", "--base-url", server, "--no-cache", *flags),
        spec="v0..main~2",
    )
    return document["cards"]


@pytest.mark.model
def test_whole_cards_through_the_servers_chat_endpoint(
    history: RepoBuilder,  # noqa: F811
    coder_server: str,
) -> None:
    cards = served_cards(history, coder_server, "--strategy", "whole")
    assert all(card["model"]["strategy"] == "whole" for card in cards)
    assert_whole_cards_hold(cards, history, base_model=False)
    assert any("summary" in card["card"]["by_model"] for card in cards)


@pytest.mark.model
def test_brief_cards_stop_where_a_servers_answer_reaches_the_summary(
    history: RepoBuilder,  # noqa: F811
    coder_server: str,
) -> None:
    cards = served_cards(history, coder_server)
    assert_whole_cards_hold(cards, history, base_model=False, strategy="brief")
    for card in cards:
        body = card["card"]
        assert {"verdict", "minutes"} <= set(body["by_model"]) <= {"headline", "verdict", "minutes"}
        assert not body["lessons"]
