"""The definitions each PR adds, removes, renames and changes, file by file, as prsum's digest
reads them (prsum.syntax and prsum.digest): for checking them by hand against the diff. With
--time, what reading them costs per PR instead (the blobs read, both versions parsed, lines
placed), against the git diff itself.

    python bench/definitions.py REPO SHA...
    python bench/definitions.py REPO --range A..B [--time]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from prsum.digest import digest_patch, with_definitions
from prsum.history import History
from prsum.types import FileDiff, PullRequest


def describe(pr: PullRequest, diffs: tuple[FileDiff, ...]) -> list[str]:
    """One line for the PR, then each file with how its definitions were read and what changed."""
    lines = [f"{pr.label} {pr.sha[:10]} {pr.title}"]
    for diff in diffs:
        if diff.parsed is None:
            digest = digest_patch(diff.path, diff.patch)
            lines.append(f"  {diff.path}  [line rule]")
            lines += [f"    added    {name}" for name in digest.added]
            lines += [f"    changed  {name}" for name in digest.changed]
            continue
        lines.append(f"  {diff.path}  [parsed]")
        for change in diff.parsed.definitions:
            where = change.qualified
            if change.status == "renamed":
                where = f"{change.old_qualified} -> {change.qualified}"
            public = " public" if change.public else ""
            lines.append(f"    {change.status:<8} {where}  ({change.lines} lines{public})")
        if diff.parsed.module_lines:
            lines.append(f"    module level  ({diff.parsed.module_lines} lines)")
    return lines


def timings(history: History, prs: list[PullRequest]) -> None:
    """Seconds per PR spent reading definitions, against reading the diff."""
    parse_seconds: list[float] = []
    diff_seconds: list[float] = []
    for pr in prs:
        started = time.perf_counter()
        diffs = history.diff(pr, definitions=False)
        read = time.perf_counter()
        parsed = with_definitions(diffs, history.blob)
        done = time.perf_counter()
        diff_seconds.append(read - started)
        parse_seconds.append(done - read)
        files = sum(1 for diff in parsed if diff.parsed is not None)
        print(
            f"{pr.label:<8} {len(diffs):>4} files {files:>4} parsed "
            f"diff {read - started:7.3f}s  definitions {done - read:7.3f}s"
        )
    for name, values in (("diff", diff_seconds), ("definitions", parse_seconds)):
        print(
            f"{name:<12} median {statistics.median(values):.3f}s  max {max(values):.3f}s  "
            f"total {sum(values):.2f}s over {len(values)} PRs"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("shas", nargs="*", help="PRs by sha, tag or #N")
    parser.add_argument("--range", dest="spec", help="every PR of A..B instead")
    parser.add_argument("--time", action="store_true", help="the cost per PR, not the lists")
    args = parser.parse_args()
    history = History(args.repo)
    if args.spec:
        prs = list(history.discover(args.spec).entries)
    else:
        prs = [history.find_pr(sha) for sha in args.shas]
    if args.time:
        timings(history, prs)
        return
    for pr in prs:
        print("\n".join(describe(pr, history.diff(pr))))


if __name__ == "__main__":
    main()
