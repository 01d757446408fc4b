"""Facts without a model: categories, breaking signals, new options, TODOs."""

from __future__ import annotations

import pytest

from prsum.facts import compute_facts
from prsum.history import History
from prsum.types import Facts
from tests.conftest import RepoBuilder

BOT = "dependabot[bot] <bot@example.com>"


def facts_of(
    repo: RepoBuilder,
    message: str,
    files: dict[str, str | bytes | None],
    author: str = "Ada Lovelace <ada@example.com>",
) -> Facts:
    repo.commit(message, files, author=author)
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    return compute_facts(pr, history.diff(pr))


@pytest.mark.parametrize(
    ("message", "files", "category"),
    [
        ("⬆ Bump requests from 2.31 to 2.32 (#1)", {"uv.lock": "x\n"}, "deps"),
        ("Refresh lock (#2)", {"poetry.lock": "y\n"}, "deps"),
        ("🔖 Release version 1.2.0 (#3)", {"src/app.py": "__version__ = '1.2.0'\n"}, "release"),
        ("Tweak workflows (#4)", {".github/workflows/ci.yml": "on: push\n"}, "ci"),
        ("Typos (#5)", {"docs/index.md": "hello\n"}, "docs"),
        ("More tests (#6)", {"tests/test_app.py": "def test_x():\n    pass\n"}, "test"),
        ("Fix the exit code (#7)", {"src/app.py": "def main():\n    return 1\n"}, "fix"),
        ("⚡ Optimize parsing (#8)", {"src/app.py": "def main():\n    return 2\n"}, "perf"),
        ('Revert "Add cache" (#9)', {"src/app.py": "def main():\n    return 3\n"}, "revert"),
        ("Add a greeting (#10)", {"src/greet.py": "def greet():\n    pass\n"}, "feature"),
    ],
)
def test_categories(
    repo: RepoBuilder, message: str, files: dict[str, str | bytes | None], category: str
) -> None:
    assert facts_of(repo, message, files).category == category


def test_breaking_markers_removed_definitions_and_changed_defaults(repo: RepoBuilder) -> None:
    assert facts_of(
        repo, "feat!: drop the old API (#1)", {"src/a.py": "x = 1\n"}
    ).breaking.is_breaking
    repo.commit(
        "Add helpers (#2)",
        {"src/api.py": "def fetch(url, timeout=30):\n    pass\n\n\ndef legacy():\n    pass\n"},
    )
    removed = facts_of(repo, "Tidy (#3)", {"src/api.py": "def fetch(url, timeout=30):\n    pass\n"})
    assert removed.breaking.is_breaking and "legacy" in removed.breaking.why
    changed = facts_of(
        repo, "Faster (#4)", {"src/api.py": "def fetch(url, timeout=5):\n    pass\n"}
    )
    assert changed.breaking.is_breaking and "timeout=30 -> 5" in changed.breaking.why
    moved = facts_of(
        repo,
        "Move fetch (#5)",
        {"src/api.py": "", "src/net.py": "def fetch(url, timeout=5):\n    pass\n"},
    )
    assert not moved.breaking.is_breaking  # defined again elsewhere in the same PR


def test_new_options_todos_and_tests(repo: RepoBuilder) -> None:
    facts = facts_of(
        repo,
        "Add --verbose (#6)",
        {
            "src/cli.py": "import os\nVERBOSE = '--verbose'\nHOME = os.environ.get('APP_HOME')\n# TODO: colour\n",
            "pyproject.toml": "retries = 3\n",
            "tests/test_cli.py": "def test_verbose():\n    pass\n",
        },
    )
    assert set(facts.new_options) >= {"--verbose", "APP_HOME", "retries"}
    assert facts.todos_added == ("src/cli.py: # TODO: colour",)
    assert facts.tests_touched and not facts.docs_only
