"""The `whole` and `brief` strategies: the model answers one chat request with the card as JSON.

`whole`: the model writes the whole card. Our code parses the answer and checks every field
for truth (prsum.cards.checks, `AnswerChecker.untrue`: names and paths the PR contains, numbers
it states, no change of something into itself, the card's language) and for its shape (an
allowed verdict, minutes that fit it, focus paths among the PR's files). A summary sentence that
fails is left out, the rest stays; a field that fails is replaced by the one prsum builds from
facts. The card says which fields are the model's (`by_model`) and records every drop
(`dropped`).

`brief`: the same request, read only up to the summary: the model's headline, verdict and
reading time (token for token what `whole` writes, decoding being greedy), every sentence
after them built from facts. The model's prose is what reviewers found false: 21% of the
claims of whole cards on the review's dev half against 9% of its headlines and none of the
facts-built sentences (README, "Card quality, measured"), and no check of ours tells its false
sentences from its true ones (bench/claims.py, bench/verify.py). So the default card prints
only what the model says reliably; `--strategy whole` asks for the prose.

Where the profile says so the answer is held to the card's JSON schema as it is written
(`card_schema`: a grammar in llama.cpp, `response_format` on a server). Nothing else steers
the model's tokens: the small model's token guard, repeat breaker and shaping checks were
removed when taking them out did not raise its judged false-claim share (65% with them, 62%
without; README, "Card quality, measured").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from prsum import prompts
from prsum.budget import salience_order
from prsum.cards.assembly import CardInput, facts_body, facts_headline, facts_summary
from prsum.cards.checks import NUMBER, AnswerChecker, clean_field, pr_part, sentences
from prsum.filekinds import file_kind
from prsum.i18n import PHRASES
from prsum.llm import GREEDY, Backend, Message
from prsum.profiles import Profile, StrategyName
from prsum.rubric import allowed_verdicts, prior_verdict, reading_minutes
from prsum.types import CardBody, Facts, Focus, Language, Verdict

# Room for a whole card as JSON in either language, and for the chat template around it.
WHOLE_TOKENS = 768
_TEMPLATE_MARGIN = 32
MINUTES: dict[Verdict, tuple[int, int]] = {"skip": (0, 0), "skim": (1, 15), "deep": (5, 60)}
CARD_FIELDS = ("headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups")
_MAX_ITEMS = 3
_MAX_FOCUS = 4
_MAX_SENTENCES = 5
_MAX_SCHEMA_PLACES = 24  # files a focus place may name in the schema: the most salient shown
_PLACE_KINDS = frozenset({"source", "test", "config", "ci"})  # where code is read
_FINISHED = re.compile(r"[。！？.!?][”’」』）)\"']*$")
_STRING_FIELD = r'"{key}"\s*:\s*"((?:[^"\\\n]|\\.)*)(")?'


def parse_card(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's answer (also inside a code fence), or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:  # a raw line break inside a string is forgiven (strict=False)
        answer = json.loads(text[start : end + 1], strict=False)
    except (json.JSONDecodeError, RecursionError):
        return None
    return answer if isinstance(answer, dict) else None


def salvaged(text: str, lang: Language) -> dict[str, Any]:
    """What an unfinished answer completed (a model that loops runs into the token limit
    mid-card): the headline and verdict it closed, the minutes, and the summary's finished
    sentences."""
    answer: dict[str, Any] = {}
    for key in ("headline", "verdict", "summary"):
        match = re.search(_STRING_FIELD.format(key=key), text)
        if match is None or (match.group(2) is None and key != "summary"):
            continue
        try:
            value = json.loads(f'"{match.group(1)}"')
        except json.JSONDecodeError:  # cut inside an escape
            value = match.group(1)
        if match.group(2) is None:  # the summary, cut off: keep its finished sentences
            finished = sentences(value, lang)
            if finished and not _FINISHED.search(finished[-1]):
                finished.pop()
            value = PHRASES[lang].sentence_joiner.join(finished)
        answer[key] = value
    if minutes := re.search(r'"minutes"\s*:\s*(\d+)', text):
        answer["minutes"] = int(minutes.group(1))
    return answer


def messages_for(prompt: str, frame: str, profile: Profile) -> list[Message]:
    """The chat request of a packed prompt: the instructions in a system turn where the profile
    says so (the same for every PR: the KV cache keeps them), else one user turn (some
    templates, Gemma's among them, have no system turn)."""
    if profile.system_turn:
        return [
            {"role": "system", "content": frame.rstrip()},
            {"role": "user", "content": pr_part(prompt, frame)},
        ]
    return [{"role": "user", "content": prompt}]


def card_schema(card: CardInput) -> dict[str, Any]:
    """The card's JSON schema for one PR: the verdict among those the rubric allows, and each
    focus place a file of code, tests or configuration the model was shown, with a definition
    facts found changed there (or none): a grammar holds the answer to it as it is written."""
    shown = set(card.packed.coverage_whole) | set(card.packed.coverage_clipped)
    places = [
        {
            "type": "object",
            "properties": {
                "path": {"const": change.path},
                "symbol": {"enum": [*card.packed.digests[change.path].names, None]},
                "why": {"type": "string"},
            },
            "required": ["path", "symbol", "why"],
        }
        for change in salience_order(card.pr.files)
        if change.path in shown and file_kind(change.path) in _PLACE_KINDS
    ][:_MAX_SCHEMA_PLACES]
    items: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "maxItems": _MAX_ITEMS}
    return {
        "type": "object",
        "properties": {
            "headline": {"type": "string"},
            "verdict": {"enum": list(allowed_verdicts(card.facts))},
            "minutes": {"type": "integer"},
            "summary": {"type": "string"},
            # No place to offer: an empty list (an array schema without items allows any).
            "focus": {"type": "array", "maxItems": _MAX_FOCUS, "items": {"anyOf": places}}
            if places
            else {"const": []},
            "lessons": items,
            "follow_ups": items,
        },
        "required": list(CARD_FIELDS),
    }


