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
from prsum.budget import salience_order
from prsum.cards.assembly import (
    FOCUS_PLACES,
    CardInput,
    facts_body,
    facts_headline,
    facts_summary,
)
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
    pr_part,
    said_again,
    sentences,
    writes_unstated_number,
)
from prsum.cards.explain import RuleLog
from prsum.filekinds import file_kind
from prsum.grounding import cites_only_known
from prsum.llm import GREEDY, Backend, Message, RepeatBreaker, Sampling
from prsum.profiles import Profile
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
_MAX_SCHEMA_PLACES = 24  # files a focus place may name in the schema: the most salient shown
_PLACE_KINDS = frozenset({"source", "test", "config", "ci"})  # where code is read

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
    log: RuleLog | None = None,
) -> Callable[[str, str], bool]:
    """What a card's answer may write next (`Sampling.allows`): backticked names and focus
    symbols the PR contains (`knows`; `begins` of one still being written, by default
    `knows`), focus paths among its files, no end to the summary (nor to the answer) before its
    verdict's `SUMMARY_FLOOR`, and in the summary nothing the checks would drop a whole sentence
    for: no number the PR does not state (`stated_numbers`), no change of something into
    itself, no letter of another script than the card's that the PR does not contain, and none
    of the loops `loops` finds: no stutter, no phrase a third time in a sentence, and no new
    name, backticked or (in zh) bare, in a sentence that has named one twice. Refused there,
    the model writes its next likeliest words instead of losing the sentence.

    A refusal of the token the model likes best is recorded in `log` under the rule's name
    (`guard.` and the rule): the backend asks about its likeliest token first, so the first
    refusal after each `written` is the one that changed the answer."""
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

    def refusal(written: str, piece: str) -> tuple[str, str] | None:
        """The rule that refuses `piece` after `written`, and the field it is in, or None."""
        if not cites_only_known(written, piece, knows, begins):
            return "name", "any"
        # A quote or a line break ends a string; so does the end of the turn, a control token
        # whose text is empty (the answer ends there).
        cut = min((at for at in (piece.find('"'), piece.find("\n")) if at >= 0), default=None)
        ends = cut is not None or not piece
        added = piece[:cut]
        place, summary = open_field(written)
        if place:
            field, value = place.group(1), place.group(2) + added
            if field == "symbol":
                allowed = not value or (knows if ends else begins)(value)
            else:
                allowed = value in paths if ends else any(p.startswith(value) for p in paths)
            return None if allowed else (f"focus-{field}", "focus")
        if summary:
            verdict, text = summary.groups()
            # The string's end finishes a number or a value the summary ends on.
            closed = added + ('"' if ends else "")
            # The cheap checks first: a refused piece costs one call, an allowed one all.
            if strange_letters(text, added):
                return "script", "summary"
            if writes_unstated_number(text, closed, stated_numbers):
                return "number", "summary"
            if changes_into_itself(text, closed, lang):
                return "self-change", "summary"
            if loops_in(text, added):
                return "loop", "summary"
            if ends and len(text) + len(added) < floors[verdict]:
                return "floor", "summary"
        return None

    refused_after: list[int] = [-1]  # the length of `written` at the last recorded refusal

    def allows(written: str, piece: str) -> bool:
        found = refusal(written, piece)
        if found is not None and log is not None and refused_after[0] != len(written):
            refused_after[0] = len(written)
            log.record(f"guard.{found[0]}", found[1], written[-40:] + "⟨" + piece + "⟩")
        return found is None

    return allows


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
            "focus": {"type": "array", "maxItems": _MAX_FOCUS, "items": {"anyOf": places}}
            if places
            else {"type": "array", "maxItems": 0},
            "lessons": items,
            "follow_ups": items,
        },
        "required": ["headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups"],
    }


