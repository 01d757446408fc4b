"""Where does a run's time go? Cards for a release range with each embedded model, side by
side; then from the cache; then without the KV cache's prefix reuse; optionally through a
server.

For each model (`--models`, default `coder,small`: the 1.5B coder and the small tuned model;
`small:no-adapter` is a model without prsum's adapter, `coder:whole` one writing with a
strategy other than its default),
fresh runs alternate, `--pairs` times, so all see the same machine: seconds per card (median
over the runs) and their ratio; prompt tokens sent against those llama.cpp actually evaluated
(the rest came from its KV cache), prefill and decode speed (tokens per second of each phase);
completion tokens; the ratio of prsum's wall time to the model's own time (what is not model
time is prsum's overhead); and a cached re-run's wall time as a share of a fresh one. Then the
first model once more with every prompt evaluated from scratch (no prefix reused between
cards): the gain of reusing the instructions' KV state, as a ratio. With `--server`, the first
model through `python -m llama_cpp.server` on 127.0.0.1, with --jobs 1 and 2.

    python bench/speed.py [--repo PATH --range A..B] [--models coder,small] [--pairs N]
                          [--threads N] [--server]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import fixture_clone, median

from prsum.config import STRATEGIES, resolve_settings
from prsum.llm.llama import LlamaBackend
from prsum.llm.models import resolve_model
from prsum.pipeline import Summarizer
from prsum.types import Card, RangeQuery
from tests import llama_server


@dataclass
class Measured:
    """The fresh runs of one model, and its cached re-run."""

    model: str
    option: str = ""  # "no-adapter" (prsum's adapter left off), or a strategy

    @classmethod
    def named(cls, spec: str) -> Measured:
        """`coder`; `small:no-adapter` for a model without prsum's adapter; `coder:whole` for
        a model writing with that strategy."""
        model, _, option = spec.partition(":")
        if option not in ("", "no-adapter", *STRATEGIES):
            raise SystemExit(f"{spec}: the option is 'no-adapter' or a strategy")
        return cls(model, option)

    @property
    def label(self) -> str:
        return f"{self.model}:{self.option}" if self.option else self.model

    @property
    def flags(self) -> dict[str, str]:
        adapter = {"adapter": "false"} if self.option == "no-adapter" else {}
        strategy = {"strategy": self.option} if self.option in STRATEGIES else {}
        return {"model": self.model, **adapter, **strategy}

    walls: list[float] = field(default_factory=list)
    cards: list[Card] = field(default_factory=list)  # of the last fresh run
    cached: float = 0.0
    from_cache: int = 0

    @property
    def per_card(self) -> float:
        return median(self.walls) / len(self.cards)


def run(repo: Path, spec: str, cache_dir: Path, **flags: object) -> tuple[float, list[Card]]:
    settings = resolve_settings(
        {"repo": str(repo), **{name: value for name, value in flags.items() if value is not None}},
        env={"PRSUM_CACHE_DIR": str(cache_dir)},
    )
    started = time.perf_counter()
    summarizer = Summarizer(settings)
    discovery = summarizer.discover(RangeQuery(spec))
    cards = [result for result in summarizer.cards(discovery.entries) if isinstance(result, Card)]
    return time.perf_counter() - started, cards


def fresh_cache(root: Path, name: str, models: Path) -> Path:
    """A fresh card cache that shares the prepared model files."""
    cache = root / name
    cache.mkdir()
    (cache / "models").symlink_to(models)
    return cache


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repo", type=Path, help="a clone (default: typer from ../shared/fixtures)"
    )
    parser.add_argument("--range", default="0.26.8..0.27.1")
    parser.add_argument("--models", default="coder,small", help="embedded models, comma-separated")
    parser.add_argument("--pairs", type=int, default=2, help="fresh runs of each model")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--server", action="store_true", help="add the server backend rows")
    args = parser.parse_args()
    variants = [Measured.named(spec) for spec in args.models.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        repo = args.repo or fixture_clone("typer", root)
        models = root / "model-cache" / "models"
        # Each model is assembled (optimized, merged with its adapter) once per machine: not
        # part of a run.
        prepared = [
            resolve_model(
                resolve_settings(variant.flags, env={"PRSUM_CACHE_DIR": str(models.parent)})
            ).path
            for variant in variants
        ]
        models.mkdir(parents=True, exist_ok=True)
        flags = {"threads": args.threads}
        for index in range(args.pairs):
            for variant in variants:
                cache = fresh_cache(root, f"run-{variant.label}-{index}", models)
                seconds, variant.cards = run(repo, args.range, cache, **variant.flags, **flags)
                variant.walls.append(seconds)
        for variant in variants:
            cache = root / f"run-{variant.label}-{args.pairs - 1}"
            variant.cached, again = run(repo, args.range, cache, **variant.flags, **flags)
            variant.from_cache = sum(card.timing.cached for card in again)
        first = variants[0]
        # Every prompt evaluated whole: what reusing the instructions' KV state saves.
        reuse = LlamaBackend._reused_prefix
        LlamaBackend._reused_prefix = lambda self, tokens: 0  # type: ignore[method-assign]
        try:
            cache = fresh_cache(root, "no-reuse", models)
            unreused, _ = run(repo, args.range, cache, **first.flags, **flags)
        finally:
            LlamaBackend._reused_prefix = reuse  # type: ignore[method-assign]
        served = server_runs(repo, args.range, prepared[0], root) if args.server else {}
    print(f"range {args.range}: {len(first.cards)} cards, {args.pairs} fresh runs each")
    for variant in variants:
        report(variant)
    for other in variants[1:]:
        ratios = [a / b for a, b in zip(first.walls, other.walls, strict=True)]
        print(
            f"\n{first.label} / {other.label}, seconds per card   {median(ratios):.2f}  "
            f"(per pair: {', '.join(f'{r:.2f}' for r in ratios)})"
        )
    print(
        f"{first.label} without prefix reuse / with it   {unreused / first.walls[-1]:.2f}  "
        f"(wall {unreused:.1f} s against {first.walls[-1]:.1f} s)"
    )
    for jobs, (seconds, count) in served.items():
        print(
            f"server, --jobs {jobs}                 {seconds / count:.2f} s per card  "
            f"(wall {seconds:.1f} s, {first.per_card / (seconds / count):.2f}x the embedded "
            "run's speed)"
        )


def report(variant: Measured) -> None:
    cards = variant.cards
    model_seconds = sum(card.timing.seconds for card in cards)
    prompt_seconds = sum(card.timing.prompt_seconds for card in cards)
    sent = sum(card.timing.prompt_tokens_sent for card in cards)
    evaluated = sum(card.timing.prompt_tokens_evaluated for card in cards)
    completion = sum(card.timing.completion_tokens for card in cards)
    fresh = median(variant.walls)
    print(f"\n{variant.label} ({cards[0].model.strategy}, {cards[0].coverage.view} view)")
    print(
        f"  seconds per card              {variant.per_card:.2f}  "
        f"(wall {', '.join(f'{w:.1f}' for w in variant.walls)} s)"
    )
    print(f"  prompt tokens sent            {sent}  (over all model calls)")
    print(
        f"  prompt tokens evaluated       {evaluated}  ({evaluated / sent:.0%} of sent: "
        "the rest reused from the KV cache)"
    )
    print(f"  completion tokens             {completion}")
    print(
        f"  prefill, decode               {evaluated / prompt_seconds:.0f}, "
        f"{completion / (model_seconds - prompt_seconds):.1f} tokens/s "
        f"({prompt_seconds:.0f} s and {model_seconds - prompt_seconds:.0f} s of the model's time)"
    )
    print(
        f"  wall / model time             {variant.walls[-1] / model_seconds:.2f}  "
        f"(model {model_seconds:.1f} s; target <= 1.10)"
    )
    print(
        f"  cached run                    {variant.cached:.2f} s = {variant.cached / fresh:.1%} "
        f"of a fresh one (target <= 5%), {variant.from_cache}/{len(cards)} from the cache"
    )


def server_runs(repo: Path, spec: str, model: Path, scratch: Path) -> dict[int, tuple[float, int]]:
    """Fresh runs (no cache) through llama_cpp.server on 127.0.0.1 serving `model` as the
    embedded backend uses it, with one and two jobs."""
    results: dict[int, tuple[float, int]] = {}
    with (scratch / "server.log").open("w") as log:
        process, url = llama_server.start(model, log)
        try:
            for jobs in (1, 2):
                seconds, cards = run(
                    repo,
                    spec,
                    scratch / f"server-{jobs}",
                    backend="openai",
                    base_url=url,
                    jobs=jobs,
                    cache="false",
                )
                results[jobs] = (seconds, len(cards))
        finally:
            process.terminate()
            process.wait(timeout=30)
    return results


if __name__ == "__main__":
    main()
