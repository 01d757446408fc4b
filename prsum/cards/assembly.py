"""Assembly: what our code writes of a card from measured facts, and the card itself.

Whatever a strategy got from the model, the card is made here: focus places from the files
the model saw, the verdict's reason and pointers from facts, follow-ups, every cited name
held to the PR (grounding), provenance, coverage and timing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from prsum import i18n, prompts
from prsum.budget import SALIENCE, salience_order
from prsum.cards.explain import RuleLog
from prsum.cards.packing import Packed, Usage
from prsum.digest import hunks, relevance, title_words
from prsum.filekinds import file_kind
from prsum.grounding import Evidence, ground_text
from prsum.i18n import PHRASES
from prsum.llm import Backend
from prsum.profiles import PromptStyle
from prsum.rubric import reading_minutes
from prsum.types import (
    Assertion,
    Card,
    CardBody,
    Commit,
    Coverage,
    Echo,
    Facts,
    FileDiff,
    Focus,
    Language,
    Leftover,
    LineEdit,
    LockChange,
    Precedent,
    Provenance,
    PullRequest,
    SettingChange,
    SettingKind,
    Timing,
    Verdict,
)

FOCUS_PLACES: dict[Verdict, int] = {"deep": 2, "skim": 1, "skip": 0}
# A test's own name (its last part, after a class): `test_parse`, `TestParse`, `testParse`,
# `parse_test`, `ParseTest`, `ParseSpec`; not `testdata` or `tester`.
_TEST_NAME = re.compile(r"(^|[.:])(test_|Test[A-Z_]|test[A-Z])\w*$|(_test|Test|Tests|Spec)$")
# A card with no focus (a skip) still names the files of a PR this small.
_NAMED_FILES = 3
_EDIT_FILES = 2  # files whose in-place edits a summary quotes
_EDITS_SHOWN = 2  # edits it quotes in all
_SETTINGS_SHOWN = 4  # settings it tells, of all configuration files
_SETTINGS_FILES = 2
_SPREAD_FILES = 3  # files a setting's change must be made alike in to be told once for all
_MAX_KEY = 80  # characters of a key path told (a `cfg(…)` table name is longer)
_SETTING_RANK = {
    "moved": 0,
    "item_moved": 0,
    "changed": 0,
    "edited": 0,
    "removed": 1,
    "item_removed": 1,
    "added": 2,
    "item_added": 2,
}
_REACHES_TOLD = 2  # changed definitions whose users beyond the PR it names
_USERS_NAMED = 3  # files named a definition, the rest counted
_LOCKS_SHOWN = 4  # packages whose pins it tells, of all lock files
_LOCKS_LISTED = 6  # packages a lock file changes at most, for any of them to be named unasked
_IDENTIFIER = re.compile(r"[A-Za-z_]\w{3,}")  # names of four characters or more
# A title's words that every check has (`assert`, `expect`): they make no check about the PR.
_CHECK_WORDS = frozenset({"assert", "assertion", "assertions", "expect", "equal", "equals"})


@dataclass(frozen=True)
class CardInput:
    """Everything a strategy writes one card from."""

    pr: PullRequest
    facts: Facts
    diffs: tuple[FileDiff, ...]
    commits: tuple[Commit, ...]
    extra: list[str]  # context lines for the prompt: own commits, PR metadata, related PRs
    evidence: Evidence
    packed: Packed
    usage: Usage
    lang: Language
    log: RuleLog  # what the rules refuse, drop or repair while this card is written

    @functools.cached_property
    def spread(self) -> list[Spread]:
        """The setting changes the PR makes alike in several files, told once for all."""
        return spread_settings(self.facts.settings, self.diffs, self.pr)

    @functools.cached_property
    def shown_edits(self) -> list[LineEdit]:
        """The edits the summary quotes, less those that show a change told for all the files
        it is made in."""
        edits = [e for e in self.facts.edits if not any(s.shows(e) for s in self.spread)]
        return quoted_edits(edits, [item.path for item in self.places], self.pr.title)

    @functools.cached_property
    def settings_quotes(self) -> list[str]:
        """The sentences that tell what the configuration sets, less what the quoted edits
        show: values read from the files, quoted as they are (a nav's `env.md` is no bare name
        of `docs/env.md` for grounding to complete). A change made alike in several files is
        told once, first."""
        shown = self.shown_edits
        settings = [
            c
            for c in self.facts.settings
            if not any(edit_shows(c, e) for e in shown) and not any(s.holds(c) for s in self.spread)
        ]
        spread = [i18n.spread_sentence(s.change, s.order, self.lang) for s in self.spread]
        return spread + settings_sentences(settings, self.pr, self.lang, len(spread))

    @functools.cached_property
    def places(self) -> list[Focus]:
        """Where facts say to read first (source and test files the model saw)."""
        return focus_places(self.pr, self.packed, self.lang)


def focus_places(pr: PullRequest, packed: Packed, lang: Language) -> list[Focus]:
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
        if file_kind(change.path) == "test":
            # In tests only the tests themselves are places to read: a callback inside one
            # (a stream's `start`) was judged false as "the place to read".
            digest = replace(
                digest,
                added=tuple(filter(_TEST_NAME.search, digest.added)),
                changed=tuple(filter(_TEST_NAME.search, digest.changed)),
                renamed=tuple(pair for pair in digest.renamed if _TEST_NAME.search(pair[1])),
            )
        symbol = max(digest.names, key=lambda name: relevance(words, "", (name,)), default=None)
        places.append(Focus(change.path, i18n.focus_reason(digest, change, lang), symbol))
    return places


def facts_summary(card: CardInput, verdict: Verdict, focus: Sequence[Focus], said: str = "") -> str:
    """Why the verdict (facts), what the change does (the model's sentence, if any; else the
    description's account and the code quoted), where to start (facts)."""
    lang, pr, words = card.lang, card.pr, PHRASES[card.lang]
    files = [change.path for change in salience_order(pr.files)]
    sentences = [i18n.verdict_sentence(verdict, card.facts, lang)]
    if card.facts.whitespace_only:
        sentences.append(words.whitespace_only)
    if said:
        end = "" if said.endswith(("。", ".", "！", "!")) else ("。" if lang == "zh" else ".")
        sentences.append(said + end)
    else:
        if quote := account_quote(card):
            sentences.append(quote)
        shown = card.shown_edits
        sentences.extend(edits_sentences(shown, lang))
        sentences.extend(card.settings_quotes)
        sentences.extend(lock_sentences(card.facts.locks, pr.title, lang))
        sentences.extend(echo_sentences(card.facts.echoes, shown, lang))
        if check := pinned_check(card):
            sentences.append(i18n.assertion_sentence(check, lang))
    if reaches := card.facts.reach[:_REACHES_TOLD]:
        sentences.append(i18n.reach_sentence(reaches, _USERS_NAMED, lang))
    if pr.reverts:
        sentences.append(words.undoes.format(label=pr.reverts))
    if quote := release_quote(card):
        sentences.append(quote)
    if quote := origin_quote(card):
        sentences.append(quote)
    unsaid = [item for item in focus if item.path not in said and (item.symbol or "\0") not in said]
    if unsaid:
        sentences.append(i18n.pointer_sentence(unsaid, lang))
    elif not focus and 0 < len(files) <= _NAMED_FILES:
        sentences.append(i18n.files_sentence(files, lang))
    return words.sentence_joiner.join(sentences)


def account_quote(card: CardInput) -> str:
    """The sentence that quotes what the description says beyond the title, or ""."""
    return i18n.account_sentence(card.facts.account, card.lang) if card.facts.account else ""


def origin_quote(card: CardInput) -> str:
    """The sentence that names the earlier PR whose lines this one removes, or "" (also where
    it is the change a release's sentence names: once is enough)."""
    origin, release = card.facts.origin, card.facts.release
    if origin is None or (release is not None and release.label == origin.label):
        return ""
    return i18n.origin_sentence(origin, card.lang)


def release_quote(card: CardInput) -> str:
    """The sentence that says what a release ships, or ""."""
    release = card.facts.release
    return i18n.release_sentence(release, card.lang) if release else ""


def quoted_edits(edits: Sequence[LineEdit], first: Sequence[str], title: str) -> list[LineEdit]:
    """The edits a summary quotes: a few of at most two files, the files read first (`first`,
    then the diff's order), in each those about what the title says first (a true but
    incidental edit was the one quoted where the title's was further down)."""
    by_path: dict[str, list[LineEdit]] = {}
    for edit in edits:
        by_path.setdefault(edit.path, []).append(edit)
    rank = {path: index for index, path in enumerate(first)}
    paths = sorted(by_path, key=lambda path: rank.get(path, len(rank)))[:_EDIT_FILES]
    words = title_words(title)
    shown: list[LineEdit] = []
    for path in paths:
        ranked = sorted(by_path[path], key=lambda e: -relevance(words, "", (e.before, e.after)))
        shown.extend(ranked[: _EDITS_SHOWN - len(shown)])
    return shown


def edits_sentences(edits: Sequence[LineEdit], lang: Language) -> list[str]:
    """The quoted edits in the card's words, a sentence a file."""
    by_path: dict[str, list[LineEdit]] = {}
    for edit in edits:
        by_path.setdefault(edit.path, []).append(edit)
    return [i18n.edits_sentence(path, shown, lang) for path, shown in by_path.items()]


def edit_shows(change: SettingChange, edit: LineEdit) -> bool:
    """Whether a quoted edit already shows a setting's change: `edition = "2021"` becoming
    `edition = "2024"` shows `package.edition` changed from `2021` to `2024`; an item added to
    a list, the line that holds it added. Values and keys are matched as whole words (`1` is
    not in `n: 10`)."""
    if edit.path != change.path or change.kind in ("moved", "item_moved"):
        return False  # an edit quotes a line; a move is two
    name = change.key.rpartition(".")[2]
    if change.kind in ("changed", "edited"):
        named = change.kind == "edited" or _holds(edit.after, name)  # an edited line names none
        return bool(change.before and change.after) and (
            _holds(edit.before, change.before) and _holds(edit.after, change.after) and named
        )
    if change.kind in ("added", "item_added"):
        shown = _holds(edit.after, change.after) and not _holds(edit.before, change.after)
        return shown and (change.kind == "item_added" or _holds(edit.after, name))
    shown = _holds(edit.before, change.before) and not _holds(edit.after, change.before)
    return shown and (change.kind == "item_removed" or _holds(edit.before, name))


def _holds(text: str, word: str) -> bool:
    """Whether `text` has `word` with no letter, digit, `_`, `-` or `.` joined to either end."""
    return bool(word) and re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])", text) is not None


