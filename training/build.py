"""Build the training inputs: for each corpus card, the prompt prsum itself sends for the
`whole` strategy and the card as the answer, tokenized with the embedded model's own tokenizer.

    python -m training.build --clones DIR [--model coder|small] [-o training/data/examples.npz]

For each card the PR is read from its clone exactly as a run reads it (first-parent diff,
redaction, facts), packed as a run with that model packs it (its profile: diff view, --ctx
4096, no chunk notes; for `coder` the instructions in a system turn and the PR in a user turn),
and sent through the chat format the embedded backend uses. The answer is the card's JSON in
the strategy's layout, less what names code the prompt does not show (`visible_card`) or what
the card's schema does not let the model write (`schema_card`), ended by the format's
end-of-turn. Everything is derived from local clones into a git-ignored folder: no fetched
content is committed.

Repositories are split for validation by name, not by PR (about 10%), and any PR of a
repository prsum is measured on is refused.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import numpy as np

from prsum.cards.checks import NUMBER, pr_part, sentences
from prsum.cards.whole import WHOLE_TOKENS, card_schema, messages_for
from prsum.config import default_threads, resolve_settings
from prsum.errors import PrsumError
from prsum.grounding import Evidence, cited_names
from prsum.history import History
from prsum.i18n import PHRASES
from prsum.llm.llama import LlamaBackend
from prsum.llm.models import embedded_path
from prsum.pipeline import Summarizer
from prsum.profiles import EMBEDDED
from prsum.types import Language
from training.check import CORPUS_DIR, Report, find_clone, read_corpus
from training.sources import is_reference_repository

DATA_DIR = Path(__file__).parent / "data"
CONTEXT = 4096
# About a tenth of the repositories, one per language family, chosen once by name: their cards
# are never trained on, so validation loss says how the model does on unseen histories.
VALIDATION_REPOSITORIES = frozenset({"encode/httpx", "sharkdp/bat", "spf13/viper", "vercel/swr"})
CARD_KEYS = ("headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups")


def visible_card(card: dict[str, Any], lang: Language, seen: Evidence) -> dict[str, Any] | None:
    """The card less what names code or states a number the prompt does not show, or None
    when too little is left.

    The corpus was written from whole diffs; the prompt holds what fits in the context. A
    target naming what the model cannot see teaches it to invent names, and one stating a
    count or a version it cannot see teaches it to invent numbers (run 14's adapter wrote both:
    training/README.md), so such a summary sentence, focus symbol or item goes; a card whose
    headline or every summary sentence does is not trained on.
    """

    def shown(text: str) -> bool:
        return all(seen.knows(name) for name in cited_names(text)) and all(
            re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", seen.text)
            for number in NUMBER.findall(text)
        )

    if not shown(card["headline"]):
        return None
    kept = [part for part in sentences(card["summary"], lang) if shown(part)]
    if not kept:
        return None
    focus = [
        {
            **item,
            "symbol": item["symbol"] if item["symbol"] and seen.knows(item["symbol"]) else None,
        }
        for item in card["focus"]
        if shown(item["why"])
    ]
    return {
        **card,
        "summary": PHRASES[lang].sentence_joiner.join(kept),
        "focus": focus,
        "lessons": [item for item in card["lessons"] if shown(item)],
        "follow_ups": [item for item in card["follow_ups"] if shown(item)],
    }


def schema_card(card: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The card as the schema lets the model write it (`prsum.cards.whole.card_schema`): a
    focus place only in a file the schema offers, its symbol only one the schema offers there
    (else null), and no more list items than it allows."""
    properties = schema["properties"]
    offered = {
        place["properties"]["path"]["const"]: place["properties"]["symbol"]["enum"]
        for place in properties["focus"].get("items", {}).get("anyOf", [])
    }
    focus = [
        {**item, "symbol": item["symbol"] if item["symbol"] in offered[item["path"]] else None}
        for item in card["focus"]
        if item["path"] in offered
    ][: properties["focus"].get("maxItems", 0)]
    limit = properties["lessons"]["maxItems"]
    return {
        **card,
        "focus": focus,
        "lessons": card["lessons"][:limit],
        "follow_ups": card["follow_ups"][:limit],
    }


def answer_text(card: dict[str, Any]) -> str:
    """The card in the whole strategy's output layout: one JSON object, keys in order."""
    return json.dumps({key: card[key] for key in CARD_KEYS}, ensure_ascii=False)


def usable_clone(source: Path, repo: str) -> Path:
    """A bare clone git and gitpython both read: a snapshot without a `config` file is not
    recognised as bare, so a shared bare clone of it is made once under training/data."""
    target = DATA_DIR / "clones" / f"{repo.replace('/', '+')}.git"
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "clone", "-q", "--bare", "--shared", str(source), str(target)], check=True
        )
    return target


