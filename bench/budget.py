"""Does packing put the right code in front of the model? Entity recall of prompts at a budget.

For every PR in ../shared/eval/references.json, builds the prompt a card starts from at
`--ctx` (2048 by default) three ways and counts how many of the reference's `entities` (the
files and code names a good card points to) occur in it:

- prsum, diff view: noise out, tiers by salience, water-filled, hunks with function context;
- prsum, digest view: each file's changed definitions (what the base default model is shown);
- plain truncation: the same frame and title, then the raw diff cut after as many tokens as fit.

Token counts come from the model's own tokenizer (a vocabulary-only load: no weights).

    python bench/budget.py [--ctx 2048] [--model PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SHARED, fixture_clone

from prsum import prompts
from prsum.budget import clip_to_budget
from prsum.cards import CardWriter
from prsum.cards.fields import OUTPUT_RESERVE
from prsum.facts import compute_facts
from prsum.history import History
from prsum.llm.llama import LlamaBackend
from prsum.llm.models import embedded_default
from prsum.types import FileDiff, PullRequest


def truncation_prompt(
    writer: CardWriter, pr: PullRequest, diffs: tuple[FileDiff, ...], raw: str, context: int
) -> str:
    facts = compute_facts(pr, diffs)
    frame = writer.strategy.frame
    empty = frame + prompts.pr_block(pr, facts, [], "", writer.lang)
    budget = context - OUTPUT_RESERVE - writer.backend.count_tokens(empty)
    return frame + prompts.pr_block(
        pr, facts, [], clip_to_budget(raw, budget, writer.backend), writer.lang
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ctx", type=int, default=2048)
    parser.add_argument(
        "--model", type=Path, help="a GGUF whose tokenizer to use (default: the embedded model)"
    )
    args = parser.parse_args()
    references = json.loads((SHARED / "eval" / "references.json").read_text(encoding="utf-8"))
    model = args.model or embedded_default(Path(tempfile.gettempdir()) / "prsum-bench-cache")
    backend = LlamaBackend(model, ctx_cap=args.ctx, threads=1, sha256="-")
    writers = {style: CardWriter(backend, "en", style) for style in ("diff", "digest")}
    totals = {"diff": 0, "digest": 0, "truncation": 0}
    entity_count = 0
    print(f"{'PR':<14} {'entities':>8} {'diff view':>10} {'digest view':>12} {'truncation':>11}")
    with tempfile.TemporaryDirectory() as scratch:
        for reference in references["cards"]:
            entities = reference["entities"]
            if not entities:
                continue
            history = History(fixture_clone(reference["repo"], Path(scratch)))
            pr = history.find_pr(reference["sha"])
            diffs = history.diff(pr)
            facts = compute_facts(pr, diffs)
            raw = "\n".join(diff.patch for diff in diffs)
            found = {
                style: writer.build_prompt(pr, facts, diffs) for style, writer in writers.items()
            }
            found["truncation"] = truncation_prompt(
                writers["diff"], pr, diffs, raw, backend.context_size
            )
            counts = {
                style: sum(1 for entity in entities if entity in prompt)
                for style, prompt in found.items()
            }
            for style, count in counts.items():
                totals[style] += count
            entity_count += len(entities)
            label = f"{reference['repo']} {pr.label}"
            print(
                f"{label:<14} {len(entities):>8} {counts['diff']:>10} {counts['digest']:>12} {counts['truncation']:>11}"
            )
    print(
        f"{'share':<14} {entity_count:>8} {totals['diff'] / entity_count:>10.0%} "
        f"{totals['digest'] / entity_count:>12.0%} {totals['truncation'] / entity_count:>11.0%}"
        f"   (entities reaching the prompt at --ctx {args.ctx})"
    )


if __name__ == "__main__":
    main()
