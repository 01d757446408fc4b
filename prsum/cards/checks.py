"""What a model's answer must pass before it goes into a card, whichever strategy asked for it.

An answer is refused when it is not an answer, loops or repeats, copies the prompt's examples
or the PR's title, restates the facts line, names something the PR does not contain, states a
number the PR does not, says something changed into itself, or is in the wrong language.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field

from prsum import prompts
from prsum.cards.explain import RuleLog
from prsum.grounding import Evidence, cited_names
from prsum.types import Language, PullRequest

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")  # a CJK character
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_BAD_STARTS = ("-", "+", "@@", "###", "<", "1.", "*")
NUMBER = re.compile(r"\d+(?:\.\d+)*")
# A sentence ends at its mark and the closing quotes or brackets after it.
_SENTENCE_END = {
    "zh": re.compile(r"[。！？][”’」』）)]*"),
    "en": re.compile(r"[.!?][\"'”’)]*(?=\s|$)"),
}
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_CLAUSE_END = re.compile(r"(?<=[，。；！？,;!?])\s*|(?<=\.)\s+")
# A stutter: a stretch of 2 to 24 characters, with a letter or an underscore in it, four times
# on end.
_STUTTER_SIZES = range(2, 25)
_STUTTER_TIMES = 4
# A lookahead finds the stretch at every start, so one without a letter or an underscore
# hides no other.
_STUTTER = re.compile(
    rf"(?=(.{{{_STUTTER_SIZES.start},{_STUTTER_SIZES.stop - 1}}}?)\1{{{_STUTTER_TIMES - 1},}})"
)
# What a stutter's stretch holds: a letter of any script or an underscore ("___.___.___.___.";
# "0.0.0.0." is none).
_WORDY = re.compile(r"[^\W\d]")
# A phrase a loop says again: five CJK characters in zh, four words in en; a third time in one
# sentence is a loop, whatever stands between the repeats.
_PHRASE_CHARACTERS = 5
_PHRASE_WORDS = 4
_PHRASE_TIMES = 3
_CJK_RUN = re.compile(CJK.pattern + "+")
# A word with its digits ("v1.9.2"), so that a list of version bumps repeats no phrase.
_WORD = re.compile(r"[A-Za-z0-9]+(?:[.'’][A-Za-z0-9]+)*")
# "from 1.24 to 1.24", "从 `x` 改为 `x`": a change of something into itself (a name or a
# version, not "from time to time").
_VALUE = r"(`[^`]+`|[A-Za-z_.-]*\d[A-Za-z0-9_.-]*|[A-Za-z]+ \d[A-Za-z0-9_.-]*)"
_SAME_VALUE = r"\1(?![A-Za-z0-9_]|\.[A-Za-z0-9])"
_SELF_CHANGE = {
    "en": re.compile(rf"\bfrom {_VALUE} to {_SAME_VALUE}"),
    "zh": re.compile(
        rf"从\s*{_VALUE}\s*(?:改为|改成|变为|换成|升到|升级到|升级为|提升到|移到|挪到|到)\s*{_SAME_VALUE}"
    ),
}


def in_language(text: str, lang: Language) -> bool:
    """Whether the prose of `text` (code spans aside) is written in `lang`."""
    prose = re.sub(r"`[^`]*`", "", text)
    cjk = len(CJK.findall(prose))
    latin = len(_LATIN_WORD.findall(prose))
    if lang == "zh":
        return cjk >= 2 and cjk >= 2 * latin
    return latin >= 2 and cjk == 0


def clean_field(text: str) -> str:
    """One line of model text, with quotes, stray headings and repeated clauses removed."""
    text = re.sub(r"\s+", " ", text.split("###", 1)[0]).strip().strip("\"'“”")
    kept: list[str] = []
    seen: set[str] = set()
    for clause in _CLAUSE_END.split(text):
        core = clause.strip().rstrip("，。；！？,;!?. ")
        if core and core not in seen:
            seen.add(core)
            kept.append(clause.strip())
    joiner = "" if CJK.search(text) else " "
    return joiner.join(kept)


def sentences(text: str, lang: Language) -> list[str]:
    """The sentences of a paragraph; an end mark inside a code span ends none."""
    spans = [match.span() for match in _CODE_SPAN.finditer(text)]
    found: list[str] = []
    start = 0
    for match in _SENTENCE_END[lang].finditer(text):
        if any(low <= match.start() < high for low, high in spans):
            continue
        found.append(text[start : match.end()].strip())
        start = match.end()
    found.append(text[start:].strip())
    return [sentence for sentence in found if sentence]


def most_repeated_name(sentence: str) -> int:
    """How often the sentence's most cited code name is cited in it (0 for none)."""
    names = re.findall(r"`([^`]+)`", sentence)
    return max((names.count(name) for name in set(names)), default=0)


