"""Discovery without a model: the PRs of a range, their forge metadata, their diff sizes."""

from __future__ import annotations

from dataclasses import replace

from prsum.config import Settings
from prsum.history import History
from prsum.prmeta import load_pr_meta
from prsum.redact import redact_discovery
from prsum.types import Discovery, RangeQuery


def with_pr_meta(discovery: Discovery, settings: Settings) -> Discovery:
    """The discovery with forge metadata (`--pr-meta`) attached to the PRs it describes."""
    if settings.pr_meta is None:
        return discovery
    metas = load_pr_meta(settings.pr_meta)
    entries = tuple(
        replace(entry, meta=metas[entry.number]) if entry.number in metas else entry
        for entry in discovery.entries
    )
    return replace(discovery, entries=entries)


def prepared(discovery: Discovery, settings: Settings) -> Discovery:
    """What every command goes on from: forge metadata attached, then (unless --no-redact)
    every text masked, so that no output of any command can show a secret."""
    discovery = with_pr_meta(discovery, settings)
    return redact_discovery(discovery) if settings.redact else discovery


def list_prs(settings: Settings, query: RangeQuery, history: History | None = None) -> Discovery:
    """What landed on the first-parent line of the range, ready for any output. No model is loaded."""
    return prepared((history or History(settings.repo)).discover(query), settings)


def estimate_diff_tokens(settings: Settings, discovery: Discovery) -> dict[str, int]:
    """Each entry's diff size in tokens, estimated with tiktoken: no model is loaded for this."""
    from prsum.budget import TiktokenEstimator, compact_patch

    history = History(settings.repo)
    estimator = TiktokenEstimator()
    return {
        entry.sha: sum(
            estimator.count_tokens(compact_patch(diff.patch))
            for diff in history.diff(entry, definitions=False)
        )
        for entry in discovery.entries
    }
