"""Where does a run's time go? Cards for a release range, twice: fresh, then from the cache.

Prints seconds per card; prompt tokens sent against those llama.cpp actually evaluated (the
rest came from its KV cache: the shared frame and the card so far); the ratio of prsum's wall
time to the model's own time (what is not model time is prsum's overhead); and the second,
cached run's wall time as a share of the first. Then the same range through the server
backend: `python -m llama_cpp.server` on 127.0.0.1 with the same model, with --jobs 1 and 2.

    python bench/speed.py [--repo PATH --range A..B] [--model PATH] [--no-server]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import fixture_clone

from prsum.config import resolve_settings
from prsum.llm.models import resolve_model
from prsum.pipeline import Summarizer
from prsum.types import Card, RangeQuery
from tests import llama_server


def run(
    repo: Path, spec: str, model: Path | None, cache: Path, **server: object
) -> tuple[float, list[Card]]:
    flags = {"repo": str(repo), "model": str(model) if model else None, **server}
    settings = resolve_settings(
        {k: v for k, v in flags.items() if v}, env={"PRSUM_CACHE_DIR": str(cache)}
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
    parser.add_argument("--model", type=Path)
    parser.add_argument("--no-server", action="store_true", help="skip the server backend rows")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = args.repo or fixture_clone("typer", Path(scratch))
        cache = Path(scratch) / "cache"
        # The default model is assembled and optimized once per machine: not part of a run.
        settings = resolve_settings(
            {"model": str(args.model)} if args.model else {}, env={"PRSUM_CACHE_DIR": str(cache)}
        )
        model = resolve_model(settings).path
        first, cards = run(repo, args.range, model, cache)
        second, again = run(repo, args.range, model, cache)
        served = {} if args.no_server else server_runs(repo, args.range, model, Path(scratch))
    model_seconds = sum(card.timing.seconds for card in cards)
    sent = sum(card.timing.prompt_tokens_sent for card in cards)
    evaluated = sum(card.timing.prompt_tokens_evaluated for card in cards)
    completion = sum(card.timing.completion_tokens for card in cards)
    print(f"range {args.range}: {len(cards)} cards")
    print(f"seconds per card              {first / len(cards):.2f}  (wall {first:.1f} s)")
    print(f"prompt tokens sent            {sent}  (over all model calls)")
    print(
        f"prompt tokens evaluated       {evaluated}  ({evaluated / sent:.0%} of sent: the rest reused from the KV cache)"
    )
    print(f"completion tokens             {completion}")
    print(
        f"wall / model time             {first / model_seconds:.2f}  (model {model_seconds:.1f} s; target <= 1.10)"
    )
    print(
        f"cached run                    {second:.2f} s = {second / first:.1%} of the first (target <= 5%), {sum(c.timing.cached for c in again)}/{len(again)} from the cache"
    )

    for jobs, (seconds, count) in served.items():
        print(
            f"server, --jobs {jobs}               {seconds / count:.2f} s per card  (wall {seconds:.1f} s, {first / seconds:.2f}x the embedded run's speed)"
        )


def server_runs(repo: Path, spec: str, model: Path, scratch: Path) -> dict[int, tuple[float, int]]:
    """Fresh runs (no cache) through llama_cpp.server on 127.0.0.1, with one and two jobs."""
    results: dict[int, tuple[float, int]] = {}
    with (scratch / "server.log").open("w") as log:
        process, url = llama_server.start(model, log)
        try:
            for jobs in (1, 2):
                seconds, cards = run(
                    repo,
                    spec,
                    model,
                    scratch / f"server-{jobs}",
                    backend="openai",
                    base_url=url,
                    jobs=jobs,
                )
                results[jobs] = (seconds, len(cards))
        finally:
            process.terminate()
            process.wait(timeout=30)
    return results


if __name__ == "__main__":
    main()
