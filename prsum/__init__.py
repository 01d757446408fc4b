"""prsum: offline pull-request summaries from a local git clone and a local GGUF model.

The library never prints and never exits; `prsum.cli` is the command line over it. Names are
imported on first use, so `prsum list` does not pay for the model-side modules.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Card": "prsum.types",
    "CardFailure": "prsum.types",
    "Discovery": "prsum.types",
    "PullRequest": "prsum.types",
    "RangeQuery": "prsum.types",
    "RangeReport": "prsum.types",
    "PrsumError": "prsum.errors",
    "Settings": "prsum.config",
    "resolve_settings": "prsum.config",
    "Summarizer": "prsum.pipeline",
    "list_prs": "prsum.discovery",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'prsum' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
