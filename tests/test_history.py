"""The history reader on repositories built in the test: every way a PR lands on main."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prsum.errors import RepositoryError, RevisionError
from prsum.history import History, classify
from prsum.types import RangeQuery
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
    assert history.with_own_commits(pr)[0].authors == ("Ada Lovelace", "Grace Hopper")
    # Against the first parent: only the branch's files, not the README change made on main.
    assert sorted(f.path for f in pr.files) == ["src/app.py", "src/extra.py"]
    diffs = {d.path: d.patch for d in history.diff(pr)}
    assert "+    return 1" in diffs["src/app.py"]
    assert "README.md" not in diffs
    assert [d.title for d in discovery.direct_commits] == ["Unrelated change on main"]


def test_blame_and_landing_name_the_pr_that_last_changed_a_line(
    repo: RepoBuilder, tmp_path: Path
) -> None:
    merge = feature_branch_merge(repo, 12)  # its branch's first commit wrote `return 1`
    repo.day = 3
    squash = repo.commit("Add a helper (#13)", {"src/util.py": "def util():\n    return 3\n"})
    base = repo.commit("Direct fix", {"src/util.py": "def util():\n    return 4\n"})
    history = History(repo.path)
    branch_commit = history.blame(base, "src/app.py", [2])[0]
    assert branch_commit is not None and branch_commit != merge
    # a line written on a merged branch landed with the merge; one of a squash, as itself
    landed = history.landing(branch_commit, base)
    assert landed is not None and (landed.label, landed.title) == ("#12", "Make main return one")
    assert history.blame(base, "src/util.py", [1, 2]) == (squash, base)
    found = history.landing(squash, base)
    assert found is not None and (found.label, found.merged_at[:10]) == ("#13", "2026-01-04")
    direct = history.landing(base, base)
    assert direct is not None and direct.label == base[:7]
    # a long-lived branch with PRs of its own, synced whole: the PR there that wrote the line
    repo.branch("next")
    inner = repo.commit("Add a flag (#20)", {"src/flag.py": "FLAG = True\n"})
    repo.checkout("main")
    synced = repo.merge("next", "Merge branch 'next'")
    landed = history.landing(inner, synced)
    assert landed is not None and (landed.label, landed.title) == ("#20", "Add a flag")
    # inside a PR's own branch, a subject's `(#N)` may name an issue: the PR is the merge
    repo.branch("topic")
    inner = repo.commit("Handle the flag (#7)", {"src/flag.py": "FLAG = False\n"})
    repo.checkout("main")
    merged = repo.merge("topic", "Merge pull request #22 from someone/topic\n\nHandle it")
    landed = history.landing(inner, merged)
    assert landed is not None and landed.label == "#22"
    # a branch merged as a change of its own, naming no PR: the merge, not an issue's number
    repo.branch("fixes")
    inner = repo.commit("Fix a crash, see (#8)", {"src/flag.py": "FLAG = None\n"})
    repo.checkout("main")
    merged = repo.merge("fixes", "Fix the flag's crash")
    landed = history.landing(inner, merged)
    assert landed is not None and (landed.label, landed.title) == (
        merged[:7],
        "Fix the flag's crash",
    )
    # an octopus merge: the branch that holds the line, whichever parent it is
    for name, number in (("one", 31), ("two", 32)):
        repo.branch(name, "main")
        repo.commit(f"Work on {name} (#{number})", {f"src/{name}.py": "x = 1\n"})
    repo.checkout("main")
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branches 'one' and 'two'", "one", "two")
    octopus = repo.head()
    two = history.blame(octopus, "src/two.py", [1])[0]
    landed = history.landing(two, octopus) if two else None
    assert landed is not None and (landed.label, landed.title) == ("#32", "Work on two")
    assert history.landing(octopus, inner) is None  # `inner` does not hold it
    # a shallow clone cannot tell who wrote the lines at its boundary
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)], check=True
    )
    assert History(shallow).blame("HEAD", "src/util.py", [1, 2]) == (None, None)


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
    with_bots = history.discover(RangeQuery("v0..main", include_bots=True))
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


def test_merge_naming_no_pr_but_no_sync_gets_a_card_like_a_direct_commit(
    repo: RepoBuilder,
) -> None:
    repo.branch("sponsors")
    repo.commit("Sponsors section", {"README.md": "# demo\n\n## Sponsors\n"})
    repo.checkout("main")
    sha = repo.merge("sponsors", "Adding sponsorship to README.md")
    history = History(repo.path)
    discovery = history.discover("v0..main")
    assert discovery.sync_merges == ()
    (entry,) = discovery.entries
    assert (entry.sha, entry.kind, entry.number, entry.title) == (
        sha,
        "direct",
        None,
        "Adding sponsorship to README.md",
    )
    # Diffed against the first parent, like any merge: only what the branch brought.
    assert [f.path for f in entry.files] == ["README.md"]
    assert "+## Sponsors" in history.diff(entry)[0].patch


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
    names = [
        "docs/with space.md",
        "src/naïve ünïcode.py",
        'src/quote"d.py',
        "src/new\nline.py",
        "src/tab\there.py",
    ]
    repo.commit("Odd names (#4)", {name: f"content of {name!r}\n" for name in names})
    history = History(repo.path)
    pr = history.discover("v0..main").prs[0]
    assert sorted(f.path for f in pr.files) == sorted(names)
    patches = {d.path: d.patch for d in history.diff(pr)}
    for name in names:
        assert f"+content of {name!r}" in patches[name]


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
        (
            2,
            "Merge pull request #1891 from someone/c-static-link\n\nconfig: link the C runtime",
            ("merge", 1891, "config: link the C runtime"),  # not a `config:` trailer
        ),
        (
            2,
            "Merge pull request #7 from a/b\n\nSigned-off-by: A <a@x>\n\nfix: keep flags",
            ("merge", 7, "fix: keep flags"),
        ),
        (2, "Merge tag 'v1.2' into main", ("sync", None, "Merge tag 'v1.2' into main")),
        (2, "Sync upstream into main", ("sync", None, "Sync upstream into main")),
        (2, "Adding sponsorship to README.md", ("direct", None, "Adding sponsorship to README.md")),
        (1, "Fix typo (#12)", ("squash", 12, "Fix typo")),
        (1, "Fix typo", ("direct", None, "Fix typo")),
    ],
)
def test_classify(parents: int, message: str, expected: tuple[str, int | None, str]) -> None:
    result = classify(parents, message, "Someone", "someone@example.com")
    assert (result.kind, result.number, result.title) == expected


def merge_branch(repo: RepoBuilder, message: str, files: dict[str, str | bytes | None]) -> str:
    repo.branch("topic")
    repo.commit("Topic work", files, author="Grace Hopper <grace@example.com>")
    repo.checkout("main")
    sha = repo.merge("topic", message)
    repo.git("branch", "-D", "topic")
    return sha


def test_gitlab_merge_request(repo: RepoBuilder) -> None:
    merge_branch(
        repo,
        "Merge branch 'feature' into 'main'\n\nAdd the exporter\n\nSee merge request group/project!42",
        {"src/export.py": "def export():\n    pass\n"},
    )
    history = History(repo.path)
    (pr,) = history.discover("v0..main").prs
    assert (pr.number, pr.kind, pr.title) == (42, "merge", "Add the exporter")
    assert pr.authors == ("Ada Lovelace",)  # who merged: all that the merge commit itself says
    assert history.with_own_commits(pr)[0].authors == ("Grace Hopper",)  # who wrote it
    assert [f.path for f in pr.files] == ["src/export.py"]


def test_bitbucket_pull_request(repo: RepoBuilder) -> None:
    merge_branch(
        repo,
        "Merged in feature/cache (pull request #17)\n\nCache parsed configs\n\nApproved-by: Ada Lovelace",
        {"src/cache.py": "CACHE = {}\n"},
    )
    (pr,) = History(repo.path).discover("v0..main").prs
    assert (pr.number, pr.kind, pr.title) == (17, "merge", "Cache parsed configs")


def test_gerrit_change_with_trailers(repo: RepoBuilder) -> None:
    repo.commit(
        "Speed up the parser\n\nChange-Id: I0123456789abcdef\nReviewed-on: https://review.example.org/c/project/+/9431\n"
        "Reviewed-by: Grace Hopper <grace@example.com>\nSigned-off-by: Ada Lovelace <ada@example.com>",
        {"src/parse.py": "def parse():\n    return []\n"},
    )
    (pr,) = History(repo.path).discover("v0..main").prs
    assert (pr.number, pr.kind, pr.title) == (9431, "squash", "Speed up the parser")
    assert dict(pr.trailers)["Change-Id"] == "I0123456789abcdef"
    assert dict(pr.trailers)["Reviewed-by"] == "Grace Hopper <grace@example.com>"
    assert dict(pr.trailers)["Signed-off-by"] == "Ada Lovelace <ada@example.com>"


def test_rebase_merge_traced_through_refs_pull(repo: RepoBuilder) -> None:
    repo.branch("pr")
    repo.commit("Parse input", {"src/parse.py": "def parse(text):\n    return text\n"})
    repo.commit("Use the parser", {"src/app.py": "from parse import parse\n"})
    repo.git("update-ref", "refs/pull/31/head", "pr")
    repo.checkout("main")
    repo.commit("Unrelated (#30)", {"README.md": "# demo\n\nnews\n"})
    # A rebase merge: the same commits (author, date, subject) copied onto main with new shas.
    for sha in repo.git("rev-list", "--reverse", "main..pr").split():
        repo.git("cherry-pick", "--allow-empty", "-x", sha)
    history = History(repo.path)
    entries = history.discover("v0..main").entries
    assert [(e.number, e.kind, e.title) for e in entries] == [
        (31, "rebase", "Parse input"),
        (30, "squash", "Unrelated"),
    ]
    own = history.own_commits(entries[0])
    assert [c.subject for c in own] == ["Parse input", "Use the parser"]


def test_revert_is_linked_both_ways_and_cherry_pick_noted(repo: RepoBuilder) -> None:
    feature = repo.commit("Add a cache (#40)", {"src/cache.py": "CACHE = {}\n"})
    repo.git("revert", "--no-edit", feature)
    repo.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        f'Revert "Add a cache" (#41)\n\nThis reverts commit {feature}.',
    )
    repo.commit(
        "Port fix\n\n(cherry picked from commit 1234567890abcdef1234567890abcdef12345678)",
        {"src/fix.py": "x = 1\n"},
    )
    entries = History(repo.path).discover("v0..main").entries
    port, revert, original = entries
    assert port.cherry_picked_from == "1234567890abcdef1234567890abcdef12345678"
    assert (revert.number, revert.kind, revert.reverts) == (41, "revert", "#40")
    assert [(r.relation, r.label) for r in original.related] == [("reverted_by", "#41")]


def test_branch_sync_lists_what_it_brings_with_follow_sync(repo: RepoBuilder) -> None:
    repo.branch("stable")
    repo.commit("Fix on stable (#50)", {"src/app.py": "def main():\n    return 2\n"})
    repo.commit("Another stable fix (#51)", {"src/other.py": "y = 1\n"})
    repo.checkout("main")
    repo.merge("stable", "Merge branch 'stable'")
    history = History(repo.path)
    (plain,) = history.discover("v0..main").sync_merges
    assert plain.brings == ()
    (followed,) = history.discover(RangeQuery("v0..main", follow_sync=True)).sync_merges
    assert [pr.number for pr in followed.brings] == [51, 50]


def test_merge_commit_own_commits_are_its_second_parent_line(repo: RepoBuilder) -> None:
    feature_branch_merge(repo, 12)
    history = History(repo.path)
    pr = history.discover("v0..main").prs[0]
    assert [c.subject for c in history.own_commits(pr)] == ["Work in progress", "More work"]


def test_range_filters_last_dates_and_paths(repo: RepoBuilder) -> None:
    repo.commit("Docs (#1)", {"docs/a.md": "a\n"})
    repo.commit("Code (#2)", {"src/b.py": "b = 1\n"})
    repo.commit("More docs (#3)", {"docs/c.md": "c\n"})
    history = History(repo.path)
    assert [pr.number for pr in history.discover(RangeQuery("main", last=2)).prs] == [3, 2]
    assert [pr.number for pr in history.discover(RangeQuery("v0..main", paths=("src/",))).prs] == [
        2
    ]
    assert [
        pr.number for pr in history.discover(RangeQuery("v0..main", paths=("docs/*.md",))).prs
    ] == [3, 1]
    everything = history.discover(RangeQuery("main", since="2025-12-31"))
    assert [pr.number for pr in everything.prs] == [3, 2, 1]
    with pytest.raises(RevisionError, match="selects no commits"):
        history.discover(RangeQuery("main", until="2025-12-31"))


def test_a_long_line_read_in_parallel_batches_keeps_its_order(
    repo: RepoBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prsum.history import reader

    for number in range(1, 12):
        repo.commit(f"Change {number} (#{number})", {f"src/m{number}.py": f"x = {number}\n"})
    whole = [pr.number for pr in History(repo.path).discover("v0..main").prs]
    monkeypatch.setattr(reader, "_BATCH", 3)
    monkeypatch.setattr(reader, "_WORKERS", 2)
    batched = History(repo.path).discover("v0..main").prs
    assert [pr.number for pr in batched] == whole == list(range(11, 0, -1))
    assert [f.path for f in batched[0].files] == ["src/m11.py"]
