"""Mask what looks like a credential before any model sees it; it then reaches no output either.

Applied in one place, to everything read from the history (prsum.discovery and
Summarizer.read): titles, messages, trailers, authors and emails, branch-sync and bot
subjects, forge metadata, commits and diffs. Every output (list, cards, notes, the cache) is
made from what is left.

Masked: private key blocks, common token formats (AWS, GitHub, GitLab, Slack, Google, Stripe,
JWT), `password=`/`secret=`/`token=`/`api_key=` assignments, and long high-entropy strings
in configuration files. `--no-redact` turns this off.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace

from prsum.filekinds import file_kind
from prsum.types import (
    Commit,
    Discovery,
    Echo,
    FileDiff,
    LockChange,
    Origin,
    OtherCommit,
    Precedent,
    PrMeta,
    PullRequest,
    Release,
    SettingChange,
)

MASK = "[REDACTED]"
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL
)
_TOKENS = re.compile(
    r"AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}"  # AWS access keys
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|[sr]k_(?:live|test)_[0-9A-Za-z]{20,}"  # Stripe
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"  # JWT
)
_ASSIGNMENT = re.compile(
    r"""(?P<key>\b[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[\w.-]*)"""
    r"""(?P<sep>["']?\s*[:=]\s*["']?)(?P<value>[^\s"',;]{4,})""",
    re.IGNORECASE,
)
_HIGH_ENTROPY = re.compile(r"[A-Za-z0-9+/=_-]{32,}")
_KEYWORDS = re.compile(
    r"passw|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential", re.IGNORECASE
)
# A value that only names where the secret comes from is not a secret.
_INDIRECT = re.compile(
    r"^(\$\{?|os\.environ|env\(|getenv|None|null|true|false|\*+$|<|\{\{|%\()", re.IGNORECASE
)


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(count / len(text) * math.log2(count / len(text)) for count in counts.values())


def redact_text(text: str, config: bool = False) -> str:
    """`text` with credential-like values replaced by [REDACTED]; high-entropy strings too in config files."""
    text = _PRIVATE_KEY.sub(MASK, text)
    text = _TOKENS.sub(MASK, text)

    def assignment(match: re.Match[str]) -> str:
        value = match.group("value")
        if _INDIRECT.match(value) or value == MASK:
            return match.group(0)
        return f"{match.group('key')}{match.group('sep')}{MASK}"

    # The assignment pattern is slow on long text: only lines naming a secret-ish key get it.
    if _KEYWORDS.search(text):
        text = "\n".join(
            _ASSIGNMENT.sub(assignment, line) if _KEYWORDS.search(line) else line
            for line in text.split("\n")
        )
    if config:
        text = _HIGH_ENTROPY.sub(lambda m: MASK if _entropy(m.group(0)) > 4.0 else m.group(0), text)
    return text


def redact_diff(diff: FileDiff) -> FileDiff:
    """The diff with its patch masked; what the parser found (names and counts) is kept."""
    return replace(diff, patch=redact_text(diff.patch, config=file_kind(diff.path) == "config"))


def redact_echo(echo: Echo) -> Echo:
    """The echo with the repository's line it quotes masked as its file's diff would be (its
    edit comes from the diff, already masked)."""
    if isinstance(echo, Precedent):
        return replace(
            echo, line=redact_text(echo.line, config=file_kind(echo.edit.path) == "config")
        )
    return echo


def redact_origin(origin: Origin | None) -> Origin | None:
    """The origin with the earlier PR's title masked as this PR's would be."""
    return origin and replace(origin, title=redact_text(origin.title))


def redact_release(release: Release | None) -> Release | None:
    """What a release ships, with every title masked as this PR's would be."""
    if release is None:
        return None
    shipped = tuple(replace(item, title=redact_text(item.title)) for item in release.largest)
    return replace(release, title=redact_text(release.title), largest=shipped)


def redact_lock(change: LockChange) -> LockChange:
    """A lock file's package change with its name and versions masked (a version may be a
    URL that carries a token)."""
    return replace(
        change,
        name=redact_text(change.name),
        before=redact_text(change.before),
        after=redact_text(change.after),
    )


def redact_setting(change: SettingChange) -> SettingChange:
    """A configuration setting with its key path masked as text, and each value masked whole
    where it would be read beside its key as a configuration line (`password: hunter2`)."""
    name = change.key.rpartition(".")[2]

    def masked(value: str) -> str:
        line = f"{name}: {value}"
        return value if not value or redact_text(line, config=True) == line else MASK

    return replace(
        change,
        key=redact_text(change.key),
        before=masked(change.before),
        after=masked(change.after),
    )


def _redact_all(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(redact_text(text) for text in texts)


def redact_pr(pr: PullRequest) -> PullRequest:
    meta = pr.meta
    if meta is not None:
        meta = PrMeta(
            meta.source,
            redact_text(meta.body),
            _redact_all(meta.labels),
            redact_text(meta.author) if meta.author is not None else None,
            _redact_all(meta.reviewers),
            _redact_all(meta.review_comments),
        )
    return replace(
        pr,
        title=redact_text(pr.title),
        message=redact_text(pr.message),
        authors=_redact_all(pr.authors),
        author_emails=_redact_all(pr.author_emails),
        trailers=tuple((key, redact_text(value)) for key, value in pr.trailers),
        meta=meta,
    )


def redact_commit(commit: Commit) -> Commit:
    return replace(
        commit,
        message=redact_text(commit.message),
        author=redact_text(commit.author),
        email=redact_text(commit.email),
    )


def redact_other(commit: OtherCommit) -> OtherCommit:
    return replace(
        commit,
        subject=redact_text(commit.subject),
        author=redact_text(commit.author),
        brings=tuple(redact_pr(pr) for pr in commit.brings),
    )


def redact_discovery(discovery: Discovery) -> Discovery:
    """Every text of a discovery masked: its PRs, direct commits, bots' commits, branch syncs."""
    return replace(
        discovery,
        entries=tuple(redact_pr(entry) for entry in discovery.entries),
        bot_commits=tuple(redact_other(commit) for commit in discovery.bot_commits),
        sync_merges=tuple(redact_other(commit) for commit in discovery.sync_merges),
    )
