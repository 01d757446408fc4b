"""Can the model catch its own false sentences? An experiment for claim checks: for each judged
card of an instruction model (bench/judge), the card's own conversation (its system and user
turns, the card as the model's answer) is followed by one question per sentence ("is this
sentence true of the diff? yes or no"), and the answer's first token's log-probabilities give
P(no). Reported: for thresholds on P(no), the sentences a check would drop, its precision and
recall against the review's labels (as bench/checks.py places claims in sentences), and the
false-claim share after the drop; the seconds each question costs (the conversation so far is
reused from the KV cache, only the question is evaluated).

`--narrow`: the question the claim-checks issue proposes instead: a fresh request that shows
only the hunks the sentence is about (the files it names, or whose lines hold the code it
quotes; else the PR's whole patch, cut to fit) and asks whether they show the statement true.
No card is in it, so the model does not judge its own answer. Also reported: the area under
the ROC curve of P(no) against the labels (0.5: no signal).

    python bench/verify.py CARDS.jsonl [--model coder] [--adapter on|off] [--half dev] [--narrow]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "judge"))

import judge
from checks import TEXT_FIELDS, card_sentences, place
from eval import fixture
from review import card_hash

from prsum.cards.whole import messages_for
from prsum.config import resolve_settings
from prsum.pipeline import Summarizer

QUESTION = {
    "en": (
        "Check one sentence of your card against the pull request's diff and message above: "
        "{sentence}\nIs everything it says true of this change (the names, the values, what "
        "was added or removed, what happens now)? Answer yes or no."
    ),
    "zh": (
        "对照上面合并请求的差异和说明，检查你卡片里的一句话：{sentence}\n"
        "它说的每一点（名称、值、新增还是删除、现在的行为）都符合这次改动吗？只回答 yes 或 no。"
    ),
}
NARROW_SYSTEM = (
    "You check statements about a code change against its diff. Answer only yes or no: yes "
    "if the diff shows the statement is true (the names, the values, what was added or removed, "
    "the direction of the change), no if it is false or the diff does not show it."
)
NARROW_QUESTION = (
    "{hunks}\n\nStatement: {sentence}\n\nDoes the diff show that this statement is true?"
)
_NARROW_CHARS = 6000  # of the hunks shown: about 1,500 tokens
_CODE = re.compile(r"`([^`]+)`")
CARD_KEYS = ("headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cards", type=Path)
    parser.add_argument("--model", default="coder")
    parser.add_argument("--adapter", choices=["on", "off"], default="off")
    parser.add_argument("--half", choices=["dev", "test"], default="dev")
    parser.add_argument("--narrow", action="store_true", help="a fresh request, hunks only")
    args = parser.parse_args()
    split = judge.load_split()
    cards = [
        c
        for c in judge.read_cards([args.cards])
        if c["sha"] in judge.in_half(split, args.half, c["lang"])
        and judge.STORE.first(card_hash(c)) is not None
    ]
    rows: list[tuple[float, bool, list[str], str]] = []  # P(no), false?, labels, system
    seconds: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        summarizers: dict[tuple[str, str], Summarizer] = {}
        for card in cards:
            key = (card["repo"], card["lang"])
            if key not in summarizers:
                summarizers[key] = Summarizer(
                    resolve_settings(
                        {
                            "repo": str(fixture(card["repo"], Path(scratch))),
                            "lang": card["lang"],
                            "model": args.model,
                            "adapter": "true" if args.adapter == "on" else "false",
                            "cache": "false",
                        }
                    )
                )
            summarizer = summarizers[key]
            backend: Any = summarizer.backend
            read = summarizer.read(summarizer.history.find_pr(card["sha"]))
            written = summarizer.writer.card_input(read.pr, read.facts, read.diffs, read.commits)
            frame = summarizer.writer.strategy.frame
            conversation = [
                *messages_for(written.packed.prompt, frame, summarizer.profile),
                {
                    "role": "assistant",
                    "content": json.dumps({k: card[k] for k in CARD_KEYS}, ensure_ascii=False),
                },
            ]
            judgment = judge.STORE.first(card_hash(card))
            assert judgment is not None
            parts = card_sentences(card)
            labels: dict[int, list[str]] = defaultdict(list)
            for claim in judgment.claims:
                if claim.field in TEXT_FIELDS and (at := place(claim.text, parts)) is not None:
                    labels[at].append(claim.label)
            yes = [backend.continuation(word)[0] for word in ("yes", "Yes")]
            no = [backend.continuation(word)[0] for word in ("no", "No")]
            for index, (_, sentence) in enumerate(parts):
                if args.narrow:
                    question = NARROW_QUESTION.format(
                        hunks=relevant_hunks(sentence, read.diffs), sentence=sentence
                    )
                    messages = [
                        {"role": "system", "content": NARROW_SYSTEM},
                        {"role": "user", "content": question},
                    ]
                else:
                    question = QUESTION[card["lang"]].format(sentence=sentence)
                    messages = [*conversation, {"role": "user", "content": question}]
                tokens, _ = backend.chat_tokens(messages)
                started = time.perf_counter()
                backend._evaluate_prompt(tokens)
                logprobs = backend._last_logprobs()
                seconds.append(time.perf_counter() - started)
                p_yes = sum(math.exp(logprobs[t]) for t in yes)
                p_no = sum(math.exp(logprobs[t]) for t in no)
                rows.append(
                    (
                        p_no / max(p_yes + p_no, 1e-9),
                        "F" in labels[index],
                        labels[index],
                        card["sha"],
                    )
                )
    false_total = sum(1 for row in rows if row[1])
    false_scores = [row[0] for row in rows if row[1]]
    true_scores = [row[0] for row in rows if not row[1] and row[2]]
    pairs = [(f > t) + 0.5 * (f == t) for f in false_scores for t in true_scores]
    print(
        f"AUC of P(no), false against judged-true sentences: {sum(pairs) / max(1, len(pairs)):.2f}"
    )
    claims = Counter(label for row in rows for label in row[2])
    print(
        f"{len(rows)} sentences, {false_total} false; {sum(seconds) / len(seconds):.2f} s a question"
    )
    print(
        f"{'P(no) >':>8} {'dropped':>8} {'precision':>10} {'recall':>7} {'false share after':>18}"
    )
    for threshold in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        dropped = [row for row in rows if row[0] > threshold]
        caught = sum(1 for row in dropped if row[1])
        left = claims.copy()
        for row in dropped:
            left.subtract(row[2])
        total_left = sum(left.values())
        print(
            f"{threshold:>8.1f} {len(dropped):>8} {caught / max(1, len(dropped)):>10.0%} "
            f"{caught / max(1, false_total):>7.0%} "
            f"{left['F'] / max(1, total_left):>17.1%} (of the sentences' claims; before "
            f"{claims['F'] / max(1, sum(claims.values())):.1%})"
        )


def relevant_hunks(sentence: str, diffs: Any) -> str:
    """The patches of the files a sentence names or whose lines hold the code it quotes; the
    whole patch where it points at none; cut to `_NARROW_CHARS`."""
    quoted = [code for code in _CODE.findall(sentence) if len(code) >= 3]
    chosen = [
        diff.patch
        for diff in diffs
        if diff.path in sentence
        or diff.path.rsplit("/", 1)[-1] in sentence
        or any(code in diff.patch for code in quoted)
    ]
    return "\n".join(chosen or [diff.patch for diff in diffs])[:_NARROW_CHARS]


if __name__ == "__main__":
    main()
