"""The `fields` strategy: a small base model writes a card one field at a time.

After worked examples, the model writes the headline, a sentence on what the change does and
a lesson; it chooses the verdict among the rubric's allowed options by scoring them. Our code
writes the rest from facts (why the verdict, where to look, what is left), so a card is
useful and grounded even when a small model's text is not.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Final

from prsum import prompts
from prsum.cards.assembly import CardInput, facts_body, facts_headline
from prsum.cards.checks import AnswerChecker, clean_field
from prsum.cards.packing import Usage
from prsum.llm import Backend, Sampling
from prsum.rubric import allowed_verdicts, prior_verdict
from prsum.types import CardBody, Facts, Language, Verdict

# Small models loop ("X, X, X, ..."); a mild penalty on recent tokens breaks the loop.
BASE_MODEL_SAMPLING = Sampling(temperature=0.0, repeat_penalty=1.3)
# Tokens each generated field may take. The prompt grows by each answer in turn, so their
# sum (and a little for the labels) is kept free after the first prompt.
_FIELD_TOKENS = {"headline": 40, "summary": 120, "lesson": 60}
OUTPUT_RESERVE = sum(_FIELD_TOKENS.values()) + 40
# Free-running attempts per field before our code writes it instead.
_ATTEMPTS = 3
# How much the rubric's prior outweighs the model's preference, in nats: the model moves the
# verdict only when it clearly prefers a neighbour.
_PRIOR_WEIGHT = 3.0

# Fallback grammars, used only when free generation fails the language check: grammar
# sampling is several times slower in llama-cpp-python.
_GRAMMARS: dict[Language, str] = {
    "zh": (
        'root ::= cjk piece* "\\n"\n'
        "cjk ::= [\u4e00-\u9fff]\n"
        'piece ::= cjk | [，。、；：（）“”0-9 ] | "`" [a-zA-Z0-9_./-]+ "`"\n'
    ),
    "en": 'root ::= [A-Z] [a-zA-Z0-9 ,.;:()/_-]* "\\n"\n',
}


class FieldsStrategy:
    """One field per completion, every answer checked, facts where the model fails."""

    name: Final = "fields"
    reserve = OUTPUT_RESERVE
    sampling = BASE_MODEL_SAMPLING

    def __init__(self, backend: Backend, lang: Language) -> None:
        self.backend = backend
        self.lang = lang
        self.labels = prompts.LABELS[lang]
        self.frame = prompts.frame(lang)

    def context_lines(self, facts: Facts) -> list[str]:
        return []

    def _label(self, name: str) -> str:
        return prompts.label(self.lang, name)

    def _field(
        self, prompt: str, name: str, usage: Usage, checker: AnswerChecker, allow_none: bool = False
    ) -> str:
        """One field by the model, or "" when no attempt is usable: the caller then writes it.

        A rejected answer's first token is banned on the next attempt, to steer a small model
        off it; when an answer was in the wrong language, the last attempt is bound by a
        grammar to the right script (grammar sampling is slow, so it is only the fallback).
        """
        rejected: list[str] = []
        wrong_language = False
        for attempt in range(_ATTEMPTS):
            last = attempt == _ATTEMPTS - 1
            completion = self.backend.complete(
                prompt,
                max_tokens=_FIELD_TOKENS[name],
                stop=["\n", "###"],
                grammar=_GRAMMARS[self.lang] if wrong_language and last else None,
                banned_starts=rejected,
                sampling=self.sampling,
            )
            usage.add(completion)
            text = clean_field(completion.text)
            flaw = checker.flaw(text, name, allow_none)
            if flaw is None:
                checker.written.append(text)
                return text
            checker.refused(text, name, allow_none)  # recorded
            wrong_language = wrong_language or flaw == "wrong language"
            if text:
                rejected.append(text)
        checker.log.record("facts-fallback", name, "")
        return ""

    def _choose_verdict(self, prompt: str, facts: Facts) -> Verdict:
        prior = prior_verdict(facts)
        options = allowed_verdicts(facts)
        if len(options) == 1:
            return options[0]
        scores = self.backend.score(
            prompt, [self.labels.verdicts[verdict] + "\n" for verdict in options]
        )
        return max(
            zip(options, scores, strict=True),
            key=lambda pair: pair[1] + (_PRIOR_WEIGHT if pair[0] == prior else 0.0),
        )[0]

    def write(self, card: CardInput) -> tuple[CardBody, int]:
        labels, usage = self.labels, card.usage
        prompt = card.packed.prompt
        checker = AnswerChecker.for_card(
            self.lang, self.frame, prompt, card.pr, card.evidence, card.log
        )
        by_model: list[str] = []

        headline = self._field(prompt + self._label(labels.headline), "headline", usage, checker)
        if headline:
            by_model.append("headline")
        else:
            headline = facts_headline(card)
            checker.written.append(headline)
        prompt += f"{self._label(labels.headline)}{headline}\n{self._label(labels.verdict)}"
        scoring = time.perf_counter()
        verdict = self._choose_verdict(prompt, card.facts)
        usage.seconds += time.perf_counter() - scoring  # model time too
        prompt += f"{labels.verdicts[verdict]}\n"

        said = self._field(prompt + self._label(labels.summary), "summary", usage, checker)
        prompt += f"{self._label(labels.summary)}{said}\n"
        lessons: tuple[str, ...] = ()
        if verdict != "skip":
            lesson = self._field(
                prompt + self._label(labels.lesson), "lesson", usage, checker, allow_none=True
            )
            prompt += f"{self._label(labels.lesson)}{lesson}\n"
            lessons = (lesson,) if lesson and not checker.is_none(lesson) else ()
        if lessons:
            by_model.append("lessons")
        body = facts_body(card, verdict, headline, said)
        return (
            replace(body, lessons=lessons, by_model=tuple(by_model)),
            self.backend.count_tokens(prompt),
        )
