"""Write one card: build the prompt, let the model write what it can, check every word of it.

The model writes the headline, a sentence on what the change does, and a lesson; it chooses
the verdict among the rubric's allowed options by scoring them. Our code writes the rest from
measured facts (why the verdict, where to look, what is left), so a card is useful and
grounded even when a small model's text is not.
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Literal

from prsum import prompts
from prsum.budget import NO_ROOM, SALIENCE, compact_patch, pack_diff, salience_order
from prsum.cache import JsonStore
from prsum.digest import FileDigest, digest_patch, relevance, title_words
from prsum.errors import ConfigError
from prsum.filekinds import file_kind
from prsum.grounding import Evidence, cited_names, ground_text
from prsum.llm import Backend, Completion
from prsum.mapreduce import NOTE_TOKENS, ChunkNoter
from prsum.notes import fallback_highlights, highlight_cards
from prsum.rubric import allowed_verdicts, prior_verdict, reading_minutes
from prsum.types import (
    Card,
    CardBody,
    Commit,
    Coverage,
    Facts,
    FileChange,
    FileDiff,
    Focus,
    Language,
    LeftOut,
    PackedDiff,
    Provenance,
    PullRequest,
    Timing,
    Verdict,
)

PromptStyle = Literal["digest", "diff"]

# Tokens each generated field may take. The prompt grows by each answer in turn, so their
# sum (and a little for the labels) is kept free after the first prompt.
_FIELD_TOKENS = {"headline": 40, "summary": 120, "lesson": 60}
OUTPUT_RESERVE = sum(_FIELD_TOKENS.values()) + 40
# The digest lists each source file on a line of its own, up to this many; other kinds get
# lines of their own only when they are few, else one line per kind.
_MAX_SOURCE_LINES = 16
_MAX_LINES_PER_KIND = 2
_FOCUS_PLACES: dict[Verdict, int] = {"deep": 2, "skim": 1, "skip": 0}
# A card with no focus (a skip) still names the files of a PR this small.
_NAMED_FILES = 3
# Free-running attempts per field before our code writes it instead.
_ATTEMPTS = 3
# How much the rubric's prior outweighs the model's preference, in nats: the model moves the
# verdict only when it clearly prefers a neighbour.
_PRIOR_WEIGHT = 3.0
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_BAD_STARTS = ("-", "+", "@@", "###", "<", "1.", "*")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_CLAUSE_END = re.compile(r"(?<=[，。；！？,;!?])\s*|(?<=\.)\s+")

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


@dataclass
class _Usage:
    prompt_tokens: int = 0
    sent: int = 0  # prompt tokens of all calls: what a model without a KV cache would evaluate
    evaluated: int = 0
    completion: int = 0
    seconds: float = 0.0

    def add(self, completion: Completion) -> None:
        self.prompt_tokens = max(self.prompt_tokens, completion.prompt_tokens)
        self.sent += completion.prompt_tokens
        self.evaluated += completion.prompt_tokens_evaluated
        self.completion += completion.completion_tokens
        self.seconds += completion.seconds


def in_language(text: str, lang: Language) -> bool:
    """Whether the prose of `text` (code spans aside) is written in `lang`."""
    prose = re.sub(r"`[^`]*`", "", text)
    cjk = len(_CJK.findall(prose))
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
    joiner = "" if _CJK.search(text) else " "
    return joiner.join(kept)


def _loops(text: str) -> bool:
    """A small model's loop: one code name said three times or more."""
    names = re.findall(r"`([^`]+)`", text)
    return any(names.count(name) >= 3 for name in set(names))


@dataclass
class _CardContext:
    """What a model answer for one card is checked against."""

    pr_text: str
    title: str
    stated_numbers: set[str]  # from the title and message: any number the model states must be one
    evidence: Evidence
    written: list[str] = field(default_factory=list)


def _undecorated(text: str) -> str:
    """Text without emoji, punctuation, PR numbers and case: for comparing wordings."""
    return re.sub(r"[^\w\u3400-\u9fff]+", " ", re.sub(r"\(#\d+\)", "", text)).strip().lower()


def _similar(text: str, other: str) -> bool:
    """Near-duplicates: a lesson that restates the summary tells the reader nothing new."""
    return difflib.SequenceMatcher(None, text, other).ratio() > 0.6


