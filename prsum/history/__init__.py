"""Reading merged PRs out of a local git clone."""

from prsum.history.messages import classify, people_of
from prsum.history.reader import History, matches_paths

__all__ = ["History", "classify", "matches_paths", "people_of"]
