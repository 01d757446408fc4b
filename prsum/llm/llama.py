"""The embedded backend: a GGUF model run in-process by llama-cpp-python (its only import)."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import logging
import math
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prsum.errors import GenerationError, ModelError
from prsum.llm import (
    GREEDY,
    Capabilities,
    ChatFormatSource,
    Completion,
    Message,
    Sampling,
)
from prsum.types import ModelInfo

# Chat formats prsum knows for model families whose base models ship no template (by
# general.architecture prefix): llama-cpp-python's own names, as `--chat_format` takes them.
_FAMILY_CHAT_FORMATS = {"gemma": "gemma"}

SEED = 42
# llama.cpp's repeat penalty looks back this many tokens (its default, penalty_last_n).
_PENALTY_WINDOW = 64
_log = logging.getLogger("prsum.llama")


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _check_memory(path: Path) -> None:
    """Refuse, with a clear message, a model that cannot fit in memory, before trying."""
    available = available_memory()
    needed = int(path.stat().st_size * 1.1)  # the weights, plus a margin for context and buffers
    if available is not None and needed > available:
        raise ModelError(
            f"{path.name} needs about {needed / 2**30:.1f} GiB of memory and {available / 2**30:.1f} GiB "
            "is available: close other programs or choose a smaller model"
        )


def _cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            return any(line.startswith("flags") and "amx_int8" in line.split() for line in cpuinfo)
    except OSError:
        return False


@contextlib.contextmanager
def llama_defaults(function: str, **fields: Any) -> Iterator[None]:
    """Within the block, llama.cpp's `function` (e.g. `llama_model_default_params`) returns
    its defaults with `fields` changed: for settings Llama() takes no parameter for."""
    import llama_cpp.llama_cpp as bindings

    original = getattr(bindings, function)

    def adjusted() -> Any:
        params = original()
        for name, value in fields.items():
            setattr(params, name, value)
        return params

    setattr(bindings, function, adjusted)
    try:
        yield
    finally:
        setattr(bindings, function, original)


@contextlib.contextmanager
def without_amx_repacking() -> Iterator[None]:
    """Load weights without llama.cpp's extra (repacked) buffers on AMX CPUs.

    ggml's AMX matmul segfaults on the first decode with Q4_K_M weights on some Sapphire
    Rapids machines (ggml-org/llama.cpp#20824, seen here with llama-cpp-python 0.3.36).
    """
    if not _cpu_has_amx():
        yield
        return
    with llama_defaults("llama_model_default_params", use_extra_bufts=False):
        yield


def requantize_output_matrix(source: Path, target: Path, threads: int) -> None:
    """Write `source` with its token embedding / output matrix in Q4_0, the rest unchanged.

    In small models with tied embeddings that matrix is most of the bytes read per decoded
    token (170 of 241 MiB in Gemma 3 270M, at Q8_0), so Q4_0 there speeds decoding. The
    other tensors keep their types: requantizing the whole file to Q4_0 measurably hurt the
    cards (bench/eval.py). Written to a temporary file first, so `target` is never partial.
    """
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    # The model's own mix: tensors already of that type are copied as they are.
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M
    params.allow_requantize = True
    params.token_embedding_type = llama_cpp.GGML_TYPE_Q4_0
    params.output_tensor_type = llama_cpp.GGML_TYPE_Q4_0
    params.nthread = threads
    partial = target.with_name(f".{target.name}.partial")
    _install_log_callback()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        status = llama_cpp.llama_model_quantize(
            str(source).encode(), str(partial).encode(), ctypes.byref(params)
        )
        if status != 0:
            raise ModelError(f"llama.cpp could not requantize {source} (status {status})")
        os.replace(partial, target)
    except OSError as exc:
        raise ModelError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)


def _penalize_repeats(logits: np.ndarray, answer: Sequence[int], penalty: float) -> None:
    """llama.cpp's repeat penalty over the answer's last `_PENALTY_WINDOW` tokens: each token
    among them loses logit by the factor `penalty` (divided when positive, multiplied when not)."""
    recent = np.unique(np.asarray(answer[-_PENALTY_WINDOW:]))
    values = logits[recent]
    logits[recent] = np.where(values > 0, values / penalty, values * penalty)


def _first_stop(text: str, stop: Sequence[str]) -> tuple[int, str] | None:
    """Where the first stop string begins in `text`, and which; None when none occurs."""
    found = [(at, word) for word in stop if word and (at := text.find(word)) >= 0]
    return min(found) if found else None


class _GrammarHold:
    """A GBNF grammar held over greedy decoding through llama.cpp's grammar sampler."""

    def __init__(self, llama: Any, grammar: str) -> None:
        import llama_cpp
        from llama_cpp._internals import LlamaTokenDataArray

        self._bindings = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar.encode("utf-8"), b"root"
        )
        if not self._sampler:
            raise GenerationError("llama.cpp could not parse the grammar")
        self._one = llama_cpp.llama_token_data_array(
            data=(llama_cpp.llama_token_data * 1)(), size=1, selected=-1, sorted=False
        )
        self._all = LlamaTokenDataArray(n_vocab=llama.n_vocab())

    def choose(self, token: int, logits: np.ndarray) -> int:
        """`token` if the grammar allows it here, else the likeliest token it allows; the
        choice is accepted into the grammar's state."""
        one = self._one
        one.data[0].id = token  # type: ignore[assignment]  # ctypes converts the int
        one.data[0].logit, one.size = 0.0, 1
        self._bindings.llama_sampler_apply(self._sampler, ctypes.byref(one))
        if not math.isfinite(one.data[0].logit):
            self._all.copy_logits(logits)
            self._bindings.llama_sampler_apply(self._sampler, ctypes.byref(self._all.candidates))
            token = int(np.argmax(self._all.candidates_data.logit))
        self._bindings.llama_sampler_accept(self._sampler, token)
        return token

    def close(self) -> None:
        self._bindings.llama_sampler_free(self._sampler)