class WholeStrategy:
    """One request for the whole card; each field the model's where it passes, else ours."""

    name: StrategyName = "whole"
    reserve = WHOLE_TOKENS + _TEMPLATE_MARGIN
    sampling = GREEDY  # a card is the same on every run
    # The card's fields taken from the model's answer, and where its answer is read no further:
    # all of them, nowhere.
    model_fields: tuple[str, ...] = CARD_FIELDS
    stop: tuple[str, ...] = ()

    def __init__(self, backend: Backend, lang: Language, profile: Profile) -> None:
        self.backend = backend
        self.lang = lang
        self.profile = profile
        self.frame = prompts.frame(lang, profile.prompt)

    def context_lines(self, facts: Facts) -> list[str]:
        """The verdicts the rubric leaves open: the model chooses among them."""
        return [prompts.allowed_verdicts_line(allowed_verdicts(facts), self.lang)]

    def write(self, card: CardInput) -> tuple[CardBody, int]:
        checker = AnswerChecker.for_card(
            self.lang, self.frame, card.packed.prompt, card.pr, card.evidence, card.log
        )
        # Numbers the prompt shows (line counts, versions in the diff) may be stated.
        checker.stated_numbers |= set(NUMBER.findall(checker.pr_text))
        schema = self.profile.schema and self.backend.capabilities.json_schema
        completion = self.backend.chat(
            messages_for(card.packed.prompt, self.frame, self.profile),
            max_tokens=WHOLE_TOKENS,
            sampling=self.sampling,
            json_schema=card_schema(card) if schema else None,
            stop=self.stop,
        )
        card.usage.add(completion)
        answer = parse_card(completion.text)
        if answer is None:
            answer = salvaged(completion.text, self.lang)
            # An answer cut where it was meant to be (brief cards) has all it was asked for.
            if not set(self.model_fields) <= set(answer):
                card.log.record("answer.salvaged", "answer", completion.text[-80:])
        # Only the fields asked for, whatever came back (a server may ignore the stop string).
        answer = {key: value for key, value in answer.items() if key in self.model_fields}
        return self._checked(card, answer, checker), completion.prompt_tokens

    def _checked(
        self, card: CardInput, answer: Mapping[str, Any], checker: AnswerChecker
    ) -> CardBody:
        by_model: list[str] = []
        facts = card.facts

        headline = self._text(answer.get("headline"), "headline", checker)
        if headline:
            by_model.append("headline")
        verdict: Verdict = prior_verdict(facts)
        if answer.get("verdict") in allowed_verdicts(facts):
            verdict = answer["verdict"]
            by_model.append("verdict")
        else:
            card.log.record("verdict.not-allowed", "verdict", str(answer.get("verdict")))
        low, high = MINUTES[verdict]
        minutes = answer.get("minutes")
        if isinstance(minutes, int) and not isinstance(minutes, bool) and low <= minutes <= high:
            by_model.append("minutes")
        else:
            card.log.record("minutes.out-of-range", "minutes", str(minutes))
            minutes = reading_minutes(verdict, facts)
        focus = self._focus(answer.get("focus"), card, checker)
        if focus:
            by_model.append("focus")
        summary = self._summary(answer.get("summary"), checker)
        if summary:
            by_model.append("summary")
        lessons = self._items(answer.get("lessons"), "lessons", checker)
        if lessons:
            by_model.append("lessons")
        follow_ups = self._items(answer.get("follow_ups"), "follow_ups", checker)
        if follow_ups:
            by_model.append("follow_ups")
        ours = facts_body(card, verdict, headline or facts_headline(card))
        return CardBody(
            headline=headline or ours.headline,
            verdict=verdict,
            minutes=minutes,
            summary=summary or facts_summary(card, verdict, focus or ours.focus),
            focus=focus if "focus" in by_model else ours.focus,
            lessons=lessons,
            follow_ups=follow_ups or ours.follow_ups,
            by_model=tuple(by_model),
        )

    def _text(self, value: Any, field: str, checker: AnswerChecker) -> str:
        """A one-line field as the model wrote it, if it is true of the PR (`untrue`)."""
        if not isinstance(value, str):
            return ""
        text = clean_field(value)
        return text if text and not checker.refused_as_untrue(text, field) else ""

    def _summary(self, value: Any, checker: AnswerChecker) -> str:
        if not isinstance(value, str):
            return ""
        # A stray code fence would pair its backticks with the code spans after it.
        text = " ".join(re.sub(r"```\w*", "", value).split())
        # The renderer prints the verdict phrase: a paragraph that opens with one says it twice.
        for phrase in PHRASES[self.lang].verdicts.values():
            if text.startswith(phrase):
                text = text[len(phrase) :].lstrip("：:，,。. ")
        # A sentence the PR does not back (an invented name, a number it does not state, a
        # change into itself) is left out, not the paragraph: the others may still be right.
        kept: list[str] = []
        for part in sentences(text, self.lang):
            if unsupported := checker.unsupported(part):
                checker.log.record("summary." + "-".join(unsupported.split()[:3]), "summary", part)
            else:
                kept.append(part)
        for part in kept[_MAX_SENTENCES:]:
            checker.log.record("summary.over-five", "summary", part)
        text = PHRASES[self.lang].sentence_joiner.join(kept[:_MAX_SENTENCES])
        if not kept or checker.refused_as_untrue(text, "summary"):
            return ""
        return text

    def _items(self, value: Any, field: str, checker: AnswerChecker) -> tuple[str, ...]:
        if not isinstance(value, list):
            return ()
        items = (self._text(item, field, checker) for item in value[:_MAX_ITEMS])
        return tuple(item for item in items if item)

    def _focus(self, value: Any, card: CardInput, checker: AnswerChecker) -> tuple[Focus, ...]:
        if not isinstance(value, list):
            return ()
        paths = {change.path for change in card.pr.files}
        places: list[Focus] = []
        for item in value[:_MAX_FOCUS]:
            if not isinstance(item, dict):
                continue
            path, symbol, why = item.get("path"), item.get("symbol"), item.get("why")
            if path not in paths or not isinstance(why, str):
                card.log.record("focus.unknown-path", "focus", str(path))
                continue
            if symbol is not None and not (
                isinstance(symbol, str) and symbol and card.evidence.knows(symbol)
            ):
                card.log.record("focus.unknown-symbol", "focus", str(symbol))
                symbol = None
            why = self._text(why, "focus", checker)
            if why:
                places.append(Focus(str(path), why, symbol or None))
        return tuple(places)


class BriefStrategy(WholeStrategy):
    """The whole card's request, read up to the summary: the model's headline, verdict and
    minutes where they pass; the summary, focus and follow-ups built from facts; no lessons."""

    name: StrategyName = "brief"
    # The schema (and the prompt's example) put these three first; the answer stops as the
    # summary's key is written, so its prose is never decoded.
    model_fields = ("headline", "verdict", "minutes")
    stop = ('"summary"',)
