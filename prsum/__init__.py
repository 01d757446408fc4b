"""prsum: offline pull-request summaries from a local git clone and a local GGUF model.

The library never prints and never exits; `prsum.cli` is the command line over it.
"""

from prsum.config import Settings, resolve_settings
from prsum.errors import PrsumError
from prsum.pipeline import Summarizer, list_prs
from prsum.types import Card, CardFailure, Discovery, PullRequest, RangeReport

__version__ = "0.1.0"
__all__ = [
    "Card",
    "CardFailure",
    "Discovery",
    "PrsumError",
    "PullRequest",
    "RangeReport",
    "Settings",
    "Summarizer",
    "list_prs",
    "resolve_settings",
]