def stutters(text: str) -> bool:
    """Whether a stretch of words outside code spans runs four times on end ("heads-heads-
    heads-heads-"): a loop the repeat breaker let through by varying it. A constant such as
    `0xFFFFFFFF` is no loop."""
    prose = _CODE_SPAN.sub("`", text)
    return any(_WORDY.search(run.group(1)) for run in _STUTTER.finditer(prose))


def _piece_phrases(prose: str, lang: Language) -> list[str]:
    """The phrases of prose without code spans, in order: every five-character window of each
    CJK run (zh), every window of four words, lowercased (en)."""
    if lang == "zh":
        return [
            run[start : start + _PHRASE_CHARACTERS]
            for run in _CJK_RUN.findall(prose)
            for start in range(len(run) - _PHRASE_CHARACTERS + 1)
        ]
    words = _WORD.findall(prose.lower())
    return [
        " ".join(words[at : at + _PHRASE_WORDS]) for at in range(len(words) - _PHRASE_WORDS + 1)
    ]


def _phrases(sentence: str, lang: Language) -> list[str]:
    """The sentence's phrases; a code span ends one, so parallel clauses about different names
    ("a test for `parse` in the module, a test for `emit` in the module") repeat none."""
    return [
        phrase for prose in _CODE_SPAN.split(sentence) for phrase in _piece_phrases(prose, lang)
    ]


def repeats_phrase(sentence: str, lang: Language) -> bool:
    """Whether one sentence says a phrase a third time ("选项在父目录里执行的子目录里执行，父目录
    里执行的子目录里执行，父目录里执行"): a loop that varies what stands between its repeats, so
    no stutter."""
    return any(times >= _PHRASE_TIMES for times in Counter(_phrases(sentence, lang)).values())


def loops(text: str) -> bool:
    """A small model's loop: one code name said three times or more in one sentence (across
    a paragraph's sentences, the change's main function is rightly named again), a phrase said
    three times in one sentence, or words that stutter."""
    lang: Language = "zh" if CJK.search(text) else "en"
    return stutters(text) or any(
        most_repeated_name(sentence) >= 3 or repeats_phrase(sentence, lang)
        for sentence in sentences(text, lang)
    )


def undecorated(text: str) -> str:
    """Text without emoji, punctuation, PR numbers and case: for comparing wordings."""
    return re.sub(r"[^\w\u3400-\u9fff]+", " ", re.sub(r"\(#\d+\)", "", text)).strip().lower()


def similar(text: str, other: str) -> bool:
    """Near-duplicates: a lesson that restates the summary tells the reader nothing new."""
    return difflib.SequenceMatcher(None, text, other).ratio() > 0.6


def pr_part(prompt: str, frame: str) -> str:
    """What a prompt shows of the PR: all but its fixed frame (instructions, examples)."""
    return prompt[len(frame) :] if prompt.startswith(frame) else prompt


def copied(text: str, pr_text: str, frame: str, lang: Language) -> bool:
    """Whether `text` lifts a run from the prompt's frame (its examples) that the PR lacks; a
    text shorter than the run, but at least half as long, counts whole (a focus reason copied
    from the example, "改动的边界条件", was judged false)."""
    window = 8 if lang == "zh" else 24
    if window // 2 <= len(text) < window:
        window = len(text)
    pieces = (text[start : start + window] for start in range(max(0, len(text) - window) + 1))
    return any(len(piece) == window and piece in frame and piece not in pr_text for piece in pieces)