@dataclass(frozen=True)
class Spread:
    """One change of a setting that a PR makes alike in several files (an image's tag in every
    workflow): `change` as the first of them makes it, `paths` all of them, in the diff's
    order."""

    change: SettingChange
    paths: frozenset[str]
    order: tuple[str, ...]  # `paths` in the diff's order

    def holds(self, change: SettingChange) -> bool:
        """Whether `change` is this change, in one of its files."""
        return change.path in self.paths and _said(change) == _said(self.change)

    def shows(self, edit: LineEdit) -> bool:
        """Whether a quoted edit shows this change in one of its files."""
        return edit.path in self.paths and edit_shows(replace(self.change, path=edit.path), edit)


def spread_settings(
    settings: Sequence[SettingChange], diffs: Sequence[FileDiff], pr: PullRequest
) -> list[Spread]:
    """The changes made alike (key, kind, values) in at least `_SPREAD_FILES` files the PR
    changes (not adds: a new file's settings are all "set"), counting a file whose patch
    shows the change where its settings could not be read (JSON with comments): a reader
    learns more from "in 9 files" than from the same change quoted in two of them. What a
    reader must unlearn first, and room left for each file's own settings."""
    changed = {change.path for change in pr.files if change.status != "A"}
    by_change: dict[tuple[str, SettingKind, str, str], set[str]] = {}
    for change in settings:
        if change.path in changed and len(change.key) <= _MAX_KEY:
            by_change.setdefault(_said(change), set()).add(change.path)
    spread = [said for said, paths in by_change.items() if len(paths) >= _SPREAD_FILES]
    spread.sort(key=lambda said: _SETTING_RANK[said[1]])
    order = {change.path: index for index, change in enumerate(pr.files)}
    found = []
    for said in spread[: _SETTINGS_SHOWN - _SETTINGS_FILES]:
        paths = by_change[said]
        change = SettingChange(min(paths, key=order.__getitem__), *said)
        paths |= {d.path for d in diffs if d.path in changed and _patch_shows(d.patch, change)}
        found.append(Spread(change, frozenset(paths), tuple(sorted(paths, key=order.__getitem__))))
    return found


