"""Turn result objects into text: JSON, JSON lines and Markdown here; the terminal in .terminal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from prsum.i18n import PHRASES
from prsum.render.inert import json_dumps, md_code, md_inline, md_prose
from prsum.types import Card, Discovery, Echo, OtherCommit, Precedent, PullRequest, RangeReport

CARD_SCHEMA = "prsum.card/1"
RANGE_SCHEMA = "prsum.range/1"
LIST_SCHEMA = "prsum.list/1"


def pr_to_dict(pr: PullRequest) -> dict[str, Any]:
    return {
        "number": pr.number,
        "kind": pr.kind,
        "sha": pr.sha,
        "title": pr.title,
        "authors": list(pr.authors),
        "merged_at": pr.merged_at,
        "files": [
            {"path": f.path, "status": f.status, "added": f.added, "deleted": f.deleted}
            for f in pr.files
        ],
        "trailers": [{"key": key, "value": value} for key, value in pr.trailers],
        "reverts": pr.reverts,
        "cherry_picked_from": pr.cherry_picked_from,
        "related": [{"relation": r.relation, "pr": r.label, "name": r.name} for r in pr.related],
        "labels": list(pr.meta.labels) if pr.meta else [],
    }


def echo_to_dict(echo: Echo) -> dict[str, Any]:
    """A precedent or a leftover of a quoted edit, with its kind."""
    fields = {**vars(echo), "edit": vars(echo.edit)}
    return {"kind": "precedent" if isinstance(echo, Precedent) else "leftover", **fields}


def card_to_dict(card: Card) -> dict[str, Any]:
    """A card as CARDS.md's JSON (`prsum.card/1`)."""
    facts, body, coverage = card.facts, card.body, card.coverage
    return {
        "schema": CARD_SCHEMA,
        "lang": card.lang,
        "pr": pr_to_dict(card.pr),
        "facts": {
            "category": facts.category,
            "breaking": {"value": facts.breaking.is_breaking, "why": facts.breaking.why},
            "tests_touched": facts.tests_touched,
            "docs_only": facts.docs_only,
            "whitespace_only": facts.whitespace_only,
            "generated_or_vendored": list(facts.generated_or_vendored),
            "todos_added": list(facts.todos_added),
            "new_options": list(facts.new_options),
            "edits": [vars(edit) for edit in facts.edits],
            "assertions": [vars(check) for check in facts.assertions],
            "echoes": [echo_to_dict(echo) for echo in facts.echoes],
            "reach": [{**vars(reach), "users": list(reach.users)} for reach in facts.reach],
            "account": facts.account,
            "origin": facts.origin and vars(facts.origin),
            "locks": [vars(change) for change in facts.locks],
            "settings": [vars(change) for change in facts.settings],
            "release": facts.release
            and {**vars(facts.release), "largest": [vars(item) for item in facts.release.largest]},
            "size": {
                "files": facts.files_changed,
                "added": facts.lines_added,
                "deleted": facts.lines_deleted,
                "source_lines": facts.source_lines_changed,
            },
        },
        "card": {
            "headline": body.headline,
            "verdict": body.verdict,
            "minutes": body.minutes,
            "summary": body.summary,
            "focus": [{"path": f.path, "symbol": f.symbol, "why": f.why} for f in body.focus],
            "lessons": list(body.lessons),
            "follow_ups": list(body.follow_ups),
            "ungrounded_removed": body.ungrounded_removed,
            "headline_by_model": body.headline_by_model,
            "by_model": list(body.by_model),
            "dropped": [vars(event) for event in body.dropped],
        },
        "coverage": {
            "view": coverage.view,
            "files_total": coverage.files_total,
            "files_whole": list(coverage.files_whole),
            "files_clipped": list(coverage.files_clipped),
            "files_unparsed": list(coverage.files_unparsed),
            "files_left_out": [
                {"path": item.path, "reason": item.reason} for item in coverage.files_left_out
            ],
            "prompt_tokens": coverage.prompt_tokens,
            "context_size": coverage.context_size,
        },
        "model": {
            "file": card.model.file,
            "sha256": card.model.sha256,
            "backend": card.model.backend,
            "server": card.model.server,
            "strategy": card.model.strategy,
            "adapter": card.model.adapter,
            "adapter_sha256": card.model.adapter_sha256,
        },
        "provenance": {
            "sources": list(card.provenance.sources),
            "commits_read": card.provenance.commits_read,
            "labels": list(card.provenance.labels),
            "reviewers": list(card.provenance.reviewers),
            "pr_body": card.provenance.pr_body,
        },
        "timing": {
            "prompt_tokens": card.timing.prompt_tokens,
            "prompt_tokens_evaluated": card.timing.prompt_tokens_evaluated,
            "completion_tokens": card.timing.completion_tokens,
            "seconds": card.timing.seconds,
            "cached": card.timing.cached,
            "prompt_tokens_sent": card.timing.prompt_tokens_sent,
            "prompt_seconds": card.timing.prompt_seconds,
        },
    }


