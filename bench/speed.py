"""Where does a run's time go? Cards for a release range with the default model, with its
adapter and without, side by side; then from the cache; then through a server.

For each variant (the default model with prsum's adapter, which writes whole cards, and the
base model without it, which writes field by field), fresh runs alternate, `--pairs` times,
so both see the same machine: seconds per card (median over the runs) and their ratio; prompt
tokens sent against those llama.cpp actually evaluated (the rest came from its KV cache);
completion tokens; the ratio of prsum's wall time to the model's own time (what is not model
time is prsum's overhead); and a cached re-run's wall time as a share of a fresh one. Then
the same range through the server backend: `python -m llama_cpp.server` on 127.0.0.1 serving
the default model (with the adapter when it is measured), with --jobs 1 and 2.

    python bench/speed.py [--repo PATH --range A..B] [--adapter both|on|off] [--pairs N]
                          [--no-server]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import fixture_clone, median

from prsum.config import resolve_settings
from prsum.llm.models import resolve_model
from prsum.pipeline import Summarizer
from prsum.types import Card, RangeQuery
from tests import llama_server


@dataclass
class Measured:
    """The fresh runs of one variant, and its cached re-run."""

    label: str
    adapter: bool
    walls: list[float] = field(default_factory=list)
    cards: list[Card] = field(default_factory=list)  # of the last fresh run
    cached: float = 0.0
    from_cache: int = 0

    @property
    def per_card(self) -> float:
        return median(self.walls) / len(self.cards)


def run(
    repo: Path, spec: str, cache_dir: Path, adapter: bool, **flags: object
) -> tuple[float, list[Card]]:
    settings = resolve_settings(
        {
            "repo": str(repo),
            "adapter": "true" if adapter else "false",
            **{name: value for name, value in flags.items() if value is not None},
        },
        env={"PRSUM_CACHE_DIR": str(cache_dir)},
    )
    started = time.perf_counter()
    summarizer = Summarizer(settings)
    discovery = summarizer.discover(RangeQuery(spec))
    cards = [result for result in summarizer.cards(discovery.entries) if isinstance(result, Card)]
    return time.perf_counter() - started, cards


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repo", type=Path, help="a clone (default: typer from ../shared/fixtures)"
    )
    parser.add_argument("--range", default="0.26.8..0.27.1")
    parser.add_argument("--adapter", choices=["both", "on", "off"], default="both")
    parser.add_argument("--pairs", type=int, default=2, help="fresh runs of each variant")
    parser.add_argument("--no-server", action="store_true", help="skip the server backend rows")
    args = parser.parse_args()
    variants = [
        Measured(label, adapter)
        for label, adapter in (
            ("tuned (adapter, whole)", True),
            ("base (no adapter, fields)", False),
        )
        if args.adapter in ("both", "on" if adapter else "off")
    ]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        repo = args.repo or fixture_clone("typer", root)
        cache = root / "model-cache"
        # The default model is assembled, optimized and merged with the adapter once per
        # machine: not part of a run.
        settings = resolve_settings({}, env={"PRSUM_CACHE_DIR": str(cache)})
        served_model = resolve_model(replace(settings, adapter=variants[0].adapter)).path
        resolve_model(replace(settings, adapter=variants[-1].adapter))
        for index in range(args.pairs):
            for variant in variants:
                run_cache = root / f"run-{variant.adapter}-{index}"
                # A fresh card cache; the prepared model file is shared.
                run_cache.mkdir()
                (run_cache / "models").symlink_to(cache / "models")
                seconds, variant.cards = run(repo, args.range, run_cache, variant.adapter)
                variant.walls.append(seconds)
        for variant in variants:
            run_cache = root / f"run-{variant.adapter}-{args.pairs - 1}"
            variant.cached, again = run(repo, args.range, run_cache, variant.adapter)
            variant.from_cache = sum(card.timing.cached for card in again)
        served = (
            {}
            if args.no_server
            else server_runs(
                repo,
                args.range,
                served_model,
                variants[0].adapter,
                root,
            )
        )
    print(f"range {args.range}: {len(variants[0].cards)} cards, {args.pairs} fresh runs each")
    for variant in variants:
        report(variant)
    if len(variants) == 2:
        ratios = [a / b for a, b in zip(variants[0].walls, variants[1].walls, strict=True)]
        print(
            f"\ntuned / base, seconds per card   {median(ratios):.2f}  "
            f"(per pair: {', '.join(f'{r:.2f}' for r in ratios)})"
        )
    for jobs, (seconds, count) in served.items():
        print(
            f"server, --jobs {jobs}                 {seconds / count:.2f} s per card  "
            f"(wall {seconds:.1f} s, {variants[0].per_card / (seconds / count):.2f}x the embedded "
            "run's speed)"
        )


def report(variant: Measured) -> None:
    cards = variant.cards
    model_seconds = sum(card.timing.seconds for card in cards)
    sent = sum(card.timing.prompt_tokens_sent for card in cards)
    evaluated = sum(card.timing.prompt_tokens_evaluated for card in cards)
    completion = sum(card.timing.completion_tokens for card in cards)
    fresh = median(variant.walls)
    print(f"\n{variant.label}")
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
        f"  wall / model time             {variant.walls[-1] / model_seconds:.2f}  "
        f"(model {model_seconds:.1f} s; target <= 1.10)"
    )
    print(
        f"  cached run                    {variant.cached:.2f} s = {variant.cached / fresh:.1%} "
        f"of a fresh one (target <= 5%), {variant.from_cache}/{len(cards)} from the cache"
    )


def server_runs(
    repo: Path, spec: str, model: Path, tuned: bool, scratch: Path
) -> dict[int, tuple[float, int]]:
    """Fresh runs (no cache) through llama_cpp.server on 127.0.0.1, with one and two jobs;
    `tuned`: `model` has prsum's adapter merged in."""
    results: dict[int, tuple[float, int]] = {}
    with (scratch / "server.log").open("w") as log:
        process, url = llama_server.start(model, log)
        try:
            for jobs in (1, 2):
                seconds, cards = run(
                    repo,
                    spec,
                    scratch / f"server-{jobs}",
                    False,
                    backend="openai",
                    base_url=url,
                    jobs=jobs,
                    cache="false",
                    # The served default model with prsum's adapter writes whole cards.
                    strategy="whole" if tuned else "fields",
                    # As the embedded tuned model: no chunk notes, which it was not trained on.
                    map_chunks="0" if tuned else None,
                )
                results[jobs] = (seconds, len(cards))
        finally:
            process.terminate()
            process.wait(timeout=30)
    return results


if __name__ == "__main__":
    main()
