"""How fast is PR discovery? `prsum list` over a whole history against plain `git log`.

Runs the two commands alternately (A B A B …) after a warm-up and prints each one's median
wall time, the median of the pairwise ratios, and prsum's peak memory. The baseline is
`git log --first-parent --numstat`, the least git itself needs to walk the same line.

    python bench/history.py                 # the click history from ../shared/fixtures
    python bench/history.py --repo PATH     # any clone
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fixture_clone, median, run_once


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repo", type=Path, help="a git clone (default: click from ../shared/fixtures)"
    )
    parser.add_argument("--rev", default="HEAD", help="the history to walk (default: HEAD)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = args.repo or fixture_clone("click", Path(scratch))
        prsum = [
            sys.executable,
            "-m",
            "prsum",
            "list",
            args.rev,
            "--repo",
            str(repo),
            "--format",
            "json",
        ]
        git = ["git", "-C", str(repo), "log", "--first-parent", "--numstat", args.rev]
        run_once(prsum), run_once(git)  # warm-up: page cache, .pyc files
        prsum_runs, git_runs = [], []
        for _ in range(args.runs):
            prsum_runs.append(run_once(prsum))
            git_runs.append(run_once(git))
    ratios = [p.seconds / g.seconds for p, g in zip(prsum_runs, git_runs, strict=True)]
    print(f"{'command':<48} {'median s':>9} {'peak MB':>8}")
    print(
        f"{'prsum list --format json':<48} {median([r.seconds for r in prsum_runs]):>9.3f} {max(r.max_rss_mb for r in prsum_runs):>8.1f}"
    )
    print(
        f"{'git log --first-parent --numstat':<48} {median([r.seconds for r in git_runs]):>9.3f} {max(r.max_rss_mb for r in git_runs):>8.1f}"
    )
    print(f"ratio prsum/git (median of {args.runs} pairs): {median(ratios):.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