def build(clones: Path, output: Path, model_name: str) -> dict[str, Any]:
    report = Report()
    read_corpus(sorted(CORPUS_DIR.glob("*.jsonl")), report)
    cache_dir = resolve_settings({}, env={}).cache_dir
    model = embedded_path(EMBEDDED[model_name], cache_dir, default_threads())
    tokenizer = LlamaBackend(model, ctx_cap=CONTEXT, threads=default_threads(), sha256="")
    tokens: list[np.ndarray] = []
    meta: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    summarizers: dict[str, Summarizer] = {}
    for record in report.records:
        repo = str(record["repo"])
        if is_reference_repository(repo):
            raise SystemExit(f"refused: {repo} is a repository prsum is measured on")
        source = find_clone(clones, repo)
        if source is None:
            skipped["no clone"] = skipped.get("no clone", 0) + 1
            continue
        clone = usable_clone(source, repo)
        for lang in ("zh", "en"):
            key = f"{clone}:{lang}"
            if key not in summarizers:
                settings = resolve_settings(
                    {
                        "repo": str(clone),
                        "lang": lang,
                        "ctx": CONTEXT,
                        "prompt_style": "diff",
                        "map_chunks": 0,
                        "strategy": "whole",
                        "cache": False,
                    },
                    env={},
                )
                summarizers[key] = Summarizer(settings, backend=tokenizer, style="diff")
            summarizer = summarizers[key]
            try:
                pr = History(clone).find_pr(str(record["sha"]))
                read = summarizer.read(pr)
                card_input = summarizer.writer.card_input(
                    read.pr, read.facts, read.diffs, read.commits
                )
                prompt = card_input.packed.prompt
            except PrsumError as error:
                skipped[type(error).__name__] = skipped.get(type(error).__name__, 0) + 1
                continue
            card = cast(dict[str, Any], record[lang])  # checked by training.check
            # The frame's own words do not count as shown.
            shown = pr_part(prompt, summarizer.writer.strategy.frame)
            target = visible_card(card, lang, Evidence(shown, frozenset(), ()))
            if target is None:
                skipped["names unseen code"] = skipped.get("names unseen code", 0) + 1
                continue
            if summarizer.profile.schema:
                target = schema_card(target, card_schema(card_input))
            frame = summarizer.writer.strategy.frame
            ids, stop = tokenizer.chat_tokens(messages_for(prompt, frame, summarizer.profile))
            # The answer ends as the model's turn ends: the format's end-of-turn token.
            answer = tokenizer.continuation(answer_text(target))
            answer += tokenizer.markers(stop[0])
            if len(answer) > WHOLE_TOKENS or len(ids) + len(answer) > CONTEXT:
                skipped["too long"] = skipped.get("too long", 0) + 1
                continue
            tokens.append(np.array(ids + answer, dtype=np.int32))
            meta.append(
                {
                    "repo": repo,
                    "sha": record["sha"],
                    "lang": lang,
                    "prompt_tokens": len(ids),
                    "split": "validation" if repo in VALIDATION_REPOSITORIES else "train",
                }
            )
        print(f"\r{len(meta)} examples, skipped {skipped}", end="", file=sys.stderr)
    print(file=sys.stderr)
    output.parent.mkdir(parents=True, exist_ok=True)
    lengths = np.array([len(t) for t in tokens], dtype=np.int32)
    np.savez_compressed(
        output,
        tokens=np.concatenate(tokens),
        lengths=lengths,
        prompt_tokens=np.array([m["prompt_tokens"] for m in meta], dtype=np.int32),
        validation=np.array([m["split"] == "validation" for m in meta]),
        zh=np.array([m["lang"] == "zh" for m in meta]),
    )
    digest = hashlib.sha256(output.read_bytes()).hexdigest()
    summary = {
        "examples": len(meta),
        "train": sum(m["split"] == "train" for m in meta),
        "validation": sum(m["split"] == "validation" for m in meta),
        "tokens": int(lengths.sum()),
        "skipped": skipped,
        "sha256": digest,
    }
    (output.with_suffix(".json")).write_text(
        json.dumps({"summary": summary, "examples": meta}, indent=1), encoding="utf-8"
    )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training.build", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--clones", type=Path, required=True, help="folder of the corpus's clones")
    parser.add_argument("--model", choices=sorted(EMBEDDED), default="coder")
    parser.add_argument("-o", "--output", type=Path, default=DATA_DIR / "examples.npz")
    args = parser.parse_args()
    print(json.dumps(build(args.clones, args.output, args.model), indent=1))


if __name__ == "__main__":
    main()
