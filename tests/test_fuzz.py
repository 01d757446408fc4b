"""Fuzzing the text parsers and the packer: no crash on any input, no budget ever exceeded."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prsum.budget import pack_diff
from prsum.digest import digest_patch
from prsum.history.messages import cherry_picked_from, classify, people_of, reverted_sha, trailers
from prsum.history.patches import parse_changes, split_patch
from prsum.redact import redact_text
from prsum.types import FileChange, FileDiff
from tests.fakes import FakeBackend

lines = st.lists(st.text(max_size=80), max_size=40).map("\n".join)
diff_lines = st.lists(
    st.one_of(
        st.builds(lambda s: "+" + s, st.text(max_size=60)),
        st.builds(lambda s: "-" + s, st.text(max_size=60)),
        st.builds(lambda s: " " + s, st.text(max_size=60)),
        st.builds(
            lambda a, b, s: f"@@ -{a},3 +{b},4 @@ {s}",
            st.integers(0, 999),
            st.integers(0, 999),
            st.text(max_size=30),
        ),
        st.just("\\ No newline at end of file"),
    ),
    max_size=60,
)
paths = st.sampled_from(
    [
        "src/a.py",
        "tests/test_a.py",
        "docs/a.md",
        "uv.lock",
        "web/app.min.js",
        "src/x.c",
        "conf.yaml",
    ]
)


@given(
    parents=st.integers(0, 3),
    message=lines,
    author=st.text(max_size=20),
    email=st.text(max_size=20),
)
def test_message_parsers_never_crash(parents: int, message: str, author: str, email: str) -> None:
    classify(parents, message, author, email)
    trailers(message)
    people_of(author, email, message)
    reverted_sha(message)
    cherry_picked_from(message)


@given(
    st.lists(st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=40), max_size=20)
)
def test_raw_numstat_parser_never_crashes(tokens: list[str]) -> None:
    for change in parse_changes(tokens):  # malformed entries are skipped, never a crash
        assert change.added >= 0 and change.deleted >= 0


@given(text=lines)
def test_patch_splitting_and_redaction_never_crash(text: str) -> None:
    split_patch("diff --git a/x b/x\n" + text, ())
    redact_text(text, config=True)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(
        st.tuples(paths, diff_lines), min_size=1, max_size=6, unique_by=lambda item: item[0]
    ),
    budget=st.integers(0, 600),
)
def test_packing_never_exceeds_its_budget(files: list[tuple[str, list[str]]], budget: int) -> None:
    counter = FakeBackend()
    changes = [FileChange(path, "M", len(body), 0) for path, body in files]
    diffs = [
        FileDiff(path, f"--- a/{path}\n+++ b/{path}\n" + "\n".join(body)) for path, body in files
    ]
    for diff in diffs:
        digest_patch(diff.path, diff.patch)
    packed = pack_diff(changes, diffs, budget, counter)
    assert counter.count_tokens(packed.text) <= max(budget, 0) + len(
        files
    )  # +1 joining newline per file
    accounted = (
        set(packed.coverage_whole)
        | set(packed.coverage_clipped)
        | {item.path for item in packed.left_out}
    )
    assert accounted == {path for path, _ in files}
