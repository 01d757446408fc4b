"""The history reader on repositories built in the test: every way a PR lands on main."""

from __future__ import annotations

from pathlib import Path

import pytest

from prsum.errors import RepositoryError, RevisionError
from prsum.history import History, classify
from tests.conftest import RepoBuilder

BOT = "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"


def feature_branch_merge(repo: RepoBuilder, number: int) -> str:
    repo.branch("feature")
    repo.commit("Work in progress", {"src/app.py": "def main():\n    return 1\n"})
    repo.commit(
        "More work",
        {"src/extra.py": "def helper():\n    return 2\n"},
        author="Grace Hopper <grace@example.com>",
    )
    repo.checkout("main")
    repo.commit("Unrelated change on main", {"README.md": "# demo\n\nmore\n"})
    return repo.merge(
        "feature", f"Merge pull request #{number} from someone/feature\n\nMake main return one"
    )


def test_github_merge_commit_is_a_pr_diffed_against_its_first_parent(repo: RepoBuilder) -> None:
    sha = feature_branch_merge(repo, 12)
    history = History(repo.path)
    discovery = history.discover("v0..main")
    pr = discovery.prs[0]
    assert (pr.number, pr.kind, pr.sha, pr.title) == (12, "merge", sha, "Make main return one")
    assert pr.authors == ("Ada Lovelace",)
    # Against the first parent: only the branch's files, not the README change made on main.
    assert sorted(f.path for f in pr.files) == ["src/app.py", "src/extra.py"]
    diffs = {d.path: d.patch for d in history.diff(pr)}
    assert "+    return 1" in diffs["src/app.py"]
    assert "README.md" not in diffs
    assert [d.title for d in discovery.direct_commits] == ["Unrelated change on main"]


def test_merge_commit_whose_subject_is_the_pr_title(repo: RepoBuilder) -> None:
    repo.branch("topic")
    repo.commit("Add a flag", {"src/app.py": "def main(flag=False):\n    return 0\n"})
    repo.checkout("main")
    repo.merge("topic", "Add a `--flag` option (#3641)")
    pr = History(repo.path).discover("v0..main").prs[0]
    assert (pr.number, pr.kind, pr.title) == (3641, "merge", "Add a `--flag` option")


def test_squash_commit_with_number_and_co_authors(repo: RepoBuilder) -> None:
    repo.commit(
        "✨ Add greeting (#7)\n\nCo-authored-by: Grace Hopper <grace@example.com>\nCo-authored-by: Ada Lovelace <ada@example.com>",
        {"src/greet.py": "def greet(name):\n    return f'hi {name}'\n"},
    )
    pr = History(repo.path).discover("v0..main").prs[0]
    assert (pr.number, pr.kind, pr.title) == (7, "squash", "✨ Add greeting")
    assert pr.authors == ("Ada Lovelace", "Grace Hopper")
    assert [(f.path, f.status, f.added, f.deleted) for f in pr.files] == [
        ("src/greet.py", "A", 2, 0)
    ]


def test_bot_direct_commits_are_counted_and_skipped_unless_asked(repo: RepoBuilder) -> None:
    repo.commit(
        "📝 Update release notes",
        {"RELEASE.md": "notes\n"},
        author="github-actions[bot] <bot@users.noreply.github.com>",
    )
    repo.commit("⬆ Bump pydantic from 2.1 to 2.2 (#9)", {"uv.lock": "pydantic 2.2\n"}, author=BOT)
    history = History(repo.path)
    discovery = history.discover("v0..main")
    assert [pr.number for pr in discovery.prs] == [9]  # a bot's PR is still a PR
    assert [c.subject for c in discovery.bot_commits] == ["📝 Update release notes"]
    with_bots = history.discover("v0..main", include_bots=True)
    assert with_bots.bot_commits == ()
    assert [e.title for e in with_bots.entries] == [
        "⬆ Bump pydantic from 2.1 to 2.2",
        "📝 Update release notes",
    ]


def test_branch_sync_merge_is_not_a_pr(repo: RepoBuilder) -> None:
    repo.branch("stable")
    repo.commit("Fix on stable", {"src/app.py": "def main():\n    return 2\n"})
    repo.checkout("main")
    sha = repo.merge("stable", "Merge branch 'stable'")
    discovery = History(repo.path).discover("v0..main")
    assert discovery.prs == ()
    assert [c.sha for c in discovery.sync_merges] == [sha]