def _other_to_dict(commit: OtherCommit) -> dict[str, str]:
    return {
        "sha": commit.sha,
        "subject": commit.subject,
        "author": commit.author,
        "date": commit.date,
    }


def _skipped(discovery: Discovery) -> dict[str, Any]:
    return {
        "bot_commits": [_other_to_dict(c) for c in discovery.bot_commits],
        "sync_merges": [_other_to_dict(c) for c in discovery.sync_merges],
    }


def report_to_json(report: RangeReport) -> str:
    document = {
        "schema": RANGE_SCHEMA,
        "range": report.discovery.range_spec,
        "complete": not report.interrupted,
        "cards": [card_to_dict(card) for card in report.cards],
        "failures": [
            {"sha": f.pr.sha, "number": f.pr.number, "message": f.message} for f in report.failures
        ],
        "skipped": _skipped(report.discovery),
    }
    return json_dumps(document, indent=2) + "\n"


def cards_to_jsonl(cards: Sequence[Card]) -> str:
    return "".join(json_dumps(card_to_dict(card)) + "\n" for card in cards)


def discovery_to_json(
    discovery: Discovery, token_estimates: Mapping[str, int] | None = None
) -> str:
    """The list document: PRs, direct commits (bots' marked), branch syncs."""

    def entry(pr: PullRequest) -> dict[str, Any]:
        data = pr_to_dict(pr)
        if token_estimates is not None:
            data["diff_tokens_estimate"] = token_estimates[pr.sha]
        return data

    direct = [{**entry(pr), "bot": is_bot_commit(pr)} for pr in discovery.direct_commits]
    direct += [{**_other_to_dict(commit), "bot": True} for commit in discovery.bot_commits]
    document = {
        "schema": LIST_SCHEMA,
        "range": discovery.range_spec,
        "prs": [entry(pr) for pr in discovery.prs],
        "direct_commits": direct,
        "sync_merges": [_other_to_dict(commit) for commit in discovery.sync_merges],
    }
    # Compact: a whole history can be thousands of entries, and the C encoder needs no indent.
    return json_dumps(document) + "\n"


def is_bot_commit(pr: PullRequest) -> bool:
    return bool(pr.authors) and pr.authors[0].endswith("[bot]")


def sub_line(card: Card) -> str:
    """`#N · sha · authors · N files · +a −d`, the card's identity line."""
    pr = card.pr
    parts = [f"#{pr.number}"] if pr.number is not None else []
    noun = "file" if len(pr.files) == 1 else "files"
    parts += [
        pr.sha[:7],
        ", ".join(pr.authors),
        f"{len(pr.files)} {noun}",
        f"+{pr.added} −{pr.deleted}",
    ]
    return " · ".join(parts)


def verdict_opening(card: Card) -> str:
    """`值得精读（约 20 分钟）` / `Worth reading closely (about 20 minutes)`."""
    words = PHRASES[card.lang]
    phrase = words.verdicts[card.body.verdict]
    if card.body.verdict == "skip":
        return phrase
    return words.minutes.format(phrase=phrase, minutes=card.body.minutes)


