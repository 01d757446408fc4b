"""The server backend: any OpenAI-compatible completions server on the user's own network.

llama.cpp's `llama-server`, `python -m llama_cpp.server`, vLLM and SGLang all serve the legacy
`/v1/completions` endpoint (the field-by-field protocol, as with the embedded model) and
`/v1/chat/completions` (a whole card in one request, held to a JSON schema where the server
takes `response_format`). Only the standard library talks HTTP here, and never through a
proxy: the address the user gave is the only one contacted.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prsum.errors import GenerationError, ServerError
from prsum.llm import GREEDY, Capabilities, Completion, Message, Sampling
from prsum.types import ModelInfo

SEED = 42
# Alternatives asked for per scoring step; servers cap it (OpenAI's own API at 5).
TOP_LOGPROBS = 10
# Tokens an option is scored over; verdict labels are one or two tokens long.
MAX_SCORED_TOKENS = 4
TIMEOUT_SECONDS = 600.0  # one request; a busy server queues requests from other jobs
_log = logging.getLogger("prsum.openai")

Json = dict[str, Any]


class _Refused(ServerError):
    """The server answered with an HTTP error: it will not do what was asked."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect could lead off the user's network: it is an error, not followed."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def server_root(base_url: str) -> str:
    """`http://host:port` from what users paste: with or without a trailing `/v1` or slash."""
    parsed = urllib.parse.urlsplit(base_url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ServerError(f"--base-url {base_url!r} is not an http:// or https:// address")
    path = parsed.path.rstrip("/")
    path = path.removesuffix("/v1")
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path, "", ""))


def check_own_network(root: str) -> None:
    """Refuse a server outside the user's own network: prsum never sends code to the internet.

    Loopback, private (RFC 1918, RFC 4193) and link-local addresses are the user's own.
    """
    host = urllib.parse.urlsplit(root).hostname or ""
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError as exc:
        raise ServerError(f"cannot resolve the server's host {host!r}: {exc}") from None
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if not (ip.is_loopback or ip.is_private or ip.is_link_local):
            raise ServerError(
                f"{host} resolves to {ip}, a public address: prsum only sends code to servers "
                "on your own network (loopback or private addresses)"
            )


def _top_alternatives(choice: Json) -> dict[str, float]:
    """The first generated token's alternatives and their log-probabilities.

    Servers answer in two shapes: the legacy completions one (llama_cpp.server, vLLM, SGLang)
    and the chat one (llama.cpp's llama-server).
    """
    logprobs = choice.get("logprobs") or {}
    legacy = logprobs.get("top_logprobs")
    if legacy and isinstance(legacy[0], dict):
        return {str(token): float(value) for token, value in legacy[0].items()}
    content = logprobs.get("content")
    if content:
        return {str(item["token"]): float(item["logprob"]) for item in content[0]["top_logprobs"]}
    return {}


def _sampled(sampling: Sampling) -> Json:
    # llama.cpp's servers call it repeat_penalty, vLLM and SGLang repetition_penalty; each
    # ignores the other's name.
    return {
        "temperature": sampling.temperature,
        "repeat_penalty": sampling.repeat_penalty,
        "repetition_penalty": sampling.repeat_penalty,
    }


