"""Facts without a model: categories, breaking signals, new options, TODOs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from prsum.facts import compute_facts
from prsum.facts.account import stated_account
from prsum.history import History
from prsum.types import (
    Assertion,
    Card,
    Facts,
    LineEdit,
    LockChange,
    Origin,
    PrMeta,
    Release,
    SettingChange,
    Shipped,
)
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


# --- title conventions ---------------------------------------------------------------------

FIX_BODY = "def main():\n    return 9\n"  # an edit of existing code: nothing says its kind


@pytest.mark.parametrize(
    ("title", "category"),
    [
        ("[megatron] feat: sample with a new schedule (#11)", "feature"),  # [module] type:
        ("[trainer, rollout] fix: pass the device along (#12)", "fix"),
        ("fix(router): keep the prefix (#13)", "fix"),  # conventional, scoped
        ("perf(cors)!: join the headers once (#14)", "perf"),
        ("refactor[core]: split the loop (#15)", "refactor"),  # a bracketed scope
        ("✨ Add a mode (#16)", "feature"),  # gitmoji
        (":bug: Keep the exit code (#17)", "fix"),  # gitmoji shortcode
        ("Prevent a crash on empty input (#18)", "fix"),  # plain leading verb
        ("Streamline the main loop (#19)", "refactor"),
        ("Optimize the parser (#20)", "perf"),
    ],
)
def test_title_conventions(repo: RepoBuilder, title: str, category: str) -> None:
    assert facts_of(repo, title, {"src/app.py": FIX_BODY}).category == category


def test_conventional_scopes_name_deps_and_releases(repo: RepoBuilder) -> None:
    repo.commit("Pin (#1)", {"Cargo.toml": '[package]\nversion = "1.0.0"\n\n[dependencies]\n'})
    assert (
        facts_of(
            repo,
            "build(deps): bump jiff from 0.2.17 to 0.2.18 (#2)",
            {"Cargo.toml": '[package]\nversion = "1.0.0"\n\n[dependencies]\njiff = "0.2.18"\n'},
        ).category
        == "deps"
    )
    assert (
        facts_of(
            repo,
            "chore(release): Prepare for 1.1.0 (#3)",
            {"Cargo.toml": '[package]\nversion = "1.1.0"\n\n[dependencies]\njiff = "0.2.18"\n'},
        ).category
        == "release"
    )


def test_bang_and_breaking_tag_in_the_title(repo: RepoBuilder) -> None:
    bang = facts_of(repo, "feat(api)!: rename the entry point (#1)", {"src/app.py": FIX_BODY})
    assert bang.breaking.is_breaking and bang.breaking_scope == "api"
    tagged = facts_of(repo, "[BREAKING][fsdp] feat: new batching (#2)", {"src/app.py": "x = 1\n"})
    assert tagged.breaking.is_breaking and "[BREAKING]" in tagged.breaking.why


def test_breaking_words_in_a_pr_template_are_not_a_marker(repo: RepoBuilder) -> None:
    body = "\n\n- If this PR breaks any API, add `[BREAKING]` to the title.\n- BREAKING CHANGE notes go below."
    facts = facts_of(repo, "[misc] fix: pass the flag (#3)" + body, {"src/app.py": FIX_BODY})
    assert not facts.breaking.is_breaking


def test_a_bare_version_title_is_a_release(repo: RepoBuilder) -> None:
    repo.commit(
        "Manifest (#1)", {"package.json": '{\n  "name": "demo",\n  "version": "4.13.2"\n}\n'}
    )
    facts = facts_of(
        repo, "4.13.3", {"package.json": '{\n  "name": "demo",\n  "version": "4.13.3"\n}\n'}
    )
    assert facts.category == "release"


# --- categories from the diff --------------------------------------------------------------


def test_new_public_definitions_make_a_feature(repo: RepoBuilder) -> None:
    go = "package app\n\nfunc Run() int {\n\treturn 0\n}\n"
    repo.commit("Go (#1)", {"app.go": go})
    facts = facts_of(
        repo,
        "The default directive can be customized (#2)",
        {"app.go": go + "\nfunc SetDirective(d int) {\n\tdirective = d\n}\n"},
    )
    assert facts.category == "feature" and facts.new_definitions == ("SetDirective",)


def test_only_removed_code_is_a_refactor(repo: RepoBuilder) -> None:
    repo.commit(
        "Two paths (#1)",
        {"src/app.py": "def main():\n    if OLD:\n        return legacy()\n    return 0\n"},
    )
    facts = facts_of(
        repo, "The old path is gone (#2)", {"src/app.py": "def main():\n    return 0\n"}
    )
    assert facts.category == "refactor"


def test_tests_only_is_test_whatever_the_title(repo: RepoBuilder) -> None:
    facts = facts_of(
        repo,
        "[utils] A bug in device selection is now covered (#1)",
        {"tests/test_groups.py": "def test_device():\n    assert pick() == 'cpu'\n"},
    )
    assert facts.category == "test"


def test_ci_files_are_ci_even_under_a_fix_title(repo: RepoBuilder) -> None:
    workflow = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    facts = facts_of(repo, "fix[build]: Fix syntax (#1)", {".github/workflows/ci.yml": workflow})
    assert facts.category == "ci"


def test_chore_touching_only_pipelines_is_ci(repo: RepoBuilder) -> None:
    repo.commit("Labeler (#1)", {".github/workflows/size.yml": "on: pull_request\n"})
    assert (
        facts_of(
            repo, "chore: Rm the size labeler (#2)", {".github/workflows/size.yml": None}
        ).category
        == "ci"
    )


def test_version_edits_in_manifests_are_deps(repo: RepoBuilder) -> None:
    repo.commit("Pins (#1)", {"requirements.txt": "requests==2.31.0\nrich==13.7.0\n"})
    facts = facts_of(
        repo, "Refresh pins (#2)", {"requirements.txt": "requests==2.32.3\nrich==13.7.1\n"}
    )
    assert facts.category == "deps"


def test_environment_only_upgrade_under_a_fix_title_is_deps(repo: RepoBuilder) -> None:
    repo.commit(
        "Image (#1)", {"docker/Dockerfile.gpu": "FROM base\nRUN pip install torch==2.9.0\n"}
    )
    facts = facts_of(
        repo,
        "[env] fix: upgrade torch versions in the image (#2)",
        {"docker/Dockerfile.gpu": "FROM base\nRUN pip install torch==2.9.1 --no-deps\nRUN make\n"},
    )
    assert facts.category == "deps"


def test_own_version_and_changelog_are_a_release(repo: RepoBuilder) -> None:
    repo.commit("Meta (#1)", {"pyproject.toml": '[project]\nname = "demo"\nversion = "1.0.0"\n'})
    facts = facts_of(
        repo,
        "Cut it (#2)",
        {
            "pyproject.toml": '[project]\nname = "demo"\nversion = "1.1.0"\n',
            "CHANGES.md": "## 1.1.0\n\n- Things.\n",
        },
    )
    assert facts.category == "release"


def test_a_feat_that_only_adds_docs_is_docs(repo: RepoBuilder) -> None:
    facts = facts_of(
        repo, "feat: Add security policy (#1)", {"SECURITY.md": "# Security\n\nMail us.\n"}
    )
    assert facts.category == "docs"


def test_comment_and_docstring_only_changes_are_docs_and_mechanical(repo: RepoBuilder) -> None:
    repo.commit(
        "Doc (#1)",
        {
            "src/app.py": 'def main(config):\n    """Run.\n\n    Args:\n        cfg: the config.\n    """\n    return 0\n'
        },
    )
    facts = facts_of(
        repo,
        "[misc] fix: Correct the docstring arg (#2)",
        {
            "src/app.py": 'def main(config):\n    """Run.\n\n    Args:\n        config: the config.\n    """\n    return 0\n'
        },
    )
    assert (facts.category, facts.mechanical, facts.logic_lines) == ("docs", "comments", 0)
    ts = facts_of(
        repo,
        "docs(context): an example in the JSDoc (#3)",
        {
            "src/context.ts": "/**\n * Set a header.\n *   c.header('Vary', 'x', { append: true })\n */\nexport const header = 1\n"
        },
    )
    assert ts.category in ("docs", "feature")  # a new file: its exported const is new API


def test_whitespace_only_is_a_chore_and_mechanical(repo: RepoBuilder) -> None:
    repo.commit("Code (#1)", {"src/app.py": "def main():\n    x = 1  \n    \n    return x\n"})
    facts = facts_of(
        repo,
        "[misc] fix: resolve pre-commit errors (#2)",
        {"src/app.py": "def main():\n    x = 1\n\n    return x\n"},
    )
    assert (facts.category, facts.mechanical) == ("chore", "whitespace")


def test_a_typo_fixed_in_a_code_string_is_a_fix_and_mechanical(repo: RepoBuilder) -> None:
    repo.commit(
        "Help (#1)", {"command.go": 'package c\n\nfunc usage() {\n\tfmt.Print("help topcis")\n}\n'}
    )
    facts = facts_of(
        repo,
        "Update command.go (#2)",
        {"command.go": 'package c\n\nfunc usage() {\n\tfmt.Print("help topics")\n}\n'},
    )
    assert (facts.category, facts.mechanical) == ("fix", "typo")


def test_changelog_section_says_feature_or_fix(repo: RepoBuilder) -> None:
    log = "# Upcoming\n\n## Features\n\n## Bugfixes\n\n"
    repo.commit("Log (#1)", {"CHANGELOG.md": log, "src/walk.rs": "fn walk() {\n}\n"})
    feature = facts_of(
        repo,
        "`--ignore-contain`: skip marked directories (#2)",
        {
            "CHANGELOG.md": "# Upcoming\n\n## Features\n- Add `--ignore-contain`.\n\n## Bugfixes\n\n",
            "src/walk.rs": "fn walk() {\n    if marked() {\n        return;\n    }\n}\n",
        },
    )
    assert feature.category == "feature"
    fix = facts_of(
        repo,
        "Paths with spaces (#3)",
        {
            "CHANGELOG.md": "# Upcoming\n\n## Features\n- Add `--ignore-contain`.\n\n## Bugfixes\n- Spaces.\n",
            "src/walk.rs": "fn walk() {\n    if marked() {\n        return quote();\n    }\n}\n",
        },
    )
    assert fix.category == "fix"


def test_changed_code_with_new_tests_is_a_fix(repo: RepoBuilder) -> None:
    facts = facts_of(
        repo,
        "Settles the bar on its final position (#1)",
        {"src/app.py": FIX_BODY, "tests/test_app.py": "def test_main():\n    assert main() == 9\n"},
    )
    assert facts.category == "fix"


# --- breaking signals beyond markers ---------------------------------------------------------


def test_removed_public_definitions_by_language_visibility(repo: RepoBuilder) -> None:
    repo.commit(
        "Code (#1)",
        {
            "api.go": "package api\n\nfunc Public() {}\n\nfunc helper() {}\n",
            "src/util.ts": "export function kept() {}\nexport function gone() {}\nconst local = () => 1\n",
        },
    )
    private = facts_of(repo, "Tidy (#2)", {"api.go": "package api\n\nfunc Public() {}\n"})
    assert not private.breaking.is_breaking  # lower-case Go names are package-private
    local = facts_of(
        repo, "Tidy (#3)", {"src/util.ts": "export function kept() {}\nexport function gone() {}\n"}
    )
    assert not local.breaking.is_breaking  # not exported
    exported = facts_of(repo, "Tidy (#4)", {"src/util.ts": "export function kept() {}\n"})
    assert exported.breaking.is_breaking and "gone" in exported.breaking.why
    assert exported.breaking_scope == "api"


def test_a_definition_in_a_string_is_no_removed_definition(repo: RepoBuilder) -> None:
    """The parser knows a template's text from the code around it; the line rule took the
    `def` in the string for a public function removed."""
    template = 'TEMPLATE = """\ndef handler():\n    pass\n"""\n\n\n'
    repo.commit("Template (#1)", {"src/gen.py": template + "def render():\n    return TEMPLATE\n"})
    facts = facts_of(
        repo, "Drop the template (#2)", {"src/gen.py": "def render():\n    return ''\n"}
    )
    assert not facts.breaking.is_breaking


def test_a_renamed_public_function_is_breaking_not_new(repo: RepoBuilder) -> None:
    body = "(path):\n    with open(path) as handle:\n        return handle.read()\n"
    repo.commit("Loader (#1)", {"src/loader.py": "def load" + body})
    facts = facts_of(repo, "Rename the loader (#2)", {"src/loader.py": "def read" + body})
    assert facts.breaking.why == "public definition removed: load"
    assert facts.new_definitions == ()


@pytest.mark.parametrize(
    ("path", "before", "after", "what"),
    [
        ("Cargo.toml", 'rust-version = "1.77.2"\n', 'rust-version = "1.90.0"\n', "Rust"),
        (
            "pyproject.toml",
            '[project]\nrequires-python = ">=3.9"\n',
            '[project]\nrequires-python = ">=3.11"\n',
            "Python",
        ),
        ("go.mod", "module x\n\ngo 1.21\n", "module x\n\ngo 1.23\n", "Go"),
    ],
)
def test_raised_minimum_versions_are_breaking(
    repo: RepoBuilder, path: str, before: str, after: str, what: str
) -> None:
    repo.commit("Manifest (#1)", {path: before})
    facts = facts_of(repo, "Toolchain (#2)", {path: after})
    assert facts.breaking.is_breaking and what in facts.breaking.why
    assert facts.breaking_scope == "environment"


def test_a_dropped_build_target_is_breaking(repo: RepoBuilder) -> None:
    matrix = "jobs:\n  build:\n    matrix:\n      target:\n        - x86_64-unknown-linux-gnu\n"
    repo.commit(
        "CI (#1)", {".github/workflows/release.yml": matrix + "        - i686-pc-windows-msvc\n"}
    )
    facts = facts_of(repo, "Trim the matrix (#2)", {".github/workflows/release.yml": matrix})
    assert facts.breaking.is_breaking and "i686-pc-windows-msvc" in facts.breaking.why
    paths = facts_of(
        repo, "Image (#3)", {"docker/Dockerfile": "RUN ln -s /usr/lib/x86_64-linux-gnu/lib.so\n"}
    )
    assert not paths.breaking.is_breaking  # a path, not a target


# --- what a reader must understand -----------------------------------------------------------


def test_logic_lines_leave_out_comments_versions_and_scripts(repo: RepoBuilder) -> None:
    facts = facts_of(
        repo,
        "Work (#1)",
        {
            "src/app.py": "def main():\n    # a comment\n    return run(lock=True)\n",
            "scripts/tool.py": "def tool():\n    return 1\n" * 5,
        },
    )
    assert facts.logic_lines == 2  # -1 +1 code lines in src/app.py; the script is not the product
    assert facts.tricky == ("concurrency",)


def test_a_later_pr_touching_a_definition_again_is_told_by_the_name_this_pr_writes(
    repo: RepoBuilder,
) -> None:
    from prsum.types import Card
    from tests.pipeline import cards_for

    source = "class Greeter:\n    def greet(self, name):\n        return 'Hi ' + name\n"
    test = "def test_a():\n    def start():\n        return 1\n    assert start()\n"
    repo.commit("Add a greeter (#1)", {"src/greeter.py": source, "tests/test_a.py": test})
    repo.commit(
        "Greet loudly (#2)",
        {
            "src/greeter.py": source.replace("'Hi '", "'HI '"),
            # Another test's own `start`: a callback of the same name, not the same code.
            "tests/test_b.py": test.replace("test_a", "test_b"),
        },
    )
    repo.commit("Greet softly (#3)", {"src/greeter.py": source.replace("'Hi '", "'hi '")})
    cards = cards_for(repo.path, "v0..main", cache=False)
    older, middle = (
        next(c for c in cards if isinstance(c, Card) and c.pr.number == number) for number in (1, 2)
    )
    # #2 changed the method, and so did #3: its qualified name is #2's own (by its parser).
    assert "后来 #3 也改动了 `Greeter.greet`。" in middle.body.follow_ups
    # #3 changed `Greeter.greet`, inside the `Greeter` that #1 added whole: the card names
    # the definition as #1 writes it (a name #1 does not contain would be cut out of it).
    assert [(r.relation, r.label, r.name) for r in older.pr.related] == [
        ("touched_again", "#3", "Greeter")
    ]
    assert "后来 #3 也改动了 `Greeter`。" in older.body.follow_ups


@pytest.mark.parametrize(
    ("changelog", "warned"),
    [
        ("CHANGELOG.md", False),  # the PR warns its users itself
        ("newsfragments/12.removal", False),
        ("src/history.py", True),  # source, not a changelog
    ],
)
def test_a_breaking_pr_is_told_to_warn_users_unless_it_writes_its_changelog(
    repo: RepoBuilder, changelog: str, warned: bool
) -> None:
    from prsum.i18n import follow_ups

    repo.commit("Add the API (#1)", {"src/api.py": "def legacy():\n    pass\n"})
    repo.commit("feat!: drop legacy (#2)", {"src/api.py": "", changelog: "Dropped legacy.\n"})
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    facts = compute_facts(pr, history.diff(pr))
    assert facts.breaking.is_breaking
    warning = "Warn users of the old behaviour in the release notes."
    assert (warning in follow_ups(pr, facts, "en")) is warned


def test_edits_quote_a_line_changed_in_place_and_control_flow_added(repo: RepoBuilder) -> None:
    base = (
        "import os\n\n\ndef join(cookies):\n    value = os.sep\n"
        "    header = cookies.join(',')\n    return header\n"
    )
    repo.commit("Add join (#1)", {"src/app.py": base})
    edited = base.replace("cookies.join(',')", "cookies.join('; ')").replace(
        "    value = os.sep\n", "    value = os.sep\n    if not cookies:\n        return ''\n"
    )
    facts = facts_of(repo, "Fix join (#2)", {"src/app.py": edited})
    assert facts.edits == (
        LineEdit("src/app.py", "header = cookies.join(',')", "header = cookies.join('; ')"),
        LineEdit("src/app.py", "", "if not cookies:"),
    )


def test_a_small_check_inserted_whole_is_quoted_with_what_it_does(repo: RepoBuilder) -> None:
    go = "func help(c, cmd *Command) {\n\tcmd.InitFlags()\n\tcmd.Help()\n}\n"
    py = "def run(x):\n    x = load()\n    return x\n"
    repo.commit("Add (#1)", {"src/cmd.go": go, "src/run.py": py})
    guard = "\tif cmd.ctx == nil {\n\t\tcmd.ctx = c.ctx\n\t}\n"
    checks = "    if x is None:\n        raise ValueError(x)\n"
    files = {
        "src/cmd.go": go.replace("\tcmd.Help()", guard + "\tcmd.Help()"),
        "src/run.py": py.replace("    return x", checks + "    return x"),
    }
    assert facts_of(repo, "Pass the context (#2)", files).edits == (
        LineEdit("src/cmd.go", "", "if cmd.ctx == nil { cmd.ctx = c.ctx }"),
        LineEdit("src/run.py", "", "if x is None: raise ValueError(x)"),
    )
    # Python's third line may stand after the check, not in it: its lines one by one
    repo.commit("Reset (#3)", {"src/run.py": py})
    files = {"src/run.py": py.replace("    return x", checks + "    x += 1\n    return x")}
    assert facts_of(repo, "Check x (#4)", files).edits == (
        LineEdit("src/run.py", "", "if x is None:"),
        LineEdit("src/run.py", "", "raise ValueError(x)"),
    )


def test_edits_leave_out_formatting_imports_comments_and_new_files(repo: RepoBuilder) -> None:
    base = "import a, b\n\n\ndef f(x):\n    # old words\n    return g(x, 'y')\n"
    repo.commit("Add f (#1)", {"src/app.py": base})
    reformatted = 'import b, a\n\n\ndef f(x):\n    # new words\n    return g(x, "y")\n'
    facts = facts_of(
        repo, "Tidy (#2)", {"src/app.py": reformatted, "src/new.py": "if x:\n    y = 1\n"}
    )
    assert facts.edits == ()


def test_where_no_code_line_changes_the_comments_rewritten_are_quoted(repo: RepoBuilder) -> None:
    base = (
        'def main(config):\n    """Run.\n\n    Args:\n        config_dict: the settings.\n    """\n'
    )
    repo.commit("Add main (#1)", {"src/app.py": base, "src/b.rs": "// old words\nfn b() {}\n"})
    files = {"src/app.py": base.replace("config_dict:", "config:")}
    facts = facts_of(repo, "Fix the docstring (#2)", files)
    assert facts.edits == (
        LineEdit("src/app.py", "config_dict: the settings.", "config: the settings."),
    )
    # a comment rewritten beside code that changes is not quoted: the code is the change
    files = {"src/b.rs": "// new words\nfn b() {}\n", "src/app.py": base + "x = 1\n"}
    assert facts_of(repo, "Add x (#3)", files).edits == ()
    files = {"src/b.rs": "// newer words\nfn b() {}\n", "src/c.py": "y = 2\n"}  # a new file's
    assert facts_of(repo, "Add c (#4)", files).edits == ()
    # a comment rewrapped says the same words on other lines: no edit
    go = "// Run the loop and\n// return its code.\nfunc run() {}\n"
    repo.commit("Add run (#5)", {"src/run.go": go})
    wrapped = {"src/run.go": "// Run the loop\n// and return its code.\nfunc run() {}\n"}
    assert facts_of(repo, "Rewrap (#6)", wrapped).edits == ()


def test_a_document_tells_the_links_it_adds(repo: RepoBuilder) -> None:
    base = "# Security\n\nWrite to us.\n\n- [old](https://a.org/moved)\n"
    repo.commit("Add (#1)", {"SECURITY.md": base})
    new = (
        "# Security\n\nWrite to us.\n\nUse the [form](https://x.org/report).\n\n"
        '<img src="https://img.org/logo.png">\n![logo](https://img.org/x.png)\n\n'
        "- [old, moved](https://a.org/moved)\n\nThanks.\n"
    )
    facts = facts_of(repo, "Docs: where to report (#2)", {"SECURITY.md": new})
    # the link moved with its item is no link added; images are no links
    assert facts.edits == (LineEdit("SECURITY.md", "", "https://x.org/report"),)
    # an address's own brackets kept, markup and hidden comments left out, reST images too
    page = (
        "See [Foo](https://en.wikipedia.org/wiki/Foo_(bar)) and **https://x.example**.\n"
        "<!-- https://hidden.example -->\n"
    )
    facts = facts_of(
        repo,
        "Links (#4)",
        {"docs/links.md": page, "docs/a.rst": ".. image:: https://i.example/a.png\n"},
    )
    assert facts.edits == (
        LineEdit("docs/links.md", "", "https://en.wikipedia.org/wiki/Foo_(bar)"),
        LineEdit("docs/links.md", "", "https://x.example"),
    )
    # a link in a list item quoted whole is told once
    listed = new.replace("moved)\n", "moved)\n- [b](https://b.org)\n")
    facts = facts_of(repo, "List b (#5)", {"SECURITY.md": listed})
    assert facts.edits == (LineEdit("SECURITY.md", "", "- [b](https://b.org)"),)


def test_a_pr_that_changes_only_whitespace_is_told_so(repo: RepoBuilder) -> None:
    base = "def f(x):\n    return g(x,1)\n"
    repo.commit("Add f (#1)", {"src/app.py": base, "README.md": "# App\n"})
    spaced = {"src/app.py": "def f(x):\n    return g(x, 1)\n\n", "README.md": "# App  \n"}
    assert facts_of(repo, "Format (#2)", spaced).whitespace_only
    # a quote changed is more than whitespace; so is a file added, lines moved, or Python's
    # indentation changed
    assert not facts_of(repo, "Quote (#3)", {"src/app.py": "def f('x'):\n"}).whitespace_only
    assert not facts_of(repo, "Add (#4)", {"src/b.py": "  \n"}).whitespace_only
    repo.commit("Lines (#5)", {"run.sh": "a\nb\nc\n", "src/app.py": "if x:\n    a()\nb()\n"})
    moved = {"run.sh": "b\nc\na\n"}
    assert not facts_of(repo, "Move a (#6)", moved).whitespace_only
    indented = {"src/app.py": "if x:\n    a()\n    b()\n"}
    assert not facts_of(repo, "Indent b (#7)", indented).whitespace_only


def test_strings_inserted_into_a_list_in_code_are_quoted(repo: RepoBuilder) -> None:
    ts = "type Feature =\n  | 'camera'\n  | 'usb'\n\nexport const x = 1\n"
    py = 'FLAGS = [\n    "--color",\n    "--quiet",\n]\n'
    repo.commit("Add (#1)", {"src/features.ts": ts, "src/flags.py": py})
    files = {
        "src/features.ts": ts.replace("  | 'usb'\n", "  | 'serial'\n  | 'usb'\n"),
        "src/flags.py": py.replace('    "--quiet",\n', '    "--quiet",\n    "--hidden",\n'),
    }
    assert facts_of(repo, "More features and flags (#2)", files).edits == (
        LineEdit("src/features.ts", "", "| 'serial'"),
        LineEdit("src/flags.py", "", '"--hidden",'),
    )
    # an import block's line is no item of a list
    go = 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n'
    repo.commit("Add main (#3)", {"src/main.go": go})
    imports = {"src/main.go": go.replace('\t"fmt"\n', '\t"fmt"\n\t"io"\n')}
    assert facts_of(repo, "Import io (#4)", imports).edits == ()


def test_a_long_line_is_quoted_around_its_change(repo: RepoBuilder) -> None:
    line = "result = compute(alpha, beta, gamma, delta, epsilon, zeta, eta, theta, {}, kappa)\n"
    repo.commit("Add (#1)", {"src/app.py": line.format("iota")})
    facts = facts_of(repo, "Change (#2)", {"src/app.py": line.format("lambda_")})
    assert facts.edits == (LineEdit("src/app.py", "theta, iota, kappa)", "theta, lambda_, kappa)"),)


def test_a_pr_that_changes_code_is_told_by_its_code_edits_only(repo: RepoBuilder) -> None:
    repo.commit(
        "Add (#1)",
        {"src/app.py": "LIMIT = 1\n", ".github/workflows/ci.yml": "uses: actions/checkout@v4\n"},
    )
    ci = {".github/workflows/ci.yml": "uses: actions/checkout@v5\n"}
    facts = facts_of(repo, "Raise the limit (#2)", {"src/app.py": "LIMIT = 2\n", **ci})
    assert facts.edits == (LineEdit("src/app.py", "LIMIT = 1", "LIMIT = 2"),)
    # `uses:` is no `use` declaration (an import): the edit of a CI file that is all a PR does
    facts = facts_of(
        repo, "Checkout v6 (#3)", {".github/workflows/ci.yml": "uses: actions/checkout@v6\n"}
    )
    assert facts.edits == (
        LineEdit(
            ".github/workflows/ci.yml", "uses: actions/checkout@v5", "uses: actions/checkout@v6"
        ),
    )


def test_a_long_check_is_not_quoted_and_a_whole_string_is_a_value(
    repo: RepoBuilder,
) -> None:
    py = "def finish(self):\n    if self.hidden:\n        return\n    self.write()\n"
    rs = 'const fn host() -> &\'static str {\n    ""\n}\n'
    repo.commit("Add (#1)", {"src/bar.py": py, "src/host.rs": rs})
    flush = (
        "    if self._pending:\n        self.step(self._pending)\n        self._pending = 0\n"
        "        self.render()\n"
    )
    files = {
        "src/bar.py": py.replace("def finish(self):\n", "def finish(self):\n" + flush),
        "src/host.rs": rs.replace('""', '"/"'),
    }
    assert facts_of(repo, "Flush the bar (#2)", files).edits == (
        LineEdit("src/host.rs", '""', '"/"'),
    )


def test_edits_pair_each_line_with_the_one_it_became_and_see_moves(repo: RepoBuilder) -> None:
    checked = (
        "def f(user):\n    if user is None:\n        raise ValueError(user)\n"
        "    name = user.name\n    return name\n"
    )
    repo.commit(
        "Add (#1)",
        {
            "src/a.py": "timeout = 30\nretries = 3\n",
            "src/b.py": checked,
            "src/c.py": "LIMIT = 1\n",
            "src/e.py": "LIMIT = 1\n",
        },
    )
    moved = (
        "def f(user):\n    name = user.name\n    if user is None:\n        raise ValueError(user)\n"
        "    return name\n"
    )
    facts = facts_of(
        repo,
        "Change (#2)",
        # `timeout` is gone and `retries` changed: not "`timeout = 30` becomes `retries = 5`";
        # the check moved below a line: not "drops `if user is None:`"; the same edit in two
        # files is quoted once.
        {
            "src/a.py": "retries = 5\n",
            "src/b.py": moved,
            "src/c.py": "LIMIT = 2\n",
            "src/e.py": "LIMIT = 2\n",
        },
    )
    assert facts.edits == (
        LineEdit("src/a.py", "retries = 3", "retries = 5"),
        LineEdit("src/c.py", "LIMIT = 1", "LIMIT = 2"),
    )


def test_edits_read_rust_panics_and_no_prose_or_import_lists(repo: RepoBuilder) -> None:
    doc = "".join(f"    line {n} of the prose.\n" for n in range(12))
    python = f'def f():\n    """Doc.\n\n{doc}    """\n    return 1\n'
    rust = "fn f(x: u8) -> u8 {\n    let y = x + 1;\n    y\n}\n"
    repo.commit("Add (#1)", {"src/f.py": python, "src/f.rs": rust, "src/g.py": "from m import a\n"})
    facts = facts_of(
        repo,
        "Change (#2)",
        {
            # a hunk that begins inside a docstring reads its lines as prose
            "src/f.py": python.replace("line 10 of the prose", "line ten of the prose"),
            "src/f.rs": rust.replace(
                "    y\n", '    if y == 0 {\n        panic!("zero");\n    }\n    y\n'
            ),
            "src/g.py": "from m import a, b\n",
        },
    )
    assert facts.edits == (LineEdit("src/f.rs", "", 'if y == 0 { panic!("zero"); }'),)


def test_a_condition_rewritten_is_quoted_as_one_edit(repo: RepoBuilder) -> None:
    base = "def f(segment):\n    x = 1\n    if '?' in segment:\n        x = 2\n    return x\n"
    repo.commit("Add (#1)", {"src/url.py": base})
    new = base.replace("if '?' in segment:", "if len(segment) > 1 and ord(segment[-1]) == 63:")
    facts = facts_of(repo, "Only a trailing mark (#2)", {"src/url.py": new})
    # not "drops `if '?' in segment:`" and "adds …": the check is there, with another condition
    assert facts.edits == (
        LineEdit(
            "src/url.py", "if '?' in segment:", "if len(segment) > 1 and ord(segment[-1]) == 63:"
        ),
    )


def test_assertions_quote_the_checks_tests_add_whole_and_once(repo: RepoBuilder) -> None:
    old = "def test_parse():\n    assert parse('a') == ['a']\n    assert parse('') == []\n"
    repo.commit("Add (#1)", {"tests/test_parse.py": old, "src/parse.py": "x = 1\n"})
    new = (
        "def test_parse():\n    assert parse('a b') == ['a', 'b']\n"
        "    assert parse('') == []\n"
        "    assert parse('a') == ['a']\n"  # moved below: not a check the PR adds
        "    self.assertEqual(parse('c'), ['c'])\n"
        "    self.assertEqual(parse('c'), ['c'])\n"  # the same check again: quoted once
        "    assert parse(\n        'd',\n    ) == ['d']\n"  # cut before what it expects
        "    # assert nothing, a comment\n"
    )
    facts = facts_of(
        repo,
        "Split on spaces (#2)",
        {
            "tests/test_parse.py": new,
            "tests/split.test.ts": "expect(parse('a b')).toEqual(['a', 'b'])\n",
            "src/parse.py": "assert_ok = 2\n",  # no test file: no check
        },
    )
    assert facts.assertions == (
        Assertion("tests/split.test.ts", "expect(parse('a b')).toEqual(['a', 'b'])"),
        Assertion("tests/test_parse.py", "assert parse('a b') == ['a', 'b']"),
        Assertion("tests/test_parse.py", "self.assertEqual(parse('c'), ['c'])"),
    )


def test_a_pr_of_documents_only_is_told_by_its_sentences_and_sections(repo: RepoBuilder) -> None:
    readme = "# Tool\n\nInstall it with pip.\n\n## Usage\n\nRun it.\n"
    repo.commit("Add docs (#1)", {"README.md": readme, "CHANGELOG.md": "# 1.0\n"})
    new = readme.replace("with pip.", "with pipx.") + "\n## Shell completion\n\nSee below.\n"
    facts = facts_of(
        repo,
        "Document completion (#2)",
        # a changelog's headings are versions; a first-level `#` may be a comment in a fence
        {"README.md": new + "```\n# Bash\n```\n", "CHANGELOG.md": "# 1.0\n\n## 1.1\n"},
    )
    assert facts.edits == (
        LineEdit("README.md", "Install it with pip.", "Install it with pipx."),
        LineEdit("README.md", "", "## Shell completion"),
    )
    # A PR that changes code is told by its code, not by its documents.
    facts = facts_of(
        repo,
        "Add a module (#3)",
        {"README.md": readme + "\n## API\n", "src/new.py": "def f():\n    return 1\n"},
    )
    assert facts.edits == ()


def test_the_repository_tells_an_edits_precedent_and_leftover(repo: RepoBuilder) -> None:
    import jsonschema

    from prsum.render import card_to_dict
    from prsum.types import Card
    from tests.pipeline import cards_for
    from tests.test_render import SCHEMA

    scores = (
        "def advantage(scores, index):\n"
        "    g = as_index(index, device=scores.device)\n"
        "    mean = group_mean(scores, g)\n"
        "    return scores - mean\n"
    )
    other = "def baseline(scores, g):\n    mean = group_mean(scores, g)\n    return mean\n"
    repo.commit("Add (#1)", {"src/adv.py": scores, "src/other.py": other})
    fixed = scores.replace("group_mean(scores, g)", "group_mean(scores, g, device=scores.device)")
    repo.commit("Pass the device (#2)", {"src/adv.py": fixed})
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card)
    # the unchanged call above already passed the device; src/other.py still does not
    assert card.body.summary.endswith(
        "`g = as_index(index, device=scores.device)`, unchanged in `src/adv.py`, already has "
        "`device=scores.device`. The old `mean = group_mean(scores, g)` still stands in "
        "`src/other.py` (1 line). The lines it removes were last changed in #1 (“Add”), "
        "merged less than a day earlier. Start with `advantage` in `src/adv.py`."
    )
    # JSON cards carry the echoes their sentences stand on
    document = card_to_dict(card)
    jsonschema.validate(document, SCHEMA)
    assert [echo["kind"] for echo in document["facts"]["echoes"]] == ["precedent", "leftover"]
    # a text this short or plain is written everywhere: no echo
    repo.commit("Again (#3)", {"src/adv.py": fixed.replace("scores - mean", "scores - mean * 2")})
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card) and card.facts.edits and not card.facts.echoes


def echoes_of(repo: RepoBuilder, message: str, files: dict[str, str | bytes | None]) -> str:
    """The summary of a facts card for a PR made of `files`."""
    from prsum.types import Card
    from tests.pipeline import cards_for

    repo.commit(message, files)
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card)
    return card.body.summary


def test_an_echo_is_a_line_the_pr_did_not_write_and_a_whole_name(repo: RepoBuilder) -> None:
    base = "def f(x, cfg):\n    y = conv(x, other_device=x.device_type)\n    data = fetch(x)\n"
    admin = "def g(uid):\n    borrow = get_user(uid)\n    return borrow\n"
    repo.commit("Add (#1)", {"src/a.py": base, "src/admin.py": admin, "src/u.py": "row = 1\n"})
    edited = base.replace("data = fetch(x)", "data = fetch(x, device=x.device)")
    # a line the PR adds (masked or not, first in its file or not) is no precedent
    added = (
        'z = auth(token="ghp_' + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + '", device=x.device)\n'
    )
    summary = echoes_of(repo, "Device (#2)", {"src/a.py": "++count;\n" + edited + added})
    assert "already has" not in summary  # nor inside `other_device=x.device_type`
    users = "row = get_user(uid)\nother = 1\n"
    demo = "row = get_user(uid)\n"
    # a line that only begins as the old one did says something else
    longer = "row = get_user(uid).profile\n"
    repo.commit("Users (#3)", {"src/u.py": users, "examples/demo.py": demo, "src/v.py": longer})
    summary = echoes_of(
        repo, "Users (#4)", {"src/u.py": users.replace("(uid)", "(uid, cache=True)")}
    )
    # `borrow = get_user(uid)` holds no `row = get_user(uid)`, nor is
    # `row = get_user(uid).profile` the same line; examples are no product code
    assert "still stands" not in summary


def test_checks_are_whole_new_and_not_data(repo: RepoBuilder) -> None:
    inline = 'fn parse(s: &str) -> usize { s.len() }\n#[test]\nfn t() {\n    assert_eq!(parse("abc"), 3);\n}\n'
    repo.commit("Add (#1)", {"src/lib.rs": inline})
    plugin = 'def test_plugin(pytester):\n    pytester.makepyfile("""\n    def test_x():\n        assert collect(1) == 2\n    """)\n'
    facts = facts_of(
        repo,
        "Assert what parse returns (#2)",
        {
            "src/lib.rs": "fn parse(s: &str) -> usize { s.len() }\n",
            "tests/parse.rs": '#[test]\nfn t() {\n    assert_eq!(parse("abc"), 3);\n}\n',  # moved
            "tests/test_plugin.py": plugin,  # a test's input, in a string
            "tests/data/cases/parens.py": "assert (parse == 1)\n",  # a formatter's input
            "tests/date.test.ts": "expect(parseDate('2024'))\n  .toEqual(2024)\n",  # continued
            "tests/DateTest.java": "assertThat(parse(date));\nassertThat(parse(x)).isEqualTo(2);\n",
        },
    )
    assert facts.assertions == (
        Assertion("tests/DateTest.java", "assertThat(parse(x)).isEqualTo(2);"),
    )


def test_a_section_added_is_a_heading_of_a_markdown_document(repo: RepoBuilder) -> None:
    readme = "# Tool\n\n## Install\n\nUse pip.\nKeep the history\nof every run.\n"
    conf = "x = 1\n"
    repo.commit("Add (#1)", {"README.md": readme, "docs/conf.py": conf, "docs/guide.md": "# G\n"})
    facts = facts_of(
        repo,
        "Docs (#2)",
        {
            # renamed, not added; a line of prose that begins with "for" is no loop
            "README.md": readme.replace("## Install", "## Installation").replace(
                "history\n", "history\nfor a week with --long,\n"
            ),
            "docs/conf.py": conf + "\n## Options for HTML output\n\ny = 2\n",  # a comment
            "docs/guide.md": "# G\n\n```bash\n## install the hooks first\nmake hooks\n```\n\n## Usage\n\nRun it.\n",
        },
    )
    assert facts.edits == (
        LineEdit("README.md", "## Install", "## Installation"),
        LineEdit("docs/guide.md", "", "## Usage"),
    )


def test_lines_inserted_into_configuration_or_a_list_are_quoted(repo: RepoBuilder) -> None:
    matrix = "jobs:\n  test:\n    go:\n      - 22\n      - 23\n    steps: []\n"
    users = "# Users\n\n- [Alpha](https://alpha.example)\n- [Beta](https://beta.example)\n\nThanks to\nall of you.\n"
    repo.commit("Add (#1)", {".github/workflows/test.yml": matrix, "USERS.md": users})
    facts = facts_of(
        repo,
        "Test with Go 1.24 (#2)",
        {".github/workflows/test.yml": matrix.replace("23\n", "23\n      - 24\n")},
    )
    assert facts.edits == (LineEdit(".github/workflows/test.yml", "", "- 24"),)
    # In a document only an item of a list stands alone: a line of prose is part of a paragraph.
    listed = users.replace("example)\n\n", "example)\n- [Gamma](https://gamma.example)\n\n")
    facts = facts_of(
        repo, "Add Gamma (#3)", {"USERS.md": listed.replace("to\n", "to\nevery one of\n")}
    )
    assert facts.edits == (LineEdit("USERS.md", "", "- [Gamma](https://gamma.example)"),)
    # An item wrapped over two lines would be quoted cut: it is not quoted, its link is.
    repo.commit("Tidy (#4)", {"USERS.md": listed})
    wrapped = "- [Delta](https://delta.example), a library that\n  renders charts.\n"
    facts = facts_of(
        repo, "Add Delta (#5)", {"USERS.md": listed.replace("\n\nThanks", f"\n{wrapped}\nThanks")}
    )
    assert facts.edits == (LineEdit("USERS.md", "", "https://delta.example"),)
    # A key moved to another block (and given another value) is no key added; and where the
    # PR's documents say what it does, a line inserted into its configuration is not quoted.
    config = "client:\n  retries: 3\n  timeout: 30\nserver:\n  port: 80\n"
    repo.commit(
        "Add config (#6)", {"config.yml": config, "mkdocs.yml": "nav:\n  - Home: index.md\n"}
    )
    moved = "client:\n  retries: 3\nserver:\n  port: 80\n  timeout: 60\n"
    facts = facts_of(repo, "Server timeout (#7)", {"config.yml": moved})
    assert facts.edits == ()
    facts = facts_of(
        repo,
        "Add a guide (#8)",
        {
            "mkdocs.yml": "nav:\n  - Home: index.md\n  - Guide: guide.md\n",
            "docs/guide.md": "# Guide\n\n## Install\n\nRun it.\n",
        },
    )
    assert facts.edits == (LineEdit("docs/guide.md", "", "## Install"),)
    # A PR that changes code is told by its code: a CI line it inserts is no edit of it.
    facts = facts_of(
        repo,
        "Go 1.25 and a limit (#9)",
        {
            ".github/workflows/test.yml": matrix.replace("23\n", "23\n      - 24\n      - 25\n"),
            "src/app.py": "LIMIT = 1\n",
        },
    )
    assert facts.edits == ()


@pytest.mark.parametrize(
    ("body", "account"),
    [
        # the first paragraph of prose, under a template's heading, whole sentences
        (
            "### What does this PR do?\n\n> `get_device()` returns a module, not a device;\n"
            "> we build the device from its name.\n\n### Test\n\nRan the suite. It passed.\n",
            "`get_device()` returns a module, not a device; we build the device from its name.",
        ),
        # two sentences at most; a link shown as its text, its URL's brackets too; no split
        # after "e.g." or an initial
        (
            "With this [vllm change](https://example.com/a_(b)), preempted requests, e.g. "
            "`SIGTERM`, are counted by J. Doe. The counter is exported as a gauge. Nothing "
            "else changes here at all.\n\nSigned-off-by: Ada <ada@example.com>\n",
            "With this vllm change, preempted requests, e.g. `SIGTERM`, are counted by J. Doe. "
            "The counter is exported as a gauge.",
        ),
        # trailers end a paragraph, the kernel's included
        (
            "The cache is now written back before the process exits.\n"
            'Fixes: 1a2b3c4d5e6f ("cache: keep entries")\nCc: stable@example.org\n',
            "The cache is now written back before the process exits.",
        ),
        # after the title said again (a merge's body), a title such as "Mr." is no stop
        (
            "Support offloading the model and optimizer\n\nThe slow upload was reported by "
            "Mr. Smith on a VPN. It is retried now.\n",
            "The slow upload was reported by Mr. Smith on a VPN.",
        ),
        # Chinese is read by its characters, its lines joined without a space, its stops
        # inside a quote no stops
        (
            "修复了进程退出时缓存未写回\n磁盘的问题（例如返回“连接超时。”时）。原因是写回在退出之后。\n",
            "修复了进程退出时缓存未写回磁盘的问题（例如返回“连接超时。”时）。原因是写回在退出之后。",
        ),
        # a first sentence that says nothing ("as title.") leaves nothing to quote
        ("> as title. The parser now keeps every trailing newline it reads.\n", ""),
        # lines tools write are no prose, however long
        ("See merge request platform/backend-services-and-the-parser-of-every-header!42\n", ""),
        (
            "This reverts commit 0123456789abcdef0123, which broke the parser for every user.\n",
            "",
        ),
        (
            "Co-authored-by: Ada Lovelace Byron King Countess <ada@example.com>\n"
            "Signed-off-by: Charles Babbage Difference Engine Inventor <cb@example.com>\n",
            "",
        ),
        ("(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)\n", ""),
        # a squash's list of commits (and a commit's body after it), HTML, a bold heading's line
        (
            "* Add retry\n\n* fix lint\n\nThe linter flags unused imports in the retry module.\n",
            "",
        ),
        ('<img width="812" alt="Screenshot of the new parser output" src="x.png" />\n', ""),
        ("**Why is this change needed?** Previously two workers took the same job.\n", ""),
        # a paragraph cut by a list, a fence, an underline or a numbered line is not whole
        ("The scheduler loop and worker pool change as follows.\n- the loop waits\n", ""),
        ("Calling the parser on a file such as\n```\nx\n```\nwould crash it.\n", ""),
        ("Motivation behind this change and its context\n---\n\nMore.\n", ""),
        ("The default timeout is raised from 30 to\n60. Slow mirrors now finish.\n", ""),
        # a list item's wrapped line is no paragraph of its own
        ("- Fix the race in the scheduler where two\n  workers could take the same job.\n", ""),
        # a sentence that introduces what follows, or has no end, is not quoted without it
        ("To prevent a device mismatch in training runs for:\n```\nTraceback\n```\n", ""),
        ("Extend the policy recipe with a second rollout engine for FSDP\n", ""),
        # a template's words to its reader
        ("Please include a summary of the change and which issue it fixes.\n", ""),
        # backticks the card could not show as the body has them
        ("Pressing the ` key now opens the console in every view of the app.\n", ""),
        ("The option `--no-\ncache` now skips the cache for every single run.\n", ""),
        ("The parser accepts \\`<b>` in every header field from now on.\n", ""),
        # the title said again adds nothing
        ("Support offloading of the model and the optimizer to the host.\n", ""),
        # longer than a quote can be, and no sentence to stop at
        (" ".join(f"part{index}" for index in range(80)) + ".\n", ""),
    ],
)
def test_the_authors_account_is_the_first_prose_beyond_the_title(body: str, account: str) -> None:
    assert stated_account("Support offloading the model and optimizer", body) == account


def test_the_authors_account_prefers_the_pr_description_carried_in(repo: RepoBuilder) -> None:
    repo.commit("Add (#1)", {"src/app.py": "LIMIT = 1\n"})
    message = "Raise the limit (#2)\n\nThe old limit dropped every request after the first one.\n"
    repo.commit(message, {"src/app.py": "LIMIT = 2\n"})
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    assert compute_facts(pr, history.diff(pr)).account == (
        "The old limit dropped every request after the first one."
    )
    meta = PrMeta("prs.json", "Queues grew without bound when the limit was one.", (), None, (), ())
    described = replace(pr, meta=meta)
    assert compute_facts(described, history.diff(pr)).account == meta.body
    # Tests change no behaviour: what a tests-only PR's description says of a fix is about
    # another PR's code.
    facts = facts_of(
        repo,
        "Test the limit (#3)\n\nThe old limit dropped every request after the first one.\n",
        {"tests/test_app.py": "def test_limit():\n    assert LIMIT == 2\n"},
    )
    assert facts.account == ""


def origin_card(repo: RepoBuilder, message: str, files: dict[str, str | bytes | None]) -> Card:
    """The facts card (en) of a PR made of `files`."""
    from tests.pipeline import cards_for

    repo.commit(message, files)
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card)
    return card


def test_the_origin_is_the_pr_that_last_changed_most_of_the_removed_lines(
    repo: RepoBuilder,
) -> None:
    import jsonschema

    from prsum.render import card_to_dict
    from tests.test_render import SCHEMA

    repo.commit("Use `frobnicate` (#1)", {"src/a.py": "x = frobnicate(1)\ny = 2\nz = 3\n"})
    repo.commit("Add b (#2)", {"src/b.py": "p = 1\nq = 2\n"})
    repo.day = 5
    card = origin_card(repo, "Tune (#3)", {"src/a.py": "x = 10\ny = 20\nz = 3\n"})
    assert card.facts.origin == Origin("#1", "Use `frobnicate`", 5, whole=True)
    # the earlier title is quoted as it is: its names need not be in this PR
    assert (
        "The lines it removes were last changed in #1 (“Use `frobnicate`”), merged 5 days "
        "earlier." in card.body.summary
    )
    jsonschema.validate(card_to_dict(card), SCHEMA)
    # more than half: "most"; the lines #3 wrote count as #3's
    card = origin_card(repo, "Again (#4)", {"src/a.py": "x = 11\ny = 21\nz = 4\n"})
    assert card.facts.origin == Origin("#3", "Tune", 0, whole=False)
    assert "Most of the lines it removes were last changed in #3" in card.body.summary
    # half and half: no PR holds most of them
    repo.commit("Add c (#5)", {"src/c.py": "m = 1\nn = 2\n"})
    card = origin_card(
        repo, "Both (#6)", {"src/a.py": "x = 12\ny = 22\nz = 4\n", "src/c.py": "m = 0\n"}
    )
    assert card.facts.origin is None and "last changed" not in card.body.summary


def test_an_origin_counts_every_file_and_skips_a_revert_that_names_its_pr(
    repo: RepoBuilder,
) -> None:
    repo.commit("Pin (#1)", {"uv.lock": "a = 1\nb = 2\nc = 3\n", "src/a.py": "x = 1\n"})
    repo.commit("Tweak (#2)", {"src/a.py": "x = 5\n"})
    # the lock file's lines are lines it removes: #1 wrote 2 of the 3, not the source line
    card = origin_card(
        repo, "Bump (#3)", {"uv.lock": "a = 3\nb = 4\nc = 3\n", "src/a.py": "x = 1\n"}
    )
    assert card.facts.origin == Origin("#1", "Pin", 0, whole=False)
    repo.commit("Change x (#4)", {"src/a.py": "x = 2\n"})
    reverted = repo.head()
    card = origin_card(
        repo, f'Revert "Change x" (#5)\n\nThis reverts commit {reverted}.', {"src/a.py": "x = 1\n"}
    )
    assert card.pr.reverts == "#4" and card.facts.origin is None


def test_an_origin_title_a_lock_files_versions_and_settings_are_masked_under_redaction(
    repo: RepoBuilder,
) -> None:
    from tests.pipeline import cards_for

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    repo.commit(f"Rotate {token} (#1)", {"src/a.py": "x = 1\n"})
    repo.commit("Change x (#2)", {"src/a.py": "x = 2\n"})
    (card,) = cards_for(
        repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False, redact=True
    )
    assert isinstance(card, Card) and card.facts.origin is not None
    assert token not in card.facts.origin.title and token not in card.body.summary
    # a lock file's version may be a URL with a token in it
    entry = '    "x": ["x@git+https://{}@github.com/o/r#abc", ""],\n'
    repo.commit("Lock (#3)", {"bun.lock": '{\n  "packages": {\n  },\n}\n'})
    repo.commit(
        "Pin x (#4)", {"bun.lock": '{\n  "packages": {\n' + entry.format(token) + "  },\n}\n"}
    )
    (card,) = cards_for(
        repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False, redact=True
    )
    assert isinstance(card, Card) and card.facts.locks
    assert token not in card.facts.locks[0].after and token not in card.body.summary
    # and a setting's value may be one
    repo.commit("Set (#5)", {"ci.yml": f"env:\n  GH_TOKEN: {token}\n  password: hunter2-Sup3r\n"})
    (card,) = cards_for(
        repo.path, "HEAD~1..HEAD", strategy="facts", lang="zh", cache=False, redact=True
    )
    assert isinstance(card, Card) and card.facts.settings
    assert token not in card.facts.settings[0].after and token not in card.body.summary
    assert "hunter2" not in card.body.summary  # a value masked as its key's line would be
    assert (
        "新文件 `ci.yml` 中，新设 `env.GH_TOKEN` 为 `[REDACTED]`；新设 `env.password` 为 "
        "`[REDACTED]`。" in card.body.summary
    )


def test_a_release_tells_what_was_merged_since_the_version_last_changed(
    repo: RepoBuilder,
) -> None:
    import jsonschema

    from prsum.render import card_to_dict
    from tests.test_render import SCHEMA

    repo.commit("Start (#1)", {"pyproject.toml": '[project]\nversion = "0.9"\n'})
    released = repo.commit("Release 1.0", {"pyproject.toml": '[project]\nversion = "1.0"\n'})
    repo.branch("stable")
    repo.commit("Fix c on stable", {"src/c.py": "c = 1\n"})
    repo.checkout("main")
    repo.day = 3
    repo.commit("Add a (#2)", {"src/a.py": "".join(f"a{n} = {n}\n" for n in range(10))})
    repo.commit("Fix b (#3)", {"src/b.py": "b = 1\n"})
    repo.merge("stable", "Merge branch 'stable'")
    repo.commit("Say so (#4)", {"README.md": "# demo, documented\n"})
    tidy = repo.commit("Tidy", {"src/b.py": "b = 2\n"})  # a line removed and one added
    card = origin_card(repo, "Release 1.1 (#6)", {"pyproject.toml": '[project]\nversion = "1.1"\n'})
    assert card.facts.category == "release"
    assert card.facts.release == Release(
        label=released[:7],
        title="Release 1.0",
        days=3,
        prs=3,
        direct=1,
        syncs=1,
        largest=(Shipped("#2", "Add a"), Shipped(tidy[:7], "Tidy"), Shipped("#3", "Fix b")),
    )
    assert (
        f"Since the version last changed, in {released[:7]} (“Release 1.0”), 3 days earlier, 3 "
        "PRs were merged, 1 commit was made directly and other branches were merged in once; "
        "those that change the most source lines are #2 (“Add a”), " in card.body.summary
    )
    assert "last changed in" not in card.body.summary  # the same change, named once
    jsonschema.validate(card_to_dict(card), SCHEMA)
    # A revert, and the change it reverts, are not what a release ships.
    repo.commit("Add d (#9)", {"src/d.py": "".join(f"d{n} = {n}\n" for n in range(20))})
    repo.git("revert", "--no-edit", "HEAD")
    card = origin_card(
        repo, "Release 1.2 (#10)", {"pyproject.toml": '[project]\nversion = "1.2"\n'}
    )
    assert card.facts.release is not None and card.facts.release.prs == 1
    assert card.facts.release.largest == ()
    # A reformat last touched the version line: it did not change the version.
    repo.commit("Format (#11)", {"pyproject.toml": '[project]\nversion="1.2"\n'})
    card = origin_card(repo, "Release 1.3 (#12)", {"pyproject.toml": '[project]\nversion="1.3"\n'})
    assert card.facts.category == "release" and card.facts.release is None
    # Version lines set by two different changes: no one change to count from.
    repo.commit("Add the version (#7)", {"src/_version.py": '__version__ = "1.0"\n'})
    repo.commit("Set it (#8)", {"src/_version.py": '__version__ = "1.1"\n'})
    card = origin_card(
        repo,
        "Release 1.4 (#13)",
        {
            "pyproject.toml": '[project]\nversion="1.4"\n',
            "src/_version.py": '__version__ = "1.4"\n',
        },
    )
    assert card.facts.category == "release" and card.facts.release is None


def test_a_release_right_after_a_rebase_merged_one_ships_nothing_to_tell(
    repo: RepoBuilder,
) -> None:
    repo.commit("Start (#1)", {"pyproject.toml": '[project]\nversion = "0.9"\n'})
    # #5 was rebase-merged: two commits on the line, the first sets the version.
    repo.commit("Set the version (#5)", {"pyproject.toml": '[project]\nversion = "1.0"\n'})
    repo.commit("Write the notes (#5)", {"CHANGES.md": "## 1.0\n"})
    card = origin_card(repo, "Release 1.1 (#6)", {"pyproject.toml": '[project]\nversion = "1.1"\n'})
    assert card.facts.category == "release" and card.facts.release is None
    assert "Since the version" not in card.body.summary


def test_what_a_release_ships_is_masked_under_redaction(repo: RepoBuilder) -> None:
    from tests.pipeline import cards_for

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    repo.commit("Start (#1)", {"pyproject.toml": '[project]\nversion = "0.9"\n'})
    repo.commit(f"Release 1.0 {token}", {"pyproject.toml": '[project]\nversion = "1.0"\n'})
    repo.commit(f"Rotate {token} (#2)", {"src/a.py": "x = 1\n"})
    repo.commit("Release 1.1 (#3)", {"pyproject.toml": '[project]\nversion = "1.1"\n'})
    (card,) = cards_for(
        repo.path, "HEAD~1..HEAD", strategy="facts", lang="zh", cache=False, redact=True
    )
    assert isinstance(card, Card) and card.facts.release is not None
    assert "合并了 1 个 PR" in card.body.summary and token not in card.body.summary
    assert token not in card.facts.release.title + card.facts.release.largest[0].title


def lock_file(*packages: tuple[str, str]) -> str:
    """A TOML lock file (Cargo.lock, uv.lock) pinning `packages`."""
    return "version = 4\n\n" + "".join(
        f'[[package]]\nname = "{name}"\nversion = "{version}"\n\n' for name, version in packages
    )


def test_lock_files_tell_the_packages_whose_pins_move(repo: RepoBuilder) -> None:
    repo.commit(
        "Add deps (#1)", {"Cargo.lock": lock_file(("etcetera", "0.10.0"), ("home", "0.5.9"))}
    )
    lock = lock_file(("etcetera", "0.11.0"), ("libc", "0.2.1"))
    card = origin_card(repo, "Update etcetera (#2)", {"Cargo.lock": lock})
    assert card.facts.locks == (
        LockChange("Cargo.lock", "etcetera", "0.10.0", "0.11.0"),
        LockChange("Cargo.lock", "home", "0.5.9", ""),
        LockChange("Cargo.lock", "libc", "", "0.2.1"),
    )
    assert (
        "In `Cargo.lock`, `etcetera` 0.10.0 becomes 0.11.0; `home` 0.5.9 is dropped; `libc` "
        "0.2.1 is added." in card.body.summary
    )
    # a lock file refreshed wholesale: only the package the title names, and a count
    many = [(f"crate{index}", "2.0.0") for index in range(8)]
    card = origin_card(repo, "Bump libc (#3)", {"Cargo.lock": lock_file(("libc", "0.3.0"), *many)})
    assert "In `Cargo.lock`, `libc` 0.2.1 becomes 0.3.0; 9 more packages change." in (
        card.body.summary
    )
    refreshed = [(name, "3.0.0") for name, _ in many]
    card = origin_card(repo, "Refresh (#4)", {"Cargo.lock": lock_file(*refreshed)})
    assert "In `Cargo.lock`, the pinned versions of 9 packages change." in card.body.summary


@pytest.mark.parametrize(
    ("path", "old", "new", "changes"),
    [
        (
            "package-lock.json",
            '{"packages": {"": {"version": "1.0.0"}, "node_modules/a": {"version": "1.0.0"}}}',
            '{"packages": {"": {"version": "1.1.0"}, "node_modules/x/node_modules/a": '
            '{"version": "2.0.0"}, "node_modules/a": {"version": "1.0.0"}}}',
            [("a", "1.0.0", "1.0.0, 2.0.0")],
        ),
        (  # lockfile v1 has no `packages`: no side is read as empty
            "package-lock.json",
            '{"lockfileVersion": 1, "dependencies": {"a": {"version": "1.0.0"}}}',
            '{"packages": {"node_modules/a": {"version": "1.0.0"}, "packages/web": '
            '{"version": "0.1.0"}}}',
            [],
        ),
        (
            "bun.lock",
            '{\n  "packages": {\n    "@hono/x": ["@hono/x@1.0.0", "", {}, "sha"],\n  },\n}\n',
            '{\n  "packages": {\n    "@hono/x": ["@hono/x@1.1.0", "", {}, "sha"],\n  },\n}\n',
            [("@hono/x", "1.0.0", "1.1.0")],
        ),
        (
            "go.sum",
            "github.com/spf13/pflag v1.0.8 h1:a=\ngithub.com/spf13/pflag v1.0.8/go.mod h1:b=\n",
            "github.com/spf13/pflag v1.0.9 h1:c=\ngithub.com/spf13/pflag v1.0.9/go.mod h1:d=\n",
            [("github.com/spf13/pflag", "v1.0.8", "v1.0.9")],
        ),
        (  # the old version's `/go.mod` hash stays behind: no pin
            "go.sum",
            "github.com/spf13/pflag v1.0.8 h1:a=\ngithub.com/spf13/pflag v1.0.8/go.mod h1:b=\n",
            "github.com/spf13/pflag v1.0.8/go.mod h1:b=\ngithub.com/spf13/pflag v1.0.9 h1:c=\n",
            [("github.com/spf13/pflag", "v1.0.8", "v1.0.9")],
        ),
        ("uv.lock", "not toml [", 'version = 1\n[[package]]\nname = "a"\nversion = "1"\n', []),
        ("Cargo.lock", "[tool]\nx = 1\n", '[[package]]\nname = "a"\nversion = "1"\n', []),
        (
            "go.sum",
            "version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 12\n",
            "github.com/spf13/pflag v1.0.9 h1:c=\n",
            [],
        ),
        ("yarn.lock", "a@^1:\n  version 1.0.0\n", "a@^1:\n  version 1.1.0\n", []),
    ],
)
def test_each_lock_format_is_read_whole_and_what_cannot_be_read_says_nothing(
    path: str, old: str, new: str, changes: list[tuple[str, str, str]]
) -> None:
    from prsum.facts.locks import lock_changes
    from prsum.types import FileDiff

    blobs = {"1" * 40: old.encode(), "2" * 40: new.encode()}
    patch = f"diff --git a/{path} b/{path}\nindex {'1' * 40}..{'2' * 40} 100644\n"
    found = lock_changes((FileDiff(path, patch),), lambda sha, limit: blobs.get(sha))
    assert [(c.name, c.before, c.after) for c in found] == changes


def test_configuration_files_tell_the_settings_they_add_change_and_remove(
    repo: RepoBuilder,
) -> None:
    import jsonschema

    from prsum.render import card_to_dict
    from tests.test_render import SCHEMA

    cargo = '[package]\nname = "fd"\nedition = "2021"\n\n[dependencies]\nclap = "4"\n'
    workflow = (
        "on: push\njobs:\n  build:\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - name: Install cross\n        uses: taiki-e/install-action@v2\n"
    )
    repo.commit("Add (#1)", {"Cargo.toml": cargo, ".github/workflows/ci.yml": workflow})
    cargo = cargo.replace("2021", "2024").replace('"4"', '"5"') + (
        '\n[profile.debugging]\ninherits = "dev"\ndebug = true\n'
    )
    workflow = workflow.replace("@v4", "@v5").replace(
        "uses: taiki-e/install-action@v2", "run: cargo install cross"
    )
    card = origin_card(
        repo, "Build changes (#2)", {"Cargo.toml": cargo, ".github/workflows/ci.yml": workflow}
    )
    # the dependency (a bump) and the pinned reference moved are the bump sentences' to tell
    assert card.facts.settings == (
        SettingChange(
            ".github/workflows/ci.yml",
            "jobs.build.steps[Install cross].run",
            "added",
            "",
            "cargo install cross",
        ),
        SettingChange(
            ".github/workflows/ci.yml",
            "jobs.build.steps[Install cross].uses",
            "removed",
            "taiki-e/install-action@v2",
            "",
        ),
        SettingChange("Cargo.toml", "package.edition", "changed", "2021", "2024"),
        SettingChange(
            "Cargo.toml", "profile.debugging", "added", "", '{"inherits": "dev", "debug": true}'
        ),
    )
    # a quoted edit tells a setting's change once: the sentence tells what no edit shows
    assert (
        'In `Cargo.toml`, `edition = "2021"` becomes `edition = "2024"`. In `Cargo.toml`, it '
        'sets `profile.debugging` to `{"inherits": "dev", "debug": true}`. In '
        "`.github/workflows/ci.yml`, it removes `jobs.build.steps[Install cross].uses` "
        "(`taiki-e/install-action@v2`); sets `jobs.build.steps[Install cross].run` to "
        "`cargo install cross`." in card.body.summary
    )
    jsonschema.validate(card_to_dict(card), SCHEMA)


def test_a_setting_moved_is_told_as_a_move_in_both_languages(repo: RepoBuilder) -> None:
    import jsonschema

    from prsum.render import card_to_dict
    from tests.pipeline import cards_for
    from tests.test_render import SCHEMA

    old = "run:\n  deadline: 5m\nlinters:\n  enable:\n    - gofmt\n    - vet\n"
    repo.commit("Add lint (#1)", {".golangci.yml": old})
    new = "version: '2'\nrun:\n  timeout: 5m\nlinters:\n  enable:\n    - vet\nformatters:\n  enable:\n    - gofmt\n"
    repo.commit("Lint v2 (#2)", {".golangci.yml": new})
    moved = "`run.deadline`"
    for lang, told in [
        (
            "en",
            f"it moves {moved} to `run.timeout` (`5m`); moves `gofmt` from `linters.enable` to "
            "`formatters.enable`; sets `version` to `2`.",
        ),
        (
            "zh",
            f"{moved}（`5m`）移到 `run.timeout`；`gofmt` 从 `linters.enable` 移到 `formatters.enable`",
        ),
    ]:
        (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang=lang, cache=False)
        assert isinstance(card, Card)
        assert told in card.body.summary
        jsonschema.validate(card_to_dict(card), SCHEMA)


def test_a_setting_changed_alike_in_several_files_is_told_once(repo: RepoBuilder) -> None:
    from tests.pipeline import cards_for

    flows = [f".github/workflows/w{n}.yml" for n in range(4)]
    job = "env:\n  IMAGE: {}\njobs:\n  t:\n    runs-on: {}\n"
    repo.commit("Add (#1)", {path: job.format("img:1", "linux") for path in flows})
    changed = {path: job.format("img:2", "linux") for path in flows[:3]}
    repo.commit("Bump (#2)", {**changed, flows[3]: job.format("img:1", "mac")})
    told = {
        "en": "In 3 files, it changes `env.IMAGE` from `img:1` to `img:2`: "
        "`.github/workflows/w0.yml`, `.github/workflows/w1.yml` and 1 more.",
        "zh": "3 个文件中，`env.IMAGE` 从 `img:1` 改为 `img:2`："
        "`.github/workflows/w0.yml`、`.github/workflows/w1.yml` 等。",
    }
    for lang, sentence in told.items():
        (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang=lang, cache=False)
        assert isinstance(card, Card)
        summary = card.body.summary
        # told once (no quoted line says it again), beside the file whose change is its own
        assert sentence in summary
        assert summary.count("img:2") == 1
        assert "mac" in summary


def test_a_spread_counts_files_told_by_their_edits_and_leaves_new_files_out(
    repo: RepoBuilder,
) -> None:
    from tests.pipeline import cards_for

    config = '{{\n  "compilerOptions": {{\n    "target": "{}",\n    "strict": true\n  }}\n}}\n'
    files = [f"packages/{name}/tsconfig.json" for name in "abcd"]
    repo.commit("Add (#1)", {path: config.format("es2019") for path in files})
    commented = "// shared\n" + config.format("es2022")  # JSON with comments: not parsed
    new = {f"packages/{name}/tsconfig.json": config.format("es2022") for name in "xyz"}
    changed = {path: config.format("es2022") for path in files[:3]}
    repo.commit("Target es2022 (#2)", {**changed, files[3]: commented, **new})
    (card,) = cards_for(repo.path, "HEAD~1..HEAD", strategy="facts", lang="en", cache=False)
    assert isinstance(card, Card)
    # four files change it (one told by its quoted line); the three new ones only set it
    assert "In 4 files, it changes `compilerOptions.target` from `es2019` to `es2022`" in (
        card.body.summary
    )
    assert "In 7 files" not in card.body.summary


def test_a_settings_value_is_quoted_as_the_file_has_it(repo: RepoBuilder) -> None:
    nav = "nav:\n  - index.md\n  - env.md\n  - Guide:\n      - a.md\n"
    repo.commit("Add (#1)", {"mkdocs.yml": nav, "docs/env.md": "# Env\n"})
    files = {"mkdocs.yml": nav.replace("  - env.md\n", ""), "docs/env.md": None}
    card = origin_card(repo, "Drop the env page (#2)", files)
    # `env.md` is the nav's value, not the bare name of `docs/env.md` to be completed
    assert "In `mkdocs.yml`, it removes `env.md` from `nav`." in card.body.summary


@pytest.mark.parametrize(
    ("path", "old", "new", "changes"),
    [
        (  # YAML's scalars as written: `3.10` is no 3.1, `on` no boolean, quotes no change
            "ci.yml",
            "on: push\npython: 3.10\nname: x\n",
            "on: [push, pull_request]\npython: '3.12'\nname: 'x'\n",
            [
                ("on", "changed", "push", '["push", "pull_request"]'),
                ("python", "changed", "3.10", "3.12"),
            ],
        ),
        (  # unquoted scalars that are no strings stay bare in a list
            "ci.yml",
            "a:\n  x: 1\n",
            "a:\n  x: 1\n  y:\n  z: [1, true, '2']\n",
            [("a.y", "added", "", ""), ("a.z", "added", "", '[1, true, "2"]')],
        ),
        (  # a list of values as a set; a table too long to show, by its keys
            "config.json",
            '{"enable": ["a", "b"]}',
            '{"enable": ["b", "c"], "x": {"' + "k" * 70 + '": 1, "y": {"z": true}}}',
            [
                ("enable", "item_added", "", "c"),
                ("enable", "item_removed", "a", ""),
                ("x." + "k" * 70, "added", "", "1"),
                ("x.y.z", "added", "", "true"),  # a table of one key, by that key
            ],
        ),
        (  # items that no name tells apart, by position while the list keeps its length
            "ci.yml",
            "steps:\n  - run: a\n  - run: a\n",
            "steps:\n  - run: a\n  - run: b\n",
            [("steps[1].run", "changed", "a", "b")],
        ),
        (  # … else as a whole
            "ci.yml",
            "steps:\n  - run: a\n  - run: a\n",
            "steps:\n  - run: a\n",
            [("steps", "changed", '[{"run": "a"}, {"run": "a"}]', '[{"run": "a"}]')],
        ),
        ("a.toml", 'x = "a"\n', "x = [", []),  # a side no reader can read says nothing
        ("tsconfig.json", '{"a": 1, // c\n}', '{"a": 2}', []),  # JSON with comments
        ("a.yml", "a: 1\n---\na: 2\n", "a: 3\n", []),  # several documents
        (  # a manifest's dependencies and own version are told elsewhere
            "package.json",
            '{"version": "1.0.0", "devDependencies": {"a": "1"}, "scripts": {"t": "x"}}',
            '{"version": "1.1.0", "devDependencies": {"a": "2"}, "scripts": {"t": "y"}}',
            [("scripts.t", "changed", "x", "y")],
        ),
        ("README.md", "a: 1\n", "a: 2\n", []),  # no configuration file
        (  # plain values beside a table that stays: those removed
            "mkdocs.yml",
            "nav:\n  - index.md\n  - env.md\n  - Guide:\n      - a.md\n",
            "nav:\n  - index.md\n  - Guide:\n      - a.md\n",
            [("nav", "item_removed", "env.md", "")],
        ),
        (  # a script of several lines: the line of it edited in place
            "ci.yml",
            "run: |\n  make\n  cargo test --bin x\n",
            "run: |\n  make\n  cargo test --bin=x\n",
            [("run", "edited", "cargo test --bin x", "cargo test --bin=x")],
        ),
        (  # … not where other lines change too: they would seem unchanged
            "ci.yml",
            "run: |\n  make\n  cargo test --bin x\n",
            "run: |\n  make\n  cargo test --bin=x\n  curl x | sh\n",
            [("run", "changed", "", "")],
        ),
        # the same text, not the same value: told apart; a NaN unchanged is no change
        ("a.json", '{"a": "true"}', '{"a": true}', [("a", "changed", '"true"', "true")]),
        ("a.toml", "x = nan\ny = 1\n", "x = nan\ny = 2\n", [("y", "changed", "1", "2")]),
        ("a.json", "[1]", "[1, 2]", []),  # a list at the top: no key to name
        (
            "a.json",
            '{"l": ["a"]}',
            '{"l": ["a", "' + "x" * 90 + '"]}',
            [("l", "item_added", "", "")],
        ),
        (  # a merge key merged: the job still has its image
            "ci.yml",
            "d: &d\n  image: node\njob:\n  image: node\n",
            "d: &d\n  image: node\njob:\n  <<: *d\n",
            [],
        ),
        ("a.json", '{"a": {"[x]": 1}}', '{"a": {"[x]": 2}}', [('a."[x]"', "changed", "1", "2")]),
        (
            "a.json",
            '{"m": "a@x.org"}',
            '{"m": "a@y.org"}',
            [("m", "changed", "a@x.org", "a@y.org")],
        ),
        ("a.json", '\ufeff{"a": 1}', '{"a": 2}', [("a", "changed", "1", "2")]),  # a BOM
        (  # a setting renamed and list values moved to a list added whole: moves
            ".golangci.yml",
            "run:\n  deadline: 5m\nlinters:\n  enable: [gofmt, goimports, vet]\n",
            "run:\n  timeout: 5m\nlinters:\n  enable: [vet]\nformatters:\n  enable: [gofmt, goimports]\n",
            [
                ("run.timeout", "moved", "run.deadline", "5m"),
                ("formatters.enable", "item_moved", "linters.enable", "gofmt"),
                ("formatters.enable", "item_moved", "linters.enable", "goimports"),
            ],
        ),
        (  # a value moved between lists that stay
            "a.yml",
            "a: [x, y]\nb: [z]\n",
            "a: [y]\nb: [z, x]\n",
            [("b", "item_moved", "a", "x")],
        ),
        (  # … and into a list added with a new value besides: the list is told too
            "a.yml",
            "a: [x, y]\n",
            "a: [y]\nc: [x, w]\n",
            [("c", "item_moved", "a", "x"), ("c", "added", "", '["x", "w"]')],
        ),
        (  # a list removed whole and a value of another that leaves: one move, no crash
            "a.yml",
            "a: [x]\nb: [x, y]\n",
            "b: [y]\nc: [x]\n",
            [("c", "item_moved", "b", "x"), ("a", "removed", '["x"]', "")],
        ),
        (  # far apart (no shared table or name), a number, a string shown like a list: no move
            "a.yml",
            "j:\n  timeout: 5\n  mode: fast\na: [x, y]\n",
            "j:\n  s:\n    max: 5\n    kind: fast\na: [y]\nc: '[\"x\"]'\n",
            [
                ("j.s", "added", "", '{"max": 5, "kind": "fast"}'),
                ("j.timeout", "removed", "5", ""),
                ("j.mode", "removed", "fast", ""),
                ("a", "item_removed", "x", ""),
                ("c", "added", "", '["x"]'),
            ],
        ),
        (  # what the bump sentences tell is no move's end: the override's removal stays
            "package.json",
            '{"overrides": {"semver": "7.5.4"}}',
            '{"dependencies": {"semver": "7.5.4"}}',
            [("overrides", "removed", '{"semver": "7.5.4"}', "")],
        ),
        (  # a common value, or one that leaves or arrives twice, or a setting whose value
            # is now a list's item: no move
            "a.yml",
            "a: true\nb: 5m\nc: 5m\nd: 7s\n",
            "e: true\nf: 5m\ng: [7s]\n",
            [
                ("e", "added", "", "true"),
                ("f", "added", "", "5m"),
                ("g", "added", "", '["7s"]'),
                ("a", "removed", "true", ""),
                ("b", "removed", "5m", ""),
                ("c", "removed", "5m", ""),
                ("d", "removed", "7s", ""),
            ],
        ),
        (  # aliases that expand to billions of values: not read
            "ci.yml",
            "a: &a [x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{b}: &{b} [*{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}]\n"
                for a, b in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "a: 1\n",
            [],
        ),
    ],
)
def test_settings_are_read_from_both_versions_whole(
    path: str, old: str, new: str, changes: list[tuple[str, str, str, str]]
) -> None:
    from prsum.facts.settings import setting_changes
    from prsum.types import FileDiff

    blobs = {"1" * 40: old.encode(), "2" * 40: new.encode()}
    patch = f"diff --git a/{path} b/{path}\nindex {'1' * 40}..{'2' * 40} 100644\n"
    found = setting_changes((FileDiff(path, patch),), {path: "M"}, lambda sha, n: blobs.get(sha))
    assert [(c.key, c.kind, c.before, c.after) for c in found] == changes


def test_an_origin_counts_only_lines_removed_and_blamed(repo: RepoBuilder) -> None:
    a = "alpha = compute(1)\nbeta = compute(2)\ngamma = compute(3)\n"
    repo.commit("Add a (#1)", {"src/a.py": a, "src/ü.py": "one = 1\ntwo = 2\nthree = 3\n"})
    # a copy's changed lines are the source's, which stays: nothing is removed
    copy = a.replace("compute(3)", "compute(30)")
    card = origin_card(repo, "Copy a (#2)", {"src/a.py": a + "delta = 4\n", "src/b.py": copy})
    assert card.facts.origin is None
    # a rename whose source git quotes is not blamed, so no count of "the lines" holds
    renamed = {"src/ü.py": None, "src/v.py": "one = 1\ntwo = 20\nthree = 3\n"}
    card = origin_card(repo, "Move (#3)", {**renamed, "src/a.py": a.replace("(1)", "(10)")})
    assert card.facts.origin is None


@pytest.mark.parametrize(
    ("earlier", "days"),
    [
        ("2026-08-13T10:00:00+00:00", 5),  # 4 days and 23 hours: a reader counts 5
        ("2026-08-17T23:00:00-08:00", 0),  # 12 hours, across zones: less than a day
        ("2026-08-17T06:00:00+00:00", 1),  # 27 hours
    ],
)
def test_an_origin_counts_days_to_the_nearest(earlier: str, days: int) -> None:
    from prsum.facts.origin import line_origin
    from prsum.types import FileDiff, PullRequest

    def pr(number: int, merged_at: str) -> PullRequest:
        return PullRequest(number, "squash", "a" * 40, "b" * 40, "t", "t", (), merged_at, ())

    patch = "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    origin = line_origin(
        pr(2, "2026-08-18T09:00:00+00:00"),
        (FileDiff("src/a.py", patch),),
        lambda path, numbers: ["c" * 40] * len(numbers),
        lambda sha: pr(1, earlier),
    )
    assert origin == Origin("#1", "t", days, whole=True)
