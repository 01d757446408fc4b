"""Discovery without a model: the PRs of a range, their forge metadata, their diff sizes."""

from __future__ import annotations

from dataclasses import replace

from prsum.config import Settings
from prsum.history import History
from prsum.prmeta import load_pr_meta
from prsum.redact import redact_pr
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


def list_prs(settings: Settings, query: RangeQuery) -> Discovery:
    """Discovery only: what landed on the first-parent line of the range. No model is loaded."""
    discovery = with_pr_meta(History(settings.repo).discover(query), settings)
    if not settings.redact:
        return discovery
    return replace(discovery, entries=tuple(redact_pr(entry) for entry in discovery.entries))


def estimate_diff_tokens(settings: Settings, discovery: Discovery) -> dict[str, int]:
    """Each entry's diff size in tokens, estimated with tiktoken: no model is loaded for this."""
    from prsum.budget import TiktokenEstimator, compact_patch

    history = History(settings.repo)
    estimator = TiktokenEstimator()
    return {
        entry.sha: sum(
            estimator.count_tokens(compact_patch(diff.patch)) for diff in history.diff(entry)
        )
        for entry in discovery.entries
    }
