"""The one way tests run prsum's pipeline on a real repository with a scripted model."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from prsum.config import resolve_settings
from prsum.pipeline import Summarizer
from prsum.types import Card, CardFailure, RangeQuery
from tests.fakes import FakeBackend


def summarizer_for(
    repo: Path,
    model: FakeBackend | None = None,
    env: Mapping[str, str] | None = None,
    **flags: object,
) -> Summarizer:
    """A Summarizer on `repo` with the given settings (flags) and a scripted model (a fresh
    FakeBackend unless one is given); `env` stands in for the environment."""
    settings = resolve_settings({"repo": str(repo), **flags}, env=dict(env or {}))
    return Summarizer(settings, backend=model if model is not None else FakeBackend())


def cards_for(
    repo: Path,
    spec: str = "v0..main",
    model: FakeBackend | None = None,
    **flags: object,
) -> list[Card | CardFailure]:
    """Every card (or failure) of a range, in range order."""
    summarizer = summarizer_for(repo, model, **flags)
    return list(summarizer.cards(summarizer.discover(RangeQuery(spec)).entries))
