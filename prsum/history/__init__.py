"""Reading merged PRs out of a local git clone."""

from prsum.history.messages import authors_of, classify
from prsum.history.reader import History, matches_paths

__all__ = ["History", "authors_of", "classify", "matches_paths"]