def _install_log_callback() -> None:
    """Send llama.cpp's C-level log lines to Python logging instead of straight to stderr."""
    import llama_cpp

    @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
    def forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        _log.debug(text.decode("utf-8", errors="replace").rstrip())

    _install_log_callback.keep = forward  # type: ignore[attr-defined]  # ctypes must keep it alive
    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))


class LlamaBackend:
    """Loads the vocabulary first (exact token counts, fast) and the weights on first generation."""

    def __init__(
        self,
        path: Path,
        *,
        ctx_cap: int,
        threads: int,
        sha256: str,
        gpu_layers: int = 0,
        adapter: Path | None = None,
        adapter_sha256: str | None = None,
    ) -> None:
        """`adapter`: prsum's LoRA adapter (GGUF), already merged into `path` (prsum.llm.merge)."""
        self._path = path
        self._adapter = adapter
        self._adapter_sha256 = adapter_sha256
        self._gpu_layers = gpu_layers
        self._ctx_cap = ctx_cap
        self._threads = threads
        self._sha256 = sha256
        self._vocab: Any = None
        self._model: Any = None

    def _load(self, vocab_only: bool) -> Any:
        import llama_cpp

        if not vocab_only:
            _check_memory(self._path)
        _install_log_callback()
        try:
            with without_amx_repacking():
                return llama_cpp.Llama(
                    model_path=str(self._path),
                    vocab_only=vocab_only,
                    n_ctx=64 if vocab_only else self.context_size,
                    n_batch=512,
                    n_threads=self._threads,
                    n_threads_batch=self._threads,
                    n_gpu_layers=self._gpu_layers,
                    flash_attn=True,
                    # Gemma 3's sliding-window cache otherwise corrupts a reused prompt prefix.
                    swa_full=True,
                    seed=SEED,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"llama.cpp cannot load {self._path}: {exc}; is the file complete?"
            ) from None

    @property
    def _tokenizer(self) -> Any:
        if self._model is not None:
            return self._model
        if self._vocab is None:
            self._vocab = self._load(vocab_only=True)
        return self._vocab

    @property
    def _llama(self) -> Any:
        if self._model is None:
            self._model = self._load(vocab_only=False)
            self._vocab = None
        return self._model

    @functools.cached_property
    def context_size(self) -> int:
        """The model's trained context, capped by the user's --ctx."""
        metadata = self._tokenizer.metadata
        architecture = metadata.get("general.architecture", "")
        trained = int(metadata.get(f"{architecture}.context_length", 0) or 0)
        return min(trained, self._ctx_cap) if trained > 0 else self._ctx_cap

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(
            file=self._path.name,
            sha256=self._sha256,
            backend="llama",
            adapter=self._adapter.name if self._adapter else None,
            adapter_sha256=self._adapter_sha256,
        )

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        """Tokens of a prompt, BOS first. `special`: the chat format's markers (Gemma's
        `<start_of_turn>`) become their special tokens, as the model was trained with them;
        text from a repository is never tokenized so, so it cannot forge a turn."""
        return list(self._tokenizer.tokenize(text.encode("utf-8"), add_bos=True, special=special))

    def continuation(self, text: str) -> list[int]:
        """Tokens of `text` as it continues a prompt (no BOS)."""
        return list(self._tokenizer.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def markers(self, text: str) -> list[int]:
        """Tokens of a chat format's markers (`<|im_end|>`) as special tokens, no BOS."""
        return self._tokens(text, special=True, bos=False)

    def count_tokens(self, text: str) -> int:
        return len(self.continuation(text))

    def _reused_prefix(self, tokens: Sequence[int]) -> int:
        cached = self._llama.input_ids[: self._llama.n_tokens]
        shared = 0
        for old, new in zip(cached, tokens, strict=False):
            if old != new:
                break
            shared += 1
        return shared

    @functools.cached_property
    def _chat_format(self) -> tuple[ChatFormatSource, Any] | None:
        """The model's chat formatter: its own template from the GGUF metadata, else the
        format of its family, else None (no chat)."""
        from llama_cpp import llama_chat_format

        metadata = self._tokenizer.metadata
        template = metadata.get("tokenizer.chat_template")
        if template:
            vocab = self._tokenizer

            def token_text(key: str) -> str:
                index = int(metadata.get(key, -1))
                return (
                    vocab.detokenize([index], special=True).decode("utf-8", errors="replace")
                    if index >= 0
                    else ""
                )

            formatter = llama_chat_format.Jinja2ChatFormatter(
                template,
                eos_token=token_text("tokenizer.ggml.eos_token_id"),
                bos_token=token_text("tokenizer.ggml.bos_token_id"),
            )
            return "model", formatter
        architecture = str(metadata.get("general.architecture", ""))
        for family, name in _FAMILY_CHAT_FORMATS.items():
            if architecture.startswith(family):
                return "family", getattr(llama_chat_format, f"format_{name}")
        return None

    @property
    def capabilities(self) -> Capabilities:
        chat = self._chat_format
        source = chat[0] if chat else None
        if source == "family" and self._adapter is not None:
            source = "tuned"  # prsum's adapter taught the model to answer in this format
        # A JSON schema becomes a grammar, asked only about the likeliest token (`_GrammarHold`).
        return Capabilities(completion=True, chat=source, json_schema=True)

    def _chat_prompt(self, messages: Sequence[Message]) -> tuple[str, list[str]]:
        chat = self._chat_format
        if chat is None:
            raise GenerationError(f"{self._path.name} has no chat template: use --strategy fields")
        rendered = chat[1](messages=[dict(message) for message in messages])
        stop = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop or ""]
        bos = self._tokenizer.detokenize([self._tokenizer.token_bos()]).decode("utf-8", "replace")
        # tokenize() adds the BOS itself.
        prompt = rendered.prompt.removeprefix(bos) if bos else rendered.prompt
        return prompt, [text for text in stop if text]

    def chat_tokens(self, messages: Sequence[Message]) -> tuple[list[int], list[str]]:
        """The chat request as the model reads it, and its stop strings. The markers of the
        format are special tokens; the messages' own text is split out and tokenized as text."""
        prompt, stop = self._chat_prompt(messages)
        tokens: list[int] = []
        rest = prompt
        for message in messages:
            before, found, rest = rest.partition(message["content"])
            if not found:  # a template that rewrites the content: markers and text alike
                return self.tokenize(prompt, special=True), stop
            tokens += self._tokens(before, special=True, bos=not tokens)
            tokens += self.continuation(message["content"])
        tokens += self._tokens(rest, special=True, bos=False)
        return tokens, stop

    def _tokens(self, text: str, *, special: bool, bos: bool) -> list[int]:
        if not text:
            return [self._tokenizer.token_bos()] if bos else []
        return list(self._tokenizer.tokenize(text.encode("utf-8"), add_bos=bos, special=special))

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        sampling: Sampling = GREEDY,
        json_schema: Any = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        tokens, template_stop = self.chat_tokens(messages)
        grammar = None
        if json_schema is not None:
            from llama_cpp.llama_grammar import json_schema_to_gbnf

            grammar = json_schema_to_gbnf(json.dumps(json_schema))
        return self._generate(
            tokens,
            max_tokens=max_tokens,
            stop=[*template_stop, *stop],
            grammar=grammar,
            sampling=sampling,
        )

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
        return self._generate(
            self.tokenize(prompt),
            max_tokens=max_tokens,
            stop=stop,
            grammar=grammar,
            banned_starts=banned_starts,
            sampling=sampling,
        )

    def _generate(
        self,
        tokens: list[int],
        *,
        max_tokens: int,
        stop: Sequence[str],
        grammar: str | None = None,
        banned_starts: Sequence[str] = (),
        sampling: Sampling = GREEDY,
    ) -> Completion:
        """Greedy decoding, token by token, in our own loop: banned first tokens, llama.cpp's
        repeat penalty over the answer's last tokens, then the grammar, then the likeliest
        token. The grammar is asked only
        about that token, and shapes the whole vocabulary only when it refuses it (llama.cpp's
        own fast path; its sampler chain would filter all 150k+ candidates every token)."""
        room = self.context_size - len(tokens)
        if room < 1:
            raise GenerationError(
                f"prompt of {len(tokens)} tokens does not fit the {self.context_size}-token context"
            )
        if sampling.temperature != 0:
            raise GenerationError("the embedded backend decodes greedily (temperature 0)")
        llama = self._llama
        banned = [pieces[0] for pieces in map(self.continuation, banned_starts) if pieces]
        started = time.perf_counter()
        reused = self._evaluate_prompt(tokens)
        prompt_seconds = time.perf_counter() - started
        answer: list[int] = []
        text = ""
        hold = _GrammarHold(llama, grammar) if grammar else None
        try:
            for _ in range(min(max_tokens, room)):
                logits = self._last_logits()
                if banned and not answer:
                    logits[banned] = -np.inf
                if sampling.repeat_penalty != 1.0 and answer:
                    _penalize_repeats(logits, answer, sampling.repeat_penalty)
                token = int(np.argmax(logits))
                if hold is not None:
                    token = hold.choose(token, logits)
                if self._is_end(token):
                    break
                answer.append(token)
                text = self._text(answer)
                if cut := _first_stop(text, stop):
                    text = text[: cut[0]]
                    break
                llama.eval([token])
        except (ValueError, RuntimeError) as exc:
            raise GenerationError(f"the model failed to generate: {exc}") from None
        finally:
            if hold is not None:
                hold.close()
        return Completion(
            text=text,
            prompt_tokens=len(tokens),
            prompt_tokens_evaluated=len(tokens) - reused,
            completion_tokens=len(answer),
            seconds=time.perf_counter() - started,
            prompt_seconds=prompt_seconds,
        )

    def _evaluate_prompt(self, tokens: list[int]) -> int:
        """Bring the KV cache to `tokens` (all but what it already holds of them); the count
        of tokens reused. The last token is always evaluated, for its logits."""
        llama = self._llama
        reused = min(self._reused_prefix(tokens), len(tokens) - 1)
        if not llama._ctx.kv_cache_seq_rm(-1, reused, -1):  # a cache that cannot be cut
            llama.reset()
            reused = 0
        llama.n_tokens = reused
        llama.eval(tokens[reused:])
        return reused

    def _last_logits(self) -> np.ndarray:
        """The logits after the last evaluated token, as a copy this loop may change."""
        import llama_cpp

        pointer = llama_cpp.llama_get_logits_ith(self._llama.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self._llama.n_vocab(),)).copy()

    def _is_end(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_token_is_eog(self._llama._model.vocab, token))

    def _text(self, answer: list[int]) -> str:
        """The answer's text; an incomplete UTF-8 character at its end is left out for now."""
        text: bytes = self._llama.detokenize(answer)
        return text.decode("utf-8", errors="ignore")

    def _last_logprobs(self) -> np.ndarray:
        import llama_cpp

        llama = self._llama
        pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
        logits = np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),)).astype(np.float64)
        peak = float(logits.max())
        logprobs: np.ndarray = logits - peak - math.log(float(np.exp(logits - peak).sum()))
        return logprobs

    def score(self, prompt: str, options: Sequence[str]) -> list[float]:
        llama = self._llama
        tokens = self.tokenize(prompt)
        reused = min(self._reused_prefix(tokens), len(tokens) - 1)
        # Evaluate only what the KV cache lacks; the last prompt token yields the first logits.
        llama.n_tokens = reused
        llama.eval(tokens[reused:])
        base = llama.n_tokens
        scores = []
        for option in options:
            llama.n_tokens = base
            total = 0.0
            for token in self.continuation(option):
                total += float(self._last_logprobs()[token])
                llama.eval([token])
            scores.append(total)
        llama.n_tokens = base
        return scores
