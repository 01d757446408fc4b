"""Fitting diffs into a token budget: never over, noise out first, the reason for each cut kept."""

from __future__ import annotations

from prsum.budget import clip_to_budget, compact_patch, pack_diff, salience_order
from prsum.types import FileChange, FileDiff
from tests.fakes import FakeBackend


def patch(path: str, lines: int) -> FileDiff:
    body = "\n".join(f"+line {i} of {path}" for i in range(lines))
    return FileDiff(
        path,
        f"diff --git a/{path} b/{path}\nindex 1..2 100644\n--- a/{path}\n+++ b/{path}\n@@ -0,0 +1,{lines} @@\n{body}\n",
    )


def test_salience_puts_source_before_tests_docs_and_config() -> None:
    files = [
        FileChange(p, "M", n, 0)
        for p, n in [
            ("docs/a.md", 90),
            ("setup.cfg", 80),
            ("tests/test_a.py", 70),
            ("src/a.py", 5),
            ("src/b.py", 50),
        ]
    ]
    assert [f.path for f in salience_order(files)] == [
        "src/b.py",
        "src/a.py",
        "tests/test_a.py",
        "docs/a.md",
        "setup.cfg",
    ]


def test_pack_never_exceeds_budget_and_records_every_cut() -> None:
    counter = FakeBackend()
    paths = [f"src/m{i}.py" for i in range(20)] + ["uv.lock", "tests/test_x.py", "vendor/lib.py"]
    files = [FileChange(p, "M", 200, 0) for p in paths] + [FileChange("old.py", "D", 0, 30)]
    diffs = [patch(p, 200) for p in paths]
    for budget in (100, 700, 3000, 20000):
        packed = pack_diff(files, diffs, budget, counter)
        assert counter.count_tokens(packed.text) <= budget
        reasons = {item.path: item.reason for item in packed.left_out}
        assert reasons["uv.lock"] == "lock file"
        assert reasons["vendor/lib.py"] == "vendored code"
        assert reasons["old.py"].startswith("deleted file")
        accounted = set(packed.coverage_whole) | set(packed.coverage_clipped) | set(reasons)
        assert accounted == {f.path for f in files}


def test_compact_patch_drops_noise_headers_and_clip_keeps_whole_lines() -> None:
    text = compact_patch(patch("src/a.py", 50).patch)
    assert not text.startswith(("diff --git", "index"))
    clipped = clip_to_budget(text, 40, FakeBackend())
    assert text.startswith(clipped)
    assert clipped.endswith("src/a.py") or clipped.endswith("@@")