class WholeStrategy:
    """One request for the whole card; each field the model's where it passes, else ours.

    The profile says how the model is held: an instruction-following model writes to the card's
    schema and only truth is checked afterwards (names and paths the PR contains, numbers it
    states, no change of something into itself, the card's language); the small tuned model is
    held token by token (`answer_guard`) and every check applies."""

    name: Final = "whole"
    reserve = WHOLE_TOKENS + _TEMPLATE_MARGIN

    def __init__(self, backend: Backend, lang: Language, profile: Profile) -> None:
        self.backend = backend
        self.lang = lang
        self.profile = profile
        self.frame = prompts.frame(lang, profile.prompt)
        self.sampling = WHOLE_SAMPLING if profile.guard else GREEDY

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
        sampling = self.sampling
        if self.profile.guard:
            sampling = replace(sampling, allows=self._guard(card, checker))
        completion = self.backend.chat(
            messages_for(card.packed.prompt, self.frame, self.profile),
            max_tokens=WHOLE_TOKENS,
            sampling=sampling,
            json_schema=card_schema(card) if schema else None,
        )
        card.usage.add(completion)
        answer = parse_card(completion.text)
        if answer is None:
            card.log.record("answer.salvaged", "answer", completion.text[-80:])
            answer = salvaged(completion.text, self.lang)
        return self._checked(card, answer, checker), completion.prompt_tokens

    def _guard(self, card: CardInput, checker: AnswerChecker) -> Callable[[str, str], bool]:
        paths = {change.path for change in card.pr.files}  # those `_focus` accepts
        return answer_guard(
            card.evidence.knows,
            paths,
            self.lang,
            frozenset(checker.stated_numbers),
            card.evidence.begins,
            card.log,
        )

    def _passes(self, checker: AnswerChecker, text: str, field: str) -> bool:
        """Whether a field's text may go into the card: every check for the small model, only
        truth (`AnswerChecker.untrue`) for one that follows instructions. A pass is
        remembered, so later fields may not repeat it (small model)."""
        if self.profile.guard:
            return checker.accept(text, field)
        return not checker.refused_as_untrue(text, field)

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
        ours = facts_body(card, verdict, headline or facts_headline(card))
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

    def _headline(self, value: Any, checker: AnswerChecker) -> str:
        if not isinstance(value, str):
            return ""
        text = clean_field(value)
        size = len(CJK.findall(text)) if self.lang == "zh" else len(text.split())
        if self.profile.guard and size > _HEADLINE_LIMITS[self.lang]:
            checker.log.record("headline.too-long", "headline", text)
            return ""
        return text if self._passes(checker, text, "headline") else ""

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
        shaped = self.profile.guard  # the small model's shaping checks, beside truth
        for part in sentences(text, self.lang):
            if unsupported := checker.unsupported(part):
                rule = "summary." + "-".join(unsupported.split()[:3])
            elif shaped and checker.restates_facts(part):
                rule = "summary.restates-facts"
            elif shaped and loops(part):
                rule = "summary.loops"
            elif shaped and any(said_again(part, earlier) for earlier in kept):
                rule = "summary.said-again"
            else:
                kept.append(part)
                continue
            checker.log.record(rule, "summary", part)
        for part in kept[_MAX_SENTENCES:]:
            checker.log.record("summary.over-five", "summary", part)
        text = PHRASES[self.lang].sentence_joiner.join(kept[:_MAX_SENTENCES])
        if not kept or not self._passes(checker, text, "summary"):
            return ""
        return text

    def _items(self, value: Any, name: str, checker: AnswerChecker) -> tuple[str, ...]:
        if not isinstance(value, list):
            return ()
        items = [clean_field(item) for item in value[:_MAX_ITEMS] if isinstance(item, str)]
        return tuple(item for item in items if item and self._passes(checker, item, name))

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
                card.log.record("focus.unknown-path", "focus", str(path))
                continue
            if not (isinstance(symbol, str) and symbol and card.evidence.knows(symbol)):
                if symbol:
                    card.log.record("focus.unknown-symbol", "focus", str(symbol))
                symbol = symbols.get(path)
            why = clean_field(why)
            if self.profile.guard and checker.refused(why, "focus"):
                continue
            if not self.profile.guard and checker.refused_as_untrue(why, "focus"):
                continue
            places.append(Focus(str(path), why, symbol or None))
        return tuple(places)