@dataclass(frozen=True)
class _DigestLine:
    text: str
    paths: tuple[str, ...]
    reason: str | None  # why its files are not listed one by one, for a grouped line


@dataclass(frozen=True)
class _Packed:
    prompt: str
    digests: dict[str, FileDigest]
    coverage_whole: tuple[str, ...]
    coverage_clipped: tuple[str, ...]
    left_out: tuple[LeftOut, ...]


class CardWriter:
    """Writes cards with one backend, in one language; the prompt frame is shared by every card."""

    def __init__(
        self,
        backend: Backend,
        lang: Language,
        style: PromptStyle,
        *,
        map_chunks: int = 0,
        note_store: JsonStore | None = None,
    ) -> None:
        """`map_chunks`: at most this many model-written chunk notes per PR (diff view only)."""
        self.backend = backend
        self.lang = lang
        self.style = style
        self.map_chunks = map_chunks
        self.noter = (
            ChunkNoter(backend, lang, note_store) if map_chunks > 0 and style == "diff" else None
        )
        self.labels = prompts.LABELS[lang]
        self.frame = prompts.frame(lang)
        self.frame_tokens = backend.count_tokens(self.frame)
        self.label_words = {value for value in vars(self.labels).values() if isinstance(value, str)}
        self.facts_phrases = prompts.facts_phrases(lang)

    def _noted(
        self,
        pr: PullRequest,
        diffs: tuple[FileDiff, ...],
        packed: PackedDiff,
        extra: list[str],
        evidence: Evidence,
        usage: _Usage,
    ) -> tuple[list[str], dict[str, str]]:
        """Notes on the files left out for room: extra prompt lines, and each noted file's reason."""
        assert self.noter is not None
        patches = {diff.path: compact_patch(diff.patch) for diff in diffs}
        pieces = [
            (item.path, patches[item.path])
            for item in packed.left_out
            if item.reason == NO_ROOM and item.path in patches
        ]
        lines = list(extra)
        noted: dict[str, str] = {}
        for note in self.noter.notes(pieces, self.map_chunks):
            if note.completion is not None:
                usage.add(note.completion)
            copied = self._copied(note.text, evidence.text, self.noter.frame)
            if (
                not note.text
                or copied
                or any(not evidence.knows(name) for name in cited_names(note.text))
            ):
                continue
            lines.append(prompts.label(self.lang, self.labels.notes) + note.text)
            noted.update(
                (path, f"seen through a chunk note ({len(note.paths)} files)")
                for path in note.paths
            )
        return lines, noted

    def _pack(
        self,
        pr: PullRequest,
        facts: Facts,
        diffs: tuple[FileDiff, ...],
        extra: list[str],
        evidence: Evidence,
        usage: _Usage,
    ) -> _Packed:
        """The prompt for `pr`, as much of it as fits, checked against the context size."""
        patches = {diff.path: diff.patch for diff in diffs}
        digests = {
            change.path: digest_patch(change.path, patches.get(change.path, ""))
            for change in pr.files
        }
        plan = self._digest_plan(pr, digests)
        context = self.backend.context_size
        fixed = self.frame_tokens + OUTPUT_RESERVE
        # The digest loses its least salient lines until the prompt fits.
        while True:
            lines = [entry.text for entry in plan]
            prompt = self.frame + prompts.pr_block(pr, facts, lines, None, self.lang, extra)
            if self.backend.count_tokens(prompt) + OUTPUT_RESERVE <= context:
                break
            if not plan:
                raise ConfigError(
                    f"--ctx {context} is too small for prsum's prompt: use at least {fixed + 256}"
                )
            plan.pop()
        listed = {path for entry in plan for path in entry.paths}
        unlisted = [
            LeftOut(c.path, "not in the digest: no room left in the context")
            for c in pr.files
            if c.path not in listed
        ]
        if self.style == "digest":
            whole = [path for entry in plan if entry.reason is None for path in entry.paths]
            grouped = [
                LeftOut(path, entry.reason)
                for entry in plan
                if entry.reason
                for path in entry.paths
            ]
            return _Packed(prompt, digests, tuple(whole), (), tuple(grouped + unlisted))
        empty = self.frame + prompts.pr_block(pr, facts, lines, "", self.lang, extra)
        budget = context - OUTPUT_RESERVE - self.backend.count_tokens(empty)
        if budget < 0:
            raise ConfigError(
                f"--ctx {context} is too small for prsum's prompt: use at least {context - budget + 256}"
            )
        packed = pack_diff(pr.files, diffs, budget, self.backend)
        noted: dict[str, str] = {}
        if self.noter is not None and any(item.reason == NO_ROOM for item in packed.left_out):
            # Map-reduce: make room for one note line per chunk of what does not fit.
            budget -= self.map_chunks * (NOTE_TOKENS + 8)
            packed = pack_diff(pr.files, diffs, max(0, budget), self.backend)
            extra, noted = self._noted(pr, diffs, packed, extra, evidence, usage)
        # The joined pieces can count a few tokens more than their sum: shrink until it fits.
        while True:
            prompt = self.frame + prompts.pr_block(pr, facts, lines, packed.text, self.lang, extra)
            overflow = self.backend.count_tokens(prompt) + OUTPUT_RESERVE - context
            if overflow <= 0:
                left_out = tuple(
                    LeftOut(item.path, noted[item.path]) if item.path in noted else item
                    for item in packed.left_out
                )
                return _Packed(
                    prompt, digests, packed.coverage_whole, packed.coverage_clipped, left_out
                )
            if not packed.text:
                raise ConfigError(
                    f"--ctx {context} is too small for prsum's prompt: use at least {context + overflow + 256}"
                )
            budget -= overflow + 8
            packed = pack_diff(pr.files, diffs, budget, self.backend)

    def _digest_plan(self, pr: PullRequest, digests: dict[str, FileDigest]) -> list[_DigestLine]:
        """One line per source file (up to a cap) and per odd other file; the rest grouped by kind."""
        by_kind: dict[str, list[FileChange]] = {}
        for change in salience_order(pr.files):
            by_kind.setdefault(file_kind(change.path), []).append(change)
        plan: list[_DigestLine] = []
        for kind, changes in by_kind.items():
            cap = _MAX_SOURCE_LINES if kind == "source" else _MAX_LINES_PER_KIND
            if kind in ("lock", "vendored") or len(changes) > cap + 1:
                singles, rest = (
                    ([], changes) if kind != "source" else (changes[:cap], changes[cap:])
                )
            else:
                singles, rest = changes, []
            plan += [
                _DigestLine(prompts.change_line(c, digests[c.path], self.lang), (c.path,), None)
                for c in singles
            ]
            if rest:
                reason = f"compressed: one line for {len(rest)} {kind} files"
                plan.append(
                    _DigestLine(
                        prompts.group_line(kind, rest, self.lang),
                        tuple(c.path for c in rest),
                        reason,
                    )
                )
        return plan

    def _copied(self, text: str, pr_text: str, frame: str | None = None) -> bool:
        """Whether `text` lifts a run from the worked examples that this PR does not contain."""
        frame = self.frame if frame is None else frame
        window = 8 if self.lang == "zh" else 24
        pieces = (text[start : start + window] for start in range(max(0, len(text) - window) + 1))
        return any(
            len(piece) == window and piece in frame and piece not in pr_text for piece in pieces
        )

    def _is_none(self, text: str) -> bool:
        return text.rstrip("。.").lower() in (self.labels.none, "none")

    def _flaw(self, text: str, name: str, card: _CardContext, allow_none: bool) -> str | None:
        """What is wrong with a model answer, or None when it can go into the card."""
        if allow_none and self._is_none(text):
            return None
        if len(text) < 4 or text.startswith(_BAD_STARTS) or text.rstrip(":：") in self.label_words:
            return "not an answer"
        if _loops(text) or any(_similar(text, earlier) for earlier in card.written):
            return "repeats itself"
        if self._copied(text, card.pr_text):
            return "copied from the examples"
        if name == "headline" and _similar(_undecorated(text), _undecorated(card.title)):
            return "copies the title"
        if any(phrase in text for phrase in self.facts_phrases):
            return "restates the facts line"
        if any(not card.evidence.knows(name) for name in cited_names(text)):
            return "names something the PR does not contain"
        if not set(_NUMBER.findall(text)) <= card.stated_numbers:
            return "states a number the PR's title and message do not"
        if not in_language(text, self.lang):
            return "wrong language"
        return None

    def _field(
        self, prompt: str, name: str, usage: _Usage, card: _CardContext, *, allow_none: bool = False
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
            )
            usage.add(completion)
            text = clean_field(completion.text)
            flaw = self._flaw(text, name, card, allow_none)
            if flaw is None:
                card.written.append(text)
                return text
            wrong_language = wrong_language or flaw == "wrong language"
            if text:
                rejected.append(text)
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

    def _places(self, pr: PullRequest, packed: _Packed) -> list[Focus]:
        """Where to read first, best first: source and test files the model saw.

        Source before tests; within each, files whose changes are about what the title says
        first, then larger changes first.
        """
        seen = set(packed.coverage_whole) | set(packed.coverage_clipped)
        words = title_words(pr.title)
        changes = sorted(
            (
                change
                for change in salience_order(pr.files)
                if change.path in seen and file_kind(change.path) in ("source", "test")
            ),
            key=lambda change: (
                SALIENCE[file_kind(change.path)],
                -relevance(words, change.path, packed.digests[change.path].names),
            ),
        )
        places = []
        for change in changes:
            digest = packed.digests[change.path]
            symbol = max(digest.names, key=lambda name: relevance(words, "", (name,)), default=None)
            places.append(
                Focus(change.path, prompts.focus_reason(digest, change, self.lang), symbol)
            )
        return places

    def build_prompt(
        self,
        pr: PullRequest,
        facts: Facts,
        diffs: tuple[FileDiff, ...],
        commits: Sequence[Commit] = (),
    ) -> str:
        """The prompt a card starts from, as it would be packed: for benchmarks and inspection."""
        extra = prompts.context_lines(pr, commits, self.lang)
        return self._pack(pr, facts, diffs, extra, Evidence.of(pr, diffs), _Usage()).prompt

    def highlights(self, cards: Sequence[Card]) -> str:
        """The highlights paragraph of release notes, by the model, checked, else from headlines.

        The model's paragraph must cite at least one of the PRs it was given and no other,
        name only what those cards name, be in the reader's language and not copy its example.
        """
        chosen = highlight_cards(cards)
        if not chosen:
            return fallback_highlights(chosen, self.lang)
        frame = (
            files("prsum.prompts")
            .joinpath(f"highlights-{self.lang}.txt")
            .read_text(encoding="utf-8")
        )
        listing = "\n".join(f"{card.pr.label} {card.body.headline}" for card in chosen)
        labels = self.labels
        prompt = f"{frame.rstrip()}\n\n{self._label(labels.pull_requests).rstrip()}\n{listing}\n{self._label(labels.highlights)}"
        completion = self.backend.complete(prompt, max_tokens=160, stop=["\n"])
        text = clean_field(completion.text)
        cited = set(re.findall(r"#\d+", text))
        allowed = {card.pr.label for card in chosen}
        known = "\n".join(
            f"{card.body.headline}\n{card.body.summary}\n{card.pr.title}" for card in chosen
        )
        usable = (
            bool(cited & allowed)
            and cited <= allowed
            and in_language(text, self.lang)
            and not self._copied(text, known, frame)
            and all(name in known for name in cited_names(text))
        )
        return text if usable else fallback_highlights(chosen, self.lang)

    def _label(self, name: str) -> str:
        return prompts.label(self.lang, name)

    def write(
        self,
        pr: PullRequest,
        facts: Facts,
        diffs: tuple[FileDiff, ...],
        commits: Sequence[Commit] = (),
    ) -> Card:
        extra = prompts.context_lines(pr, commits, self.lang)
        evidence = Evidence.of(pr, diffs)
        usage = _Usage()
        packed = self._pack(pr, facts, diffs, extra, evidence, usage)
        prompt = packed.prompt
        card = _CardContext(
            pr_text=prompt[len(self.frame) :],
            title=pr.title,
            stated_numbers=set(_NUMBER.findall(f"{pr.title}\n{pr.message}")),
            evidence=evidence,
        )
        labels = self.labels
        places = self._places(pr, packed)

        headline = self._field(prompt + self._label(labels.headline), "headline", usage, card)
        headline_by_model = bool(headline)
        if not headline:
            symbol = places[0].symbol if places else None
            headline = prompts.fallback_headline(pr, facts, symbol, self.lang)
            card.written.append(headline)
        prompt += f"{self._label(labels.headline)}{headline}\n{self._label(labels.verdict)}"
        scoring = time.perf_counter()
        verdict = self._choose_verdict(prompt, facts)
        usage.seconds += time.perf_counter() - scoring  # model time too
        prompt += f"{labels.verdicts[verdict]}\n"

        said = self._field(prompt + self._label(labels.summary), "summary", usage, card)
        prompt += f"{self._label(labels.summary)}{said}\n"
        focus = tuple(places[: _FOCUS_PLACES[verdict]])
        lessons: tuple[str, ...] = ()
        if verdict != "skip":
            lesson = self._field(
                prompt + self._label(labels.lesson), "lesson", usage, card, allow_none=True
            )
            prompt += f"{self._label(labels.lesson)}{lesson}\n"
            lessons = (lesson,) if lesson and not self._is_none(lesson) else ()

        body = _grounded(
            CardBody(
                headline=headline,
                headline_by_model=headline_by_model,
                verdict=verdict,
                minutes=reading_minutes(verdict, facts),
                summary=self._summary(
                    [c.path for c in salience_order(pr.files)],
                    said,
                    verdict,
                    facts,
                    focus,
                    pr.reverts,
                ),
                focus=focus,
                lessons=lessons,
                follow_ups=tuple(prompts.follow_ups(pr, facts, self.lang)),
            ),
            card.evidence,
        )
        return Card(
            pr=pr,
            facts=facts,
            body=body,
            coverage=Coverage(
                files_total=len(pr.files),
                files_whole=packed.coverage_whole,
                files_clipped=packed.coverage_clipped,
                files_left_out=packed.left_out,
                prompt_tokens=self.backend.count_tokens(prompt),
                context_size=self.backend.context_size,
                view=self.style,
            ),
            model=self.backend.info,
            timing=Timing(
                prompt_tokens=usage.prompt_tokens,
                prompt_tokens_evaluated=usage.evaluated,
                completion_tokens=usage.completion,
                seconds=round(usage.seconds, 3),
                prompt_tokens_sent=usage.sent,
            ),
            lang=self.lang,
            provenance=_provenance(pr, commits, extra),
        )

    def _summary(
        self,
        files: list[str],
        said: str,
        verdict: Verdict,
        facts: Facts,
        focus: tuple[Focus, ...],
        pr_reverts: str | None,
    ) -> str:
        """Why the verdict (facts), what the change does (model), where to start (facts)."""
        sentences = [prompts.verdict_sentence(verdict, facts, self.lang)]
        if said:
            sentences.append(
                said
                if said.endswith(("。", ".", "！", "!"))
                else said + ("。" if self.lang == "zh" else ".")
            )
        if pr_reverts:
            sentences.append(
                f"撤销的是 {pr_reverts}。" if self.lang == "zh" else f"It undoes {pr_reverts}."
            )
        unsaid = [
            item for item in focus if item.path not in said and (item.symbol or "\0") not in said
        ]
        if unsaid:
            sentences.append(prompts.pointer_sentence(unsaid, self.lang))
        elif not focus and 0 < len(files) <= _NAMED_FILES:
            sentences.append(prompts.files_sentence(files, self.lang))
        return ("" if self.lang == "zh" else " ").join(sentences)


