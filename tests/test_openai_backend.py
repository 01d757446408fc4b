"""The server backend's own logic, against a small fake OpenAI-compatible server."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from typer.testing import CliRunner

from prsum.cli import app
from prsum.config import resolve_settings
from prsum.errors import ConfigError, ServerError
from prsum.llm.openai import OpenAIBackend, server_root
from prsum.types import Card, RangeQuery
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend
from tests.pipeline import summarizer_for

BOS = 1


@dataclass
class FakeServer:
    """Serves /v1/models, /extras/tokenize (a BOS, then one token per character) and
    /v1/completions, answering the top alternatives of `alternatives[prompt suffix]`."""

    alternatives: dict[str, dict[str, float]] = field(default_factory=dict)
    refuse_grammar: bool = False
    text: str = "fine"
    requests: list[dict[str, Any]] = field(default_factory=list)
    listed: list[dict[str, Any]] = field(default_factory=lambda: [{"id": "served-model"}])
    authorizations: list[str | None] = field(default_factory=list)
    url: str = ""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path == "/moved/v1/models":
            return 302, {}
        if path == "/v1/models":
            return 200, {"data": self.listed}
        if path == "/extras/tokenize":
            return 200, {"tokens": [BOS, *(ord(char) for char in body["input"])]}
        if path != "/v1/completions":
            return 404, {"error": "no such route"}
        self.requests.append(body)
        if "grammar" in body and self.refuse_grammar:
            return 400, {"error": "unknown field: grammar"}
        usage = {"prompt_tokens": len(body["prompt"]), "completion_tokens": 1}
        if "logprobs" in body:
            suffix = next(
                (
                    s
                    for s in sorted(self.alternatives, key=len, reverse=True)
                    if body["prompt"].endswith(s)
                ),
                "",
            )
            top = [self.alternatives.get(suffix, {})]
            return 200, {
                "choices": [{"text": "", "logprobs": {"top_logprobs": top}}],
                "usage": usage,
            }
        return 200, {"choices": [{"text": self.text}], "usage": usage}


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    fake = FakeServer()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, body: dict[str, Any]) -> None:
            fake.authorizations.append(self.headers.get("Authorization"))
            status, answer = fake.answer(self.path, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            if status == 302:
                self.send_header("Location", "http://8.8.8.8:8080/v1/models")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._reply({})

        def do_POST(self) -> None:
            self._reply(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake
    server.shutdown()


def backend_for(fake: FakeServer) -> OpenAIBackend:
    return OpenAIBackend(
        fake.url, ctx_cap=2048, model_name=None, api_key=None, fallback_counter=len
    )


def test_options_are_scored_token_by_token_from_the_top_alternatives(
    fake_server: FakeServer,
) -> None:
    fake_server.alternatives = {
        ":": {"sk": -0.5, "deep": -1.0, "x": -3.0},
        ":sk": {"im": -0.1, "ip": -2.3},
        ":skim": {"\n": -0.01},
        ":skip": {"\n": -0.02},
        ":deep": {"\n": -0.2},
    }
    scores = backend_for(fake_server).score("Verdict:", ["skim\n", "skip\n", "deep\n", "zzz\n"])
    assert scores == pytest.approx([-0.61, -2.82, -1.2, -4.0])
    # one request per distinct prefix: "", "sk", "skim", "skip", "deep"
    assert len(fake_server.requests) == 5


def test_tokens_are_the_servers_without_its_bos_and_banned_starts_become_a_logit_bias(
    fake_server: FakeServer,
) -> None:
    backend = backend_for(fake_server)
    assert backend.count_tokens("abc") == 3
    completion = backend.complete("prompt", max_tokens=8, stop=["\n"], banned_starts=["xy", "z"])
    assert completion.text == "fine"
    assert fake_server.requests[-1]["logit_bias"] == {str(ord("x")): -100.0, str(ord("z")): -100.0}
    assert fake_server.requests[-1]["model"] == "served-model"
    assert backend.info.sha256 is None and backend.info.server == server_root(fake_server.url)


def test_the_named_model_its_context_size_and_the_key(fake_server: FakeServer) -> None:
    fake_server.listed = [
        {"id": "small"},
        {"id": "coder", "max_model_len": 1500, "meta": {"size": 4_700_000_000}},
    ]
    backend = OpenAIBackend(
        fake_server.url, ctx_cap=2048, model_name="coder", api_key="sk-1", fallback_counter=len
    )
    assert (backend.model_name, backend.context_size, backend.model_bytes) == (
        "coder",
        1500,
        4_700_000_000,
    )
    backend.complete("p", max_tokens=4, stop=[])
    assert fake_server.requests[-1]["model"] == "coder"
    assert set(fake_server.authorizations) == {"Bearer sk-1"}
    missing = OpenAIBackend(
        fake_server.url, ctx_cap=2048, model_name="other", api_key=None, fallback_counter=len
    )
    with pytest.raises(
        ServerError, match=re.escape("does not serve other (it lists: small, coder)")
    ):
        missing.info  # noqa: B018


def test_a_refused_grammar_falls_back_to_plain_requests_once(fake_server: FakeServer) -> None:
    fake_server.refuse_grammar = True
    backend = backend_for(fake_server)
    for _ in range(2):
        assert backend.complete("p", max_tokens=4, stop=[], grammar='root ::= "a"').text == "fine"
    assert ["grammar" in body for body in fake_server.requests] == [True, False, False]


def test_redirects_are_not_followed(fake_server: FakeServer) -> None:
    moved = OpenAIBackend(
        fake_server.url.replace("/v1/", "/moved"),
        ctx_cap=2048,
        model_name=None,
        api_key=None,
        fallback_counter=len,
    )
    with pytest.raises(ServerError, match="answered 302"):
        moved.info  # noqa: B018


def test_proxies_in_the_environment_are_never_used(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("no_proxy", raising=False)
    assert backend_for(fake_server).complete("p", max_tokens=4, stop=[]).text == "fine"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://8.8.8.8:8000", "public address"),
        ("ftp://127.0.0.1/", "not an http:// or https:// address"),
        ("127.0.0.1:8000", "not an http:// or https:// address"),
    ],
)
def test_servers_outside_the_own_network_are_refused(url: str, message: str) -> None:
    with pytest.raises(ServerError, match=message):
        OpenAIBackend(url, ctx_cap=2048, model_name=None, api_key=None, fallback_counter=len)


def test_server_settings_are_checked(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="needs --base-url"):
        resolve_settings({"repo": str(tmp_path), "backend": "openai"}, env={})
    with pytest.raises(ConfigError, match="--jobs needs --backend openai"):
        resolve_settings({"repo": str(tmp_path), "jobs": 2}, env={})
    with pytest.raises(ConfigError, match="name a served model with --server-model"):
        resolve_settings(
            {"repo": str(tmp_path), "model": "m.gguf", "backend": "openai", "base_url": "http://x"},
            env={},
        )
    settings = resolve_settings(
        {"repo": str(tmp_path)},
        env={
            "PRSUM_BACKEND": "openai",
            "PRSUM_BASE_URL": "http://127.0.0.1:1",
            "PRSUM_API_KEY": "sk-local-123",
        },
    )
    assert (settings.backend, settings.jobs, settings.api_key) == ("openai", 1, "sk-local-123")
    assert "sk-local-123" not in repr(settings)


def test_an_unreachable_server_is_one_line_and_exit_2(repo: RepoBuilder) -> None:
    repo.commit("Add a helper (#5)", {"src/helper.py": "def helper():\n    return 1\n"})
    result = CliRunner().invoke(
        app,
        [
            "range",
            "v0..main",
            "--repo",
            str(repo.path),
            "--backend",
            "openai",
            "--base-url",
            "http://127.0.0.1:9",
        ],
    )
    assert result.exit_code == 2
    assert result.output.startswith("prsum: error: cannot reach the server at http://127.0.0.1:9")
    assert result.output.count("\n") == 1


def test_cards_through_a_server_in_the_cli(repo: RepoBuilder, fake_server: FakeServer) -> None:
    repo.commit("Add a helper (#5)", {"src/helper.py": "def helper():\n    return 1\n"})
    result = CliRunner().invoke(
        app,
        [
            *("range", "v0..main", "--repo", str(repo.path), "-f", "json", "--jobs", "2"),
            *("--backend", "openai", "--base-url", fake_server.url, "--prompt-style", "digest"),
            *("--strategy", "fields"),  # this fake server has no chat endpoint
        ],
    )
    assert result.exit_code == 0, result.output
    (card,) = json.loads(result.stdout)["cards"]
    assert card["model"] == {
        "file": "served-model",
        "sha256": None,
        "backend": "openai",
        "server": server_root(fake_server.url),
        "strategy": "fields",
        "adapter": None,
        "adapter_sha256": None,
    }


@dataclass
class Concurrency:
    running: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def slow(self, prompt: str) -> None:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        time.sleep(0.01)
        with self.lock:
            self.running -= 1


def summarize(repo: RepoBuilder, jobs: int, on_complete: Callable[[str], None]) -> list[Card]:
    summarizer = summarizer_for(
        repo.path,
        FakeBackend(on_complete=on_complete),
        env={"PRSUM_CACHE_DIR": str(repo.path.parent / f"cache-{jobs}")},
        backend="openai",
        base_url="http://127.0.0.1:1",
        jobs=jobs,
    )
    prs = summarizer.discover(RangeQuery("v0..main")).entries
    cards = [result for result in summarizer.cards(prs) if isinstance(result, Card)]
    assert [card.pr.sha for card in cards] == [pr.sha for pr in prs]  # the order given
    return cards


def test_jobs_write_cards_at_once_and_keep_their_order(repo: RepoBuilder) -> None:
    for number in range(1, 7):
        repo.commit(f"Add feature {number} (#{number})", {f"src/f{number}.py": f"X = {number}\n"})
    one, two = Concurrency(), Concurrency()
    alone = summarize(repo, 1, one.slow)
    together = summarize(repo, 2, two.slow)
    assert (one.peak, two.peak) == (1, 2)
    assert [card.body for card in together] == [card.body for card in alone]