def _said(change: SettingChange) -> tuple[str, SettingKind, str, str]:
    """What a setting's change says, whatever file it is made in."""
    return change.key, change.kind, change.before, change.after


def _patch_shows(patch: str, change: SettingChange) -> bool:
    """Whether a patch's lines show a setting's change: a line removed that holds its name
    and old value, one added that holds its name and new value (only the values, of a list's
    item)."""
    name = change.key.rpartition(".")[2]
    named = change.kind not in ("item_added", "item_removed")
    lines = [line for hunk in hunks(patch) for line in hunk]
    removed = [line[1:] for line in lines if line.startswith("-")]
    added = [line[1:] for line in lines if line.startswith("+")]

    def shown(lines: list[str], value: str) -> bool:
        return not value or any(
            _holds(line, value) and (not named or _holds(line, name)) for line in lines
        )

    return (
        change.kind not in ("moved", "item_moved")
        and shown(removed, change.before)
        and shown(added, change.after)
    )


def settings_sentences(
    settings: Sequence[SettingChange], pr: PullRequest, lang: Language, told: int = 0
) -> list[str]:
    """What the configuration files set, a sentence a file: the first few settings of at most
    two files (the files in the order a reader reads them) and how many more each changes;
    `told`: settings already told (of the budget's `_SETTINGS_SHOWN`)."""
    by_path: dict[str, list[SettingChange]] = {}
    for change in settings:
        by_path.setdefault(change.path, []).append(change)
    added = {change.path for change in pr.files if change.status == "A"}
    order = {change.path: index for index, change in enumerate(salience_order(pr.files))}
    sentences = []
    left = _SETTINGS_SHOWN - told
    paths = sorted(by_path, key=order.__getitem__)[:_SETTINGS_FILES]
    for index, path in enumerate(paths):
        # Each file told gets a setting at least: a card that names two files' settings and
        # tells only the first's hid the other's removal behind "Files: …".
        allowed = left - (len(paths) - index - 1)
        # What it changes or removes first: that is what a reader of the old file must unlearn.
        # The same change made under several keys (a value in every job) is told once.
        ranked = sorted(by_path[path], key=lambda change: _SETTING_RANK[change.kind])
        seen: set[tuple[str, str, str, str]] = set()
        shown: list[SettingChange] = []
        for change in ranked:
            said = (change.kind, change.key.rpartition(".")[2], change.before, change.after)
            if len(change.key) <= _MAX_KEY and said not in seen and len(shown) < allowed:
                seen.add(said)
                shown.append(change)
        if not shown:
            continue
        left -= len(shown)
        more = len(by_path[path]) - len(shown)
        sentences.append(i18n.settings_sentence(path, shown, more, path in added, lang))
    return sentences