def coverage_line(card: Card) -> str:
    """What the model saw, in one line: files whole, clipped, left out (top reasons), tokens."""
    coverage, words = card.coverage, PHRASES[card.lang]
    reasons = Counter(_reason_group(item.reason) for item in coverage.files_left_out)
    why = words.clause_separator.join(
        words.left_out_reason.format(reason=reason, count=count)
        for reason, count in reasons.most_common(3)
    )
    left = words.left_out.format(count=len(coverage.files_left_out))
    if why:
        left += words.left_out_reasons.format(reasons=why)
    return words.coverage.format(
        total=coverage.files_total,
        whole=len(coverage.files_whole),
        clipped=len(coverage.files_clipped),
        left=left,
        prompt=f"{coverage.prompt_tokens:,}",
        context=f"{coverage.context_size:,}",
        view=words.views[coverage.view],
    )


def _reason_group(reason: str) -> str:
    """A left-out reason without its particulars, for counting: `compressed: one line for 60 docs files` -> `compressed`."""
    return reason.split(":")[0].split(" (")[0]


def card_to_markdown(card: Card) -> str:
    """One card in CARDS.md's layout, then its focus, lessons and follow-ups as a list.

    Text from the history is escaped and the model's prose made inert (prsum.render.inert):
    neither can add HTML, links or escape sequences to the page."""
    words = PHRASES[card.lang]
    colon = words.colon
    lines = [
        f"### {md_prose(card.body.headline, single_line=True)}",
        f"<sub>{md_inline(sub_line(card))}</sub>",
        "",
        f"{verdict_opening(card)}{colon}{md_prose(card.body.summary)}",
    ]
    extras = [
        f"- {words.read_first}{colon}{md_code(f.path)}"
        + (f" · {md_code(f.symbol)}" if f.symbol else "")
        + f" — {md_prose(f.why)}"
        for f in card.body.focus
    ]
    extras += [f"- {words.lesson}{colon}{md_prose(text)}" for text in card.body.lessons]
    extras += [f"- {words.follow_up}{colon}{md_prose(text)}" for text in card.body.follow_ups]
    if extras:
        lines += ["", *extras]
    lines += ["", f"<sub>{md_inline(coverage_line(card))}</sub>"]
    return "\n".join(lines) + "\n"


def report_to_markdown(report: RangeReport) -> str:
    """All cards, newest first, then what was not carded: failures, bot commits, branch syncs."""
    words = PHRASES[report.lang]
    discovery = report.discovery
    parts = [f"## prsum · {discovery.range_spec}\n"]
    parts += [card_to_markdown(card) for card in report.cards]
    notes = [words.interrupted] if report.interrupted else []
    notes += [
        words.failure.format(label=failure.pr.label, message=md_inline(failure.message))
        for failure in report.failures
    ]
    if discovery.bot_commits:
        notes.append(words.bots_skipped.format(count=len(discovery.bot_commits)))
    notes += [
        words.branch_sync.format(sha=sync.sha[:7], subject=md_inline(sync.subject))
        for sync in discovery.sync_merges
    ]
    if notes:
        parts.append("---\n" + "\n".join(f"- {note}" for note in notes) + "\n")
    return "\n".join(parts)


def discovery_to_markdown(
    discovery: Discovery, token_estimates: Mapping[str, int] | None = None
) -> str:
    estimated = token_estimates is not None
    lines = [
        f"## {discovery.range_spec}",
        "",
        "| PR | kind | sha | title | authors |" + (" tokens≈ |" if estimated else ""),
        "| --- | --- | --- | --- | --- |" + (" --- |" if estimated else ""),
    ]
    for entry in discovery.entries:
        number = entry.label if entry.number is not None else "—"
        tokens = f" {token_estimates[entry.sha]} |" if token_estimates is not None else ""
        lines.append(
            f"| {number} | {entry.kind} | {entry.sha[:7]} | {md_inline(entry.title)} "
            f"| {md_inline(', '.join(entry.authors))} |{tokens}"
        )
    lines += [
        "",
        f"{len(discovery.bot_commits)} bot commits skipped, {len(discovery.sync_merges)} branch syncs.",
    ]
    for sync in discovery.sync_merges:
        lines.append(f"- sync {sync.sha[:7]}: {md_inline(sync.subject)}")
    return "\n".join(lines) + "\n"
