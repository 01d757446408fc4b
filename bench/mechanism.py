"""Can the coder say how a change works, asked narrowly? An experiment (README, "Card quality,
measured", round r35): for each card of code (a verdict other than skip, a source file to start
with), a fresh request shows the title and that file's hunks and asks for one sentence on how
the change works; a zh card gets the English sentence translated by the same model (asked in
Chinese, the model copied the instructions back). The sentence, where the card's own checks
of language pass and it repeats no stretch of itself, goes after the summary's first
sentence; the cards are written out, under their own system name, for the claim-level review.

    python bench/mechanism.py CARDS.jsonl OUT.jsonl [--system coder-mechanism]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval import fixture

from prsum.cards.checks import in_language
from prsum.config import resolve_settings
from prsum.filekinds import file_kind
from prsum.llm import GREEDY
from prsum.pipeline import Summarizer

SYSTEM = (
    "You are a senior engineer who explains code changes precisely. You state only what the "
    "diff shows."
)
QUESTION = (
    "Pull request: {title}\n\nDiff of `{path}` (lines starting with - were removed, lines "
    "starting with + were added):\n<diff>\n{patch}\n</diff>\n\nIn one sentence of at most 40 "
    "words, explain how the change works: what the changed code now does differently from "
    "before (the condition, value, call or order that changed), naming the function and the "
    "code in backticks exactly as written in the diff. Do not repeat the title. Answer with "
    "the sentence only."
)
TRANSLATOR = (
    "You translate technical English into Chinese. Keep everything in backticks exactly as written."
)
TRANSLATE = "Translate this sentence into Chinese. Answer with the translation only.\n\n{sentence}"
_PATCH_CHARS = 6000  # of the file's hunks shown: about 1,500 tokens
_LOOP = re.compile(r"(.{8,}?)\1\1")  # a stretch said three times over: garbled


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cards", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--system", default="coder-mechanism")
    args = parser.parse_args()
    cards = [json.loads(line) for line in args.cards.read_text().splitlines()]
    english: dict[str, str] = {}  # by sha: one English sentence a PR, for both languages
    with tempfile.TemporaryDirectory() as scratch, args.out.open("w") as out:
        summarizers: dict[str, Summarizer] = {}
        for card in cards:
            sentence = _sentence(card, english, summarizers, Path(scratch))
            if sentence:
                card = {**card, "system": args.system, "summary": _inserted(card, sentence)}
            out.write(json.dumps(card, ensure_ascii=False) + "\n")


def _sentence(
    card: dict[str, Any], english: dict[str, str], summarizers: dict[str, Summarizer], scratch: Path
) -> str:
    places = [f["path"] for f in card.get("focus") or [] if file_kind(f["path"]) == "source"]
    if card["verdict"] == "skip" or not places:
        return ""
    if card["repo"] not in summarizers:
        settings = {"repo": str(fixture(card["repo"], scratch)), "model": "coder", "cache": "false"}
        summarizers[card["repo"]] = Summarizer(resolve_settings(settings))
    summarizer = summarizers[card["repo"]]
    backend: Any = summarizer.backend
    if card["sha"] not in english:
        read = summarizer.read(summarizer.history.find_pr(card["sha"]))
        patch = next(d.patch for d in read.diffs if d.path == places[0])[:_PATCH_CHARS]
        question = QUESTION.format(title=read.pr.title, path=places[0], patch=patch)
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
        answer = backend.chat(messages, max_tokens=120, sampling=GREEDY)
        english[card["sha"]] = " ".join(answer.text.split())
        print(card["repo"], card["sha"][:8], english[card["sha"]], flush=True)
    sentence = english[card["sha"]]
    if card["lang"] == "zh":
        messages = [
            {"role": "system", "content": TRANSLATOR},
            {"role": "user", "content": TRANSLATE.format(sentence=sentence)},
        ]
        sentence = " ".join(backend.chat(messages, max_tokens=160, sampling=GREEDY).text.split())
    if _LOOP.search(sentence) or not in_language(sentence, card["lang"]):
        return ""
    return (
        sentence
        if sentence.endswith((".", "。"))
        else sentence + ("。" if card["lang"] == "zh" else ".")
    )


def _inserted(card: dict[str, Any], sentence: str) -> str:
    """The summary with `sentence` after its first (the verdict's reason)."""
    summary: str = card["summary"]
    if card["lang"] == "zh":
        cut = summary.find("。") + 1
        return summary[:cut] + sentence + summary[cut:]
    cut = summary.find(". ") + 1
    return f"{summary[:cut]} {sentence}{summary[cut:]}" if cut else f"{summary} {sentence}"


if __name__ == "__main__":
    main()
