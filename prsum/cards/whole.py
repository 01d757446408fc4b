"""The `whole` strategy: the model writes the whole card in one chat request, as JSON.

Our code parses the answer and checks every field as it checks a field-by-field answer
(language, copying, grounding, numbers the PR does not state) plus the field's own shape
(length, sentences, allowed verdict, minutes that fit it, focus paths among the PR's files).
A field that fails is replaced by the one prsum builds from facts; the card says which fields
are the model's (`by_model`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import replace
from typing import Any, Final

from prsum import prompts
from prsum.cards.assembly import FOCUS_PLACES, CardInput, facts_body, facts_summary
from prsum.cards.checks import (
    CJK,
    NUMBER,
    AnswerChecker,
    changes_into_itself,
    clean_field,
    ends_repeating_phrase,
    ends_stuttering,
    loops,
    most_repeated_name,
    said_again,
    sentences,
    writes_unstated_number,
)
from prsum.grounding import cites_only_known
from prsum.llm import Backend, Message, RepeatBreaker, Sampling
from prsum.prompts.phrases import PHRASES
from prsum.rubric import allowed_verdicts, prior_verdict, reading_minutes
from prsum.types import CardBody, Facts, Focus, Language, Verdict

# Room for a whole card as JSON in either language, and for the chat template around it.
WHOLE_TOKENS = 768
_TEMPLATE_MARGIN = 32
MINUTES: dict[Verdict, tuple[int, int]] = {"skip": (0, 0), "skim": (1, 15), "deep": (5, 60)}
_HEADLINE_LIMITS = {"zh": 24, "en": 12}  # CJK characters / words
_MAX_ITEMS = 3
_MAX_FOCUS = 4
_MAX_SENTENCES = 5

CARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "headline": {"type": "string"},
        "verdict": {"enum": ["deep", "skim", "skip"]},
        "minutes": {"type": "integer", "minimum": 0, "maximum": 60},
        "summary": {"type": "string"},
        "focus": {
            "type": "array",
            "maxItems": _MAX_FOCUS,
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "symbol": {"type": ["string", "null"]},
                    "why": {"type": "string"},
                },
                "required": ["path", "symbol", "why"],
            },
        },
        "lessons": {"type": "array", "items": {"type": "string"}, "maxItems": _MAX_ITEMS},
        "follow_ups": {"type": "array", "items": {"type": "string"}, "maxItems": _MAX_ITEMS},
    },
    "required": ["headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups"],
}
# Greedy: a card is the same on every run. No repeat penalty: llama.cpp counts the prompt's
# last tokens too, so a penalty steers the model away from the PR's own names (measured: fewer
# of the references' names, lower chrF). The breaker counts the answer only and lets a loop
# grow no longer than a few tokens past `allowed`; what a loop still spoils is cut off
# afterwards (`salvaged`).
WHOLE_SAMPLING = Sampling(temperature=0.0, repeat_penalty=1.0, breaker=RepeatBreaker())
# The length (characters) that nine in ten summaries of each verdict reach in the training
# corpus (training/corpus; tests/test_corpus.py keeps the two in step). Greedy decoding ends a
# small model's summary sooner than the cards it learned from did; below this length it may not
# end it yet.
SUMMARY_FLOOR: dict[Language, dict[str, int]] = {
    "en": {"skip": 408, "skim": 494, "deep": 755},
    "zh": {"skip": 180, "skim": 233, "deep": 346},
}
_OPEN_SUMMARY = re.compile(
    r'"verdict"\s*:\s*"(deep|skim|skip)"[^{}]*"summary"\s*:\s*"((?:[^"\\\n]|\\.)*)$'
)
_OPEN_PLACE = re.compile(r'"(path|symbol)"\s*:\s*"([^"\\\n]*)$')  # a focus place being written
# The letters a card's prose is written in: Latin ("µs" and "café" too), and in zh the CJK
# characters. Any other (a stray Cyrillic token, say) must be one the PR itself contains.
_LATIN = r"\x00-\x7f\u00aa\u00b5\u00ba\u00c0-\u024f"
_CARD_LETTERS: dict[Language, re.Pattern[str]] = {
    "en": re.compile(f"[{_LATIN}]"),
    "zh": re.compile(f"[{_LATIN}{CJK.pattern[1:-1]}]"),
}
_FINISHED = re.compile(r"[。！？.!?][”’」』）)\"']*$")
_STRING_FIELD = r'"{key}"\s*:\s*"((?:[^"\\\n]|\\.)*)(")?'


def parse_card(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's answer (also inside a code fence), or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        answer = json.loads(text[start : end + 1])
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


def _spanned(text: str, added: str) -> Iterator[tuple[int, str, bool]]:
    """Each character of `added`, written after `text`, with its index and whether a code span
    is open before it: the state kept char by char, not recounted from `text` each time."""
    in_span = text.count("`") % 2 == 1
    for index, char in enumerate(added):
        yield index, char, in_span
        in_span ^= char == "`"


def answer_guard(
    knows: Callable[[str], bool],
    paths: Collection[str],
    lang: Language,
    stated_numbers: Collection[str],
    begins: Callable[[str], bool] | None = None,
) -> Callable[[str, str], bool]:
    """What a card's answer may write next (`Sampling.allows`): backticked names and focus
    symbols the PR contains (`knows`; `begins` of one still being written, by default
    `knows`), focus paths among its files, no end to the summary (nor to the answer) before its
    verdict's `SUMMARY_FLOOR`, and in the summary nothing the checks would drop a whole sentence
    for: no number the PR does not state (`stated_numbers`), no change of something into
    itself, no letter of another script than the card's that the PR does not contain, and none
    of the loops `loops` finds: no stutter, no phrase a third time in a sentence, and no new
    name, backticked or (in zh) bare, in a sentence that has named one twice. Refused there,
    the model writes its next likeliest words instead of losing the sentence."""
    floors = SUMMARY_FLOOR[lang]
    begins = begins or knows
    letters = _CARD_LETTERS[lang]

    def strange_letters(text: str, added: str) -> bool:
        """Whether `added` writes, after the summary `text` and outside code spans, a letter of
        neither the card's scripts nor the PR's (`begins` of one character), or in en a CJK
        one, which `in_language` refuses wherever it comes from."""
        if added.isascii():
            return False
        for _, char, in_span in _spanned(text, added):
            if (
                not in_span
                and char.isalpha()
                and not letters.match(char)
                and ((lang == "en" and CJK.match(char)) or not begins(char))
            ):
                return True
        return False

    def loops_in(text: str, added: str) -> bool:
        """Whether `added` starts, after the summary `text`, a loop `loops` would drop the
        sentence for: outside code spans, a stutter wherever the piece stops, a phrase said a
        third time in the sentence, or a new name in a sentence that already repeats one (a
        backticked name, or in zh a bare one: Latin letters, which is what the model writes
        when its backtick is refused)."""
        for index, char, in_span in _spanned(text, added):
            before = text + added[:index]
            names = char == "`" or (lang == "zh" and char.isascii() and char.isalpha())
            # The sentinel makes the sentence the name starts in the last one, even right
            # after an end mark.
            if (
                names
                and not in_span
                and most_repeated_name(sentences(before + " x", lang)[-1]) >= 2
            ):
                return True
            in_span ^= char == "`"  # a closing backtick ends the span, an opening one starts it
            if not in_span and ends_stuttering(before + char):
                return True
            # A phrase ends on a CJK character (zh), or on a letter or digit of its last word (en).
            if (
                not in_span
                and (CJK.match(char) if lang == "zh" else char.isascii() and char.isalnum())
                and ends_repeating_phrase(before + char, lang)
            ):
                return True
        return False

    # The backend asks about many pieces after the same `written`: find its open field once.
    @functools.lru_cache(maxsize=1)
    def open_field(written: str) -> tuple[re.Match[str] | None, re.Match[str] | None]:
        place = _OPEN_PLACE.search(written)
        return place, None if place else _OPEN_SUMMARY.search(written)

    def allows(written: str, piece: str) -> bool:
        if not cites_only_known(written, piece, knows, begins):
            return False
        # A quote or a line break ends a string; so does the end of the turn, a control token
        # whose text is empty (the answer ends there).
        cut = min((at for at in (piece.find('"'), piece.find("\n")) if at >= 0), default=None)
        ends = cut is not None or not piece
        added = piece[:cut]
        place, summary = open_field(written)
        if place:
            field, value = place.group(1), place.group(2) + added
            if field == "symbol":
                return not value or (knows if ends else begins)(value)
            return value in paths if ends else any(path.startswith(value) for path in paths)
        if summary:
            verdict, text = summary.groups()
            # The string's end finishes a number or a value the summary ends on.
            closed = added + ('"' if ends else "")
            if (  # the cheap checks first: a refused piece costs one call, an allowed one all
                strange_letters(text, added)
                or writes_unstated_number(text, closed, stated_numbers)
                or changes_into_itself(text, closed, lang)
                or loops_in(text, added)
            ):
                return False
            return not ends or len(text) + len(added) >= floors[verdict]
        return True

    return allows


def messages_for(prompt: str) -> list[Message]:
    """The chat request of a packed prompt: one user turn (some templates, Gemma's among them,
    have no system turn)."""
    return [{"role": "user", "content": prompt}]


class WholeStrategy:
    """One request for the whole card; each field the model's where it passes, else ours."""

    name: Final = "whole"
    reserve = WHOLE_TOKENS + _TEMPLATE_MARGIN
    sampling = WHOLE_SAMPLING

    def __init__(self, backend: Backend, lang: Language) -> None:
        self.backend = backend
        self.lang = lang
        self.frame = prompts.frame(lang, "whole")

    def context_lines(self, facts: Facts) -> list[str]:
        """The verdicts the rubric leaves open: the model chooses among them."""
        return [prompts.allowed_verdicts_line(allowed_verdicts(facts), self.lang)]

    def write(self, card: CardInput) -> tuple[CardBody, int]:
        checker = AnswerChecker.for_card(
            self.lang, self.frame, card.packed.prompt, card.pr, card.evidence
        )
        # Numbers the prompt shows (line counts, versions in the diff) may be stated.
        checker.stated_numbers |= set(NUMBER.findall(checker.pr_text))
        completion = self.backend.chat(
            messages_for(card.packed.prompt),
            max_tokens=WHOLE_TOKENS,
            sampling=replace(self.sampling, allows=self._guard(card, checker)),
            json_schema=CARD_SCHEMA if self.backend.capabilities.json_schema else None,
        )
        card.usage.add(completion)
        answer = parse_card(completion.text) or salvaged(completion.text, self.lang)
        return self._checked(card, answer, checker), completion.prompt_tokens

    def _guard(self, card: CardInput, checker: AnswerChecker) -> Callable[[str, str], bool]:
        paths = {change.path for change in card.pr.files}  # those `_focus` accepts
        return answer_guard(
            card.evidence.knows,
            paths,
            self.lang,
            frozenset(checker.stated_numbers),
            card.evidence.begins,
        )

    def _checked(
        self, card: CardInput, answer: Mapping[str, Any], checker: AnswerChecker
    ) -> CardBody:
        by_model: list[str] = []
        facts = card.facts

        headline = self._headline(answer.get("headline"), checker)
        if headline:
            by_model.append("headline")
        verdict: Verdict = prior_verdict(facts)
        if answer.get("verdict") in allowed_verdicts(facts):
            verdict = answer["verdict"]
            by_model.append("verdict")
        low, high = MINUTES[verdict]
        minutes = answer.get("minutes")
        if isinstance(minutes, int) and not isinstance(minutes, bool) and low <= minutes <= high:
            by_model.append("minutes")
        else:
            minutes = reading_minutes(verdict, facts)
        focus = self._focus(answer.get("focus"), card, checker)
        if focus:
            by_model.append("focus")
        elif verdict != "skip":
            focus = tuple(card.places[: FOCUS_PLACES[verdict]])
        summary = self._summary(answer.get("summary"), checker)
        if summary:
            by_model.append("summary")
        lessons = self._items(answer.get("lessons"), "lesson", checker)
        if lessons:
            by_model.append("lessons")
        follow_ups = self._items(answer.get("follow_ups"), "follow_up", checker)
        if follow_ups:
            by_model.append("follow_ups")
        ours = facts_body(card, verdict, headline or self._fallback_headline(card))
        return CardBody(
            headline=headline or ours.headline,
            verdict=verdict,
            minutes=minutes,
            summary=summary or facts_summary(card, verdict, focus),
            focus=focus,
            lessons=lessons,
            follow_ups=follow_ups or ours.follow_ups,
            by_model=tuple(by_model),
        )

    def _fallback_headline(self, card: CardInput) -> str:
        symbol = card.places[0].symbol if card.places else None
        return prompts.fallback_headline(card.pr, card.facts, symbol, self.lang)

    def _headline(self, value: Any, checker: AnswerChecker) -> str:
        if not isinstance(value, str):
            return ""
        text = clean_field(value)
        size = len(CJK.findall(text)) if self.lang == "zh" else len(text.split())
        if size > _HEADLINE_LIMITS[self.lang] or not checker.accept(text, "headline"):
            return ""
        return text

    def _summary(self, value: Any, checker: AnswerChecker) -> str:
        if not isinstance(value, str):
            return ""
        # A stray code fence would pair its backticks with the code spans after it.
        text = " ".join(re.sub(r"```\w*", "", value).split())
        # The renderer prints the verdict phrase: a paragraph that opens with one says it twice.
        for phrase in PHRASES[self.lang].verdicts.values():
            if text.startswith(phrase):
                text = text[len(phrase) :].lstrip("：:，,。. ")
        # A sentence the PR does not back (an invented name, a number it does not state), one
        # that restates the facts line, one that loops on a name and one said before are
        # dropped, not the paragraph: the model's other sentences may still be right.
        kept: list[str] = []
        for part in sentences(text, self.lang):
            if checker.unsupported(part) or checker.restates_facts(part) or loops(part):
                continue
            if not any(said_again(part, earlier) for earlier in kept):
                kept.append(part)
        text = PHRASES[self.lang].sentence_joiner.join(kept[:_MAX_SENTENCES])
        if not kept or not checker.accept(text, "summary"):
            return ""
        return text

    def _items(self, value: Any, name: str, checker: AnswerChecker) -> tuple[str, ...]:
        if not isinstance(value, list):
            return ()
        items = [clean_field(item) for item in value[:_MAX_ITEMS] if isinstance(item, str)]
        return tuple(item for item in items if checker.accept(item, name))

    def _focus(self, value: Any, card: CardInput, checker: AnswerChecker) -> tuple[Focus, ...]:
        if not isinstance(value, list):
            return ()
        paths = {change.path for change in card.pr.files}
        # A place the model gives no symbol for gets the one facts pick in that file: the
        # reader is pointed at a function, not only at a file.
        symbols = {place.path: place.symbol for place in card.places}
        places: list[Focus] = []
        for item in value[:_MAX_FOCUS]:
            if not isinstance(item, dict):
                continue
            path, symbol, why = item.get("path"), item.get("symbol"), item.get("why")
            if path not in paths or not isinstance(why, str):
                continue
            if not (isinstance(symbol, str) and symbol and card.evidence.knows(symbol)):
                symbol = symbols.get(path)
            why = clean_field(why)
            if checker.flaw(why, "focus") is None:
                places.append(Focus(str(path), why, symbol or None))
        return tuple(places)