class OpenAIBackend:
    """A model behind an OpenAI-compatible server; thread-safe, so cards can be written in parallel."""

    def __init__(
        self,
        base_url: str,
        *,
        ctx_cap: int,
        model_name: str | None,
        api_key: str | None,
        fallback_counter: Callable[[str], int],
    ) -> None:
        """`fallback_counter` estimates token counts when the server has no tokenize endpoint."""
        self.root = server_root(base_url)
        check_own_network(self.root)
        self._ctx_cap = ctx_cap
        self._model_name = model_name
        self._api_key = api_key
        self._fallback_counter = fallback_counter
        # No proxies (http_proxy and friends) and no redirects: the address checked is the
        # only one contacted.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirects())
        self._lock = threading.Lock()
        self._grammar_accepted = True
        self._schema_accepted = True
        self._logprobs_accepted = True
        self._tokenize_route: tuple[str, Callable[[str], Json]] | None = None
        self._tokenize_probed = False
        self._added_tokens = 0  # what the tokenize endpoint puts before any text (a BOS)

    def _post(self, path: str, body: Json) -> Json:
        return self._request(path, json.dumps(body).encode("utf-8"))

    def _request(self, path: str, data: bytes | None = None) -> Json:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.root + path, data=data, headers=headers)
        try:
            with self._opener.open(request, timeout=TIMEOUT_SECONDS) as response:
                answer = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", errors="replace")[:300].replace("\n", " ")
            raise _Refused(f"{self.root}{path} answered {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ServerError(f"cannot reach the server at {self.root}: {reason}") from None
        except ValueError:
            raise ServerError(f"{self.root}{path} did not answer JSON") from None
        if not isinstance(answer, dict):
            raise ServerError(f"{self.root}{path} answered {type(answer).__name__}, not an object")
        return answer

    @functools.cached_property
    def _listed_model(self) -> Json:
        """The served model's entry in /v1/models: the one named by the user, else the first."""
        models = self._request("/v1/models").get("data") or []
        for entry in models:
            if self._model_name is None or entry.get("id") == self._model_name:
                return dict(entry)
        names = ", ".join(str(entry.get("id")) for entry in models) or "none"
        wanted = self._model_name or "any model"
        raise ServerError(f"the server at {self.root} does not serve {wanted} (it lists: {names})")

    @property
    def model_name(self) -> str:
        return str(self._listed_model.get("id", ""))

    @property
    def model_bytes(self) -> int | None:
        """The served model's size: as the server reports it (llama-server does), or of the
        file its name points to (llama_cpp.server names a model by its path); else None."""
        size = (self._listed_model.get("meta") or {}).get("size")
        if size:
            return int(size)
        path = Path(self.model_name)
        return path.stat().st_size if path.is_absolute() and path.is_file() else None

    @functools.cached_property
    def context_size(self) -> int:
        """The user's --ctx, capped by the server's context when the server reports it."""
        listed = self._listed_model
        reported = listed.get("max_model_len") or (listed.get("meta") or {}).get("n_ctx_train")
        return min(self._ctx_cap, int(reported)) if reported else self._ctx_cap

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(file=self.model_name, sha256=None, backend="openai", server=self.root)

    @property
    def capabilities(self) -> Capabilities:
        # The server's own chat template; a schema until the server refuses one.
        return Capabilities(completion=True, chat="server", json_schema=self._schema_accepted)

    def _tokenize_routes(self) -> list[tuple[str, Callable[[str], Json]]]:
        """The tokenize endpoints servers offer, each with its request body."""
        return [
            ("/tokenize", lambda text: {"content": text, "add_special": False}),  # llama-server
            (
                "/tokenize",
                lambda text: {
                    "model": self.model_name,
                    "prompt": text,
                    "add_special_tokens": False,
                },
            ),  # vLLM, SGLang
            ("/extras/tokenize", lambda text: {"input": text}),  # llama_cpp.server
        ]

    def _server_tokens(self, text: str) -> list[int] | None:
        """The server's own tokens for `text` as a continuation (no BOS), or None when it
        offers no tokenize endpoint."""
        with self._lock:
            if not self._tokenize_probed:
                self._tokenize_probed = True
                self._probe_tokenize()
        if self._tokenize_route is None:
            return None
        path, body = self._tokenize_route
        tokens = self._post(path, body(text)).get("tokens") or []
        ids = [int(token["id"]) if isinstance(token, dict) else int(token) for token in tokens]
        return ids[self._added_tokens :]

    def _probe_tokenize(self) -> None:
        for path, body in self._tokenize_routes():
            try:
                empty = self._post(path, body("")).get("tokens")
            except ServerError:
                continue
            if isinstance(empty, list):
                # llama_cpp.server adds a BOS it cannot be told to leave out.
                self._tokenize_route, self._added_tokens = (path, body), len(empty)
                return
        _log.warning("%s has no tokenize endpoint: token counts are estimates", self.root)

    @functools.lru_cache(maxsize=8192)  # noqa: B019  # one backend per run; packing asks the same texts again
    def count_tokens(self, text: str) -> int:
        tokens = self._server_tokens(text)
        return len(tokens) if tokens is not None else self._fallback_counter(text)

    def _banned_token_bias(self, banned_starts: Sequence[str]) -> dict[str, float]:
        bias: dict[str, float] = {}
        for text in banned_starts:
            tokens = self._server_tokens(text)
            if tokens:
                bias[str(tokens[0])] = -100.0  # the lowest bias the OpenAI API allows
        return bias

    def _completion_body(self, prompt: str, max_tokens: int) -> Json:
        return {
            "model": self.model_name,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "seed": SEED,
        }

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        stop: Sequence[str],
        grammar: str | None = None,
        banned_starts: Sequence[str] = (),
        sampling: Sampling = GREEDY,
    ) -> Completion:
        body = self._completion_body(prompt, max_tokens) | _sampled(sampling)
        body["stop"] = list(stop)
        bias = self._banned_token_bias(banned_starts)
        if bias:
            body["logit_bias"] = bias
        started = time.perf_counter()
        answer = self._completion(body, grammar)
        return self._completion_of(answer, "text", started)

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        sampling: Sampling = GREEDY,
        json_schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        body: Json = {
            "model": self.model_name,
            "messages": [dict(message) for message in messages],
            "max_tokens": max_tokens,
            "seed": SEED,
        } | _sampled(sampling)
        if stop:
            body["stop"] = list(stop)
        started = time.perf_counter()
        try:
            answer = None
            if json_schema is not None and self._schema_accepted:
                schema = {
                    "type": "json_schema",
                    "json_schema": {"name": "card", "schema": json_schema},
                }
                try:
                    answer = self._post("/v1/chat/completions", body | {"response_format": schema})
                except _Refused:
                    self._schema_accepted = False
                    _log.warning("%s refused a JSON schema: answers are checked instead", self.root)
            if answer is None:
                answer = self._post("/v1/chat/completions", body)
            answer = self._checked(answer)
        except ServerError as exc:
            raise GenerationError(str(exc)) from None
        return self._completion_of(answer, "message", started)

    def _completion_of(self, answer: Json, kind: str, started: float) -> Completion:
        choice = answer["choices"][0]
        text = (
            choice.get("text") if kind == "text" else (choice.get("message") or {}).get("content")
        )
        usage = answer.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        # llama-server says how much of the prompt it evaluated (the rest was in its KV cache).
        evaluated = (answer.get("timings") or {}).get("prompt_n")
        return Completion(
            text=str(text or ""),
            prompt_tokens=prompt_tokens,
            prompt_tokens_evaluated=int(evaluated) if evaluated is not None else prompt_tokens,
            completion_tokens=int(usage.get("completion_tokens") or 0),
            seconds=time.perf_counter() - started,
        )

    def _completion(self, body: Json, grammar: str | None) -> Json:
        """POST a completion; a grammar goes along where the server accepts one (llama.cpp's
        servers do), else the caller's validation and retries stand in for it."""
        try:
            if grammar is not None and self._grammar_accepted:
                try:
                    return self._checked(self._post("/v1/completions", body | {"grammar": grammar}))
                except _Refused:
                    self._grammar_accepted = False
                    _log.warning(
                        "%s refused a grammar: fields are validated and retried instead", self.root
                    )
            return self._checked(self._post("/v1/completions", body))
        except ServerError as exc:
            raise GenerationError(str(exc)) from None

    def _checked(self, answer: Json) -> Json:
        choices = answer.get("choices")
        if not choices or not isinstance(choices[0], dict):
            raise ServerError(f"{self.root} answered without choices")
        return answer

    def _alternatives(self, prompt: str) -> dict[str, float]:
        body = self._completion_body(prompt, 1) | {"logprobs": TOP_LOGPROBS}
        try:
            answer = self._checked(self._post("/v1/completions", body))
        except _Refused:
            raise
        except ServerError as exc:
            raise GenerationError(str(exc)) from None
        return _top_alternatives(answer["choices"][0])

    def _scoring_refused(self, error: ServerError) -> None:
        with self._lock:
            if self._logprobs_accepted:
                self._logprobs_accepted = False
                _log.warning(
                    "%s gives no log-probabilities (%s): verdicts follow the rubric alone",
                    self.root,
                    error,
                )

    def score(self, prompt: str, options: Sequence[str]) -> list[float]:
        """Log-probability of each option, token by token from the server's top alternatives.

        Servers disagree on log-probabilities of prompt tokens (llama-server returns none for
        `echo`: ggml-org/llama.cpp#27174), so each option is walked as the model would write
        it: at each step the likeliest listed token that starts the rest of the option. An
        option whose next piece is not among the alternatives gets less than the least listed.
        """
        if not self._logprobs_accepted:
            return [0.0] * len(options)
        try:
            return self._walked_scores(prompt, options)
        except _Refused as exc:
            self._scoring_refused(exc)
            return [0.0] * len(options)

    def _walked_scores(self, prompt: str, options: Sequence[str]) -> list[float]:
        asked: dict[str, dict[str, float]] = {}
        scores: list[float] = []
        for option in options:
            total, written, rest = 0.0, "", option
            for _ in range(MAX_SCORED_TOKENS):
                if not rest:
                    break
                if written not in asked:
                    asked[written] = self._alternatives(prompt + written)
                alternatives = asked[written]
                fitting = [
                    (lp, tok) for tok, lp in alternatives.items() if tok and rest.startswith(tok)
                ]
                if not fitting:
                    total += min(alternatives.values(), default=0.0) - 1.0
                    break
                logprob, token = max(fitting)
                total += logprob
                written, rest = written + token, rest[len(token) :]
            scores.append(total)
        return scores