def _provenance(pr: PullRequest, commits: Sequence[Commit], extra: list[str]) -> Provenance:
    meta = pr.meta
    if meta is None:
        return Provenance(("git",), len(commits))
    body_line = next(
        (line for line in extra if meta.body and line.endswith(prompts.excerpt(meta.body))), ""
    )
    return Provenance(
        sources=("git", f"gh-json:{meta.source}"),
        commits_read=len(commits),
        labels=meta.labels,
        reviewers=meta.reviewers,
        pr_body=prompts.excerpt(meta.body) if body_line else "",
    )


def _grounded(body: CardBody, evidence: Evidence) -> CardBody:
    """The body with every name the PR does not contain repaired or removed, and counted."""
    removed = 0

    def ground(text: str) -> str:
        nonlocal removed
        fixed, count = ground_text(text, evidence)
        removed += count
        return fixed

    return CardBody(
        headline=ground(body.headline),
        verdict=body.verdict,
        minutes=body.minutes,
        summary=ground(body.summary),
        focus=tuple(Focus(item.path, ground(item.why), item.symbol) for item in body.focus),
        lessons=tuple(text for text in map(ground, body.lessons) if text),
        follow_ups=tuple(text for text in map(ground, body.follow_ups) if text),
        ungrounded_removed=removed,
        headline_by_model=body.headline_by_model,
    )