def lock_sentences(locks: Sequence[LockChange], title: str, lang: Language) -> list[str]:
    """What the lock files change, a sentence a file: a few packages, those the title names
    first, and how many more. Of a lock file refreshed wholesale, only those the title names:
    a few names out of dozens would be the alphabet's choice, not the change's."""
    lowered = title.lower()
    by_path: dict[str, list[LockChange]] = {}
    for change in locks:
        by_path.setdefault(change.path, []).append(change)
    sentences = []
    left = _LOCKS_SHOWN
    for path, changes in by_path.items():
        named = [change for change in changes if change.name.lower() in lowered]
        if len(changes) <= _LOCKS_LISTED:
            named += [change for change in changes if change not in named]
        shown = named[:left]
        left -= len(shown)
        sentences.append(i18n.lock_sentence(path, shown, len(changes) - len(shown), lang))
    return sentences


def echo_sentences(echoes: Sequence[Echo], shown: Sequence[LineEdit], lang: Language) -> list[str]:
    """What the repository says of the quoted edits: the first precedent and the first
    leftover of an edit the summary quotes."""
    sentences = []
    for kind in (Precedent, Leftover):
        echo = next((e for e in echoes if isinstance(e, kind) and e.edit in shown), None)
        if echo is not None:
            sentences.append(i18n.echo_sentence(echo, lang))
    return sentences