def test_consecutive_commits_of_one_rebase_merged_pr_form_one_pr(repo: RepoBuilder) -> None:
    first = repo.commit(
        "Parse input (#21)", {"src/parse.py": "def parse(text):\n    return text\n"}
    )
    repo.commit("Use the parser (#21)", {"src/app.py": "from parse import parse\n"})
    history = History(repo.path)
    (pr,) = history.discover("v0..main").prs
    assert (pr.number, pr.kind) == (21, "rebase")
    assert pr.base_sha == history.resolve(f"{first}~1")
    assert sorted(f.path for f in pr.files) == ["src/app.py", "src/parse.py"]


def test_newest_first_and_direct_commits_in_place(repo: RepoBuilder) -> None:
    repo.commit("First (#1)", {"a.py": "a = 1\n"})
    repo.commit("Tweak config", {"setup.cfg": "[x]\n"})
    repo.commit("Second (#2)", {"b.py": "b = 2\n"})
    entries = History(repo.path).discover("v0..main").entries
    assert [(e.number, e.kind) for e in entries] == [(2, "squash"), (None, "direct"), (1, "squash")]


def test_find_pr_by_number_sha_and_tag(repo: RepoBuilder) -> None:
    sha = repo.commit("Add feature (#5)", {"f.py": "x = 1\n"})
    repo.tag("v1")
    repo.commit("Later (#6)", {"g.py": "y = 2\n"})
    history = History(repo.path)
    assert history.find_pr("#5").sha == sha
    assert history.find_pr(sha[:8]).number == 5
    assert history.find_pr("v1").number == 5
    with pytest.raises(RevisionError, match="no PR #99"):
        history.find_pr("#99")


def test_unusual_file_names_keep_their_patches(repo: RepoBuilder) -> None:
    names = ["docs/with space.md", "src/naïve ünïcode.py", 'src/quote"d.py']
    repo.commit("Odd names (#4)", {name: f"content of {name}\n" for name in names})
    history = History(repo.path)
    pr = history.discover("v0..main").prs[0]
    assert sorted(f.path for f in pr.files) == sorted(names)
    patches = {d.path: d.patch for d in history.diff(pr)}
    for name in names:
        assert f"+content of {name}" in patches[name]


def test_rename_is_reported_once_with_its_old_path(repo: RepoBuilder) -> None:
    repo.git("mv", "src/app.py", "src/main_app.py")
    repo.git("commit", "-q", "-m", "Rename app (#8)")
    (pr,) = History(repo.path).discover("v0..main").prs
    assert [(f.path, f.status, f.old_path) for f in pr.files] == [
        ("src/main_app.py", "R", "src/app.py")
    ]


def test_binary_files_are_marked(repo: RepoBuilder) -> None:
    repo.commit("Add logo (#3)", {"logo.png": bytes(range(256)) * 4})
    (pr,) = History(repo.path).discover("v0..main").prs
    assert pr.files[0].binary


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(RepositoryError, match="not a git repository"):
        History(tmp_path)


def test_unknown_revision_and_empty_range(repo: RepoBuilder) -> None:
    history = History(repo.path)
    with pytest.raises(RevisionError, match="unknown revision 'nope'"):
        history.discover("v0..nope")
    with pytest.raises(RevisionError, match="selects no commits"):
        history.discover("main..v0")


@pytest.mark.parametrize(
    ("parents", "message", "expected"),
    [
        (2, "Merge pull request #5 from a/b\n\nTitle here", ("merge", 5, "Title here")),
        (2, "Merge pull request #5 from a/b", ("merge", 5, "a/b")),
        (2, "Streamline flags (#3641)", ("merge", 3641, "Streamline flags")),
        (
            2,
            "Merge remote-tracking branch 'upstream/stable' into main",
            ("sync", None, "Merge remote-tracking branch 'upstream/stable' into main"),
        ),
        (1, "Fix typo (#12)", ("squash", 12, "Fix typo")),
        (1, "Fix typo", ("direct", None, "Fix typo")),
    ],
)
def test_classify(parents: int, message: str, expected: tuple[str, int | None, str]) -> None:
    result = classify(parents, message, "Someone", "someone@example.com")
    assert (result.kind, result.number, result.title) == expected