@dataclass
class AnswerChecker:
    """Checks the model's answers for one card; remembers what the card already says."""

    lang: Language
    frame: str  # the prompt's fixed part: answers may not copy its examples
    pr_text: str  # the prompt's PR part
    title: str
    stated_numbers: set[str]  # from the title and message: any number stated must be one
    evidence: Evidence
    log: RuleLog = field(default_factory=RuleLog)
    written: list[str] = field(default_factory=list)

    @classmethod
    def for_card(
        cls,
        lang: Language,
        frame: str,
        prompt: str,
        pr: PullRequest,
        evidence: Evidence,
        log: RuleLog,
    ) -> AnswerChecker:
        return cls(
            lang=lang,
            frame=frame,
            pr_text=pr_part(prompt, frame),
            title=pr.title,
            stated_numbers=set(NUMBER.findall(f"{pr.title}\n{pr.message}")),
            evidence=evidence,
            log=log,
        )

    def refused(self, text: str, name: str, allow_none: bool = False) -> bool:
        """Whether `text` has a flaw for field `name`; a flaw is recorded as the rule that
        refused it (`flaw.` and its words)."""
        flaw = self.flaw(text, name, allow_none)
        if flaw is not None:
            self.log.record("flaw." + "-".join(flaw.split()[:4]), name, text)
        return flaw is not None

    def is_none(self, text: str) -> bool:
        return text.rstrip("。.").lower() in (prompts.LABELS[self.lang].none, "none")

    def flaw(self, text: str, name: str, allow_none: bool = False) -> str | None:
        """What is wrong with an answer for field `name`, or None when it can go in the card."""
        labels = prompts.LABELS[self.lang]
        label_words = {value for value in vars(labels).values() if isinstance(value, str)}
        if allow_none and self.is_none(text):
            return None
        if len(text) < 4 or text.startswith(_BAD_STARTS) or text.rstrip(":：") in label_words:
            return "not an answer"
        if loops(text) or any(similar(text, earlier) for earlier in self.written):
            return "repeats itself"
        if copied(text, self.pr_text, self.frame, self.lang):
            return "copied from the examples"
        if name == "headline" and similar(undecorated(text), undecorated(self.title)):
            return "copies the title"
        if self.restates_facts(text):
            return "restates the facts line"
        if unsupported := self.unsupported(text):
            return unsupported
        if not in_language(text, self.lang):
            return "wrong language"
        return None

    def untrue(self, text: str) -> str | None:
        """What makes `text` untrue of the PR or unusable as written: a name the PR lacks, a
        number it does not state, a change of something into itself, words lifted from the
        prompt's worked example (they describe the invented PR, not this one), the wrong
        language."""
        if unsupported := self.unsupported(text):
            return unsupported
        if copied(text, self.pr_text, prompts.example_part(self.frame), self.lang):
            return "copied from the example"
        if not in_language(text, self.lang):
            return "wrong language"
        return None

    def refused_as_untrue(self, text: str, name: str) -> bool:
        """Whether `untrue` refuses `text` for field `name`; a refusal is recorded."""
        reason = self.untrue(text)
        if reason is not None:
            self.log.record("untrue." + "-".join(reason.split()[:4]), name, text)
        return reason is not None

    def restates_facts(self, text: str) -> bool:
        return any(phrase in text for phrase in prompts.facts_phrases(self.lang))

    def unsupported(self, text: str) -> str | None:
        """The claim of `text` the PR does not back (a name it lacks, a number it does not
        state, a change of something into itself), or None."""
        if any(not self.evidence.knows(cited) for cited in cited_names(text)):
            return "names something the PR does not contain"
        if not set(NUMBER.findall(text)) <= self.stated_numbers:
            return "states a number the PR's title and message do not"
        if _SELF_CHANGE[self.lang].search(text):
            return "says something changed into itself"
        return None

    def accept(self, text: str, name: str, allow_none: bool = False) -> bool:
        """Whether `text` passes; an accepted text is remembered, so later ones may not repeat it."""
        if self.refused(text, name, allow_none):
            return False
        self.written.append(text)
        return True