def pinned_check(card: CardInput) -> Assertion | None:
    """The check the tests add that is most about this PR: one citing the most definitions
    its source changes (two each) and words of its title; None when none cites any (an
    incidental check, `expect(res.status).toBe(200)`, pins nothing a reader asked about)."""
    changed = {
        name.split(".")[-1].split("::")[-1]
        for path, digest in card.packed.digests.items()
        if file_kind(path) == "source"
        for name in digest.names
    }
    words = title_words(card.pr.title) - _CHECK_WORDS

    def score(check: Assertion) -> float:
        cited = set(_IDENTIFIER.findall(check.line))
        return 2 * len(cited & changed) + relevance(words, "", (check.line,))

    best = max(card.facts.assertions, key=score, default=None)  # the first of equals
    return best if best is not None and score(best) > 0 else None


def facts_headline(card: CardInput) -> str:
    """A headline from the title's convention and the category."""
    return i18n.fallback_headline(card.pr, card.facts, card.lang)


def facts_body(card: CardInput, verdict: Verdict, headline: str, said: str = "") -> CardBody:
    """A card body of facts, around what the model wrote (a headline, a sentence)."""
    focus = tuple(card.places[: FOCUS_PLACES[verdict]])
    return CardBody(
        headline=headline,
        verdict=verdict,
        minutes=reading_minutes(verdict, card.facts),
        summary=facts_summary(card, verdict, focus, said),
        focus=focus,
        lessons=(),
        follow_ups=tuple(i18n.follow_ups(card.pr, card.facts, card.lang)),
    )


def grounded(
    body: CardBody, evidence: Evidence, log: RuleLog, verbatim: Sequence[str] = ()
) -> CardBody:
    """The body with every name the PR does not contain repaired or removed, and counted; the
    `verbatim` sentences (quotes) as they are."""
    removed = 0

    def grounder(field: str) -> Callable[[str], str]:
        def ground(text: str) -> str:
            nonlocal removed
            fixed, count = ground_text(
                text,
                evidence,
                lambda rule, name: log.record(f"grounding.{rule}", field, name),
                verbatim,
            )
            removed += count
            return fixed

        return ground

    focus_why = grounder("focus")
    return replace(
        body,
        headline=grounder("headline")(body.headline),
        summary=grounder("summary")(body.summary),
        focus=tuple(Focus(item.path, focus_why(item.why), item.symbol) for item in body.focus),
        lessons=tuple(text for text in map(grounder("lessons"), body.lessons) if text),
        follow_ups=tuple(text for text in map(grounder("follow_ups"), body.follow_ups) if text),
        ungrounded_removed=removed,
    )


def provenance(pr: PullRequest, commits: Sequence[Commit], extra: list[str]) -> Provenance:
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


def assemble(
    card: CardInput,
    body: CardBody,
    backend: Backend,
    style: PromptStyle,
    strategy: str,
    prompt_tokens: int,
) -> Card:
    """The card: the body grounded in the PR, with coverage, model, timing and provenance."""
    packed, usage = card.packed, card.usage
    # The description's account, the earlier PRs' titles and the files' settings are quoted
    # as they are.
    body = grounded(
        body,
        card.evidence,
        card.log,
        [account_quote(card), origin_quote(card), release_quote(card), *card.settings_quotes],
    )
    return Card(
        pr=card.pr,
        facts=card.facts,
        body=replace(body, dropped=tuple(card.log.events)),
        coverage=Coverage(
            files_total=len(card.pr.files),
            files_whole=packed.coverage_whole,
            files_clipped=packed.coverage_clipped,
            files_left_out=packed.left_out,
            prompt_tokens=prompt_tokens,
            context_size=backend.context_size,
            view=style,
            files_unparsed=packed.files_unparsed,
        ),
        model=replace(backend.info, strategy=strategy),
        timing=Timing(
            prompt_tokens=usage.prompt_tokens,
            prompt_tokens_evaluated=usage.evaluated,
            completion_tokens=usage.completion,
            seconds=round(usage.seconds, 3),
            prompt_tokens_sent=usage.sent,
            prompt_seconds=round(usage.prompt_seconds, 3),
        ),
        lang=card.lang,
        provenance=provenance(card.pr, card.commits, card.extra),
    )
