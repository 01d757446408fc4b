"""Card writing with a scripted model: guards, grounding, verdict rules, context limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from prsum.cache import JsonStore
from prsum.cards import CardWriter, clean_field, in_language
from prsum.cards.assembly import focus_places
from prsum.cards.checks import copied
from prsum.cards.packing import Packer, Usage
from prsum.errors import ConfigError
from prsum.facts import compute_facts
from prsum.grounding import Evidence, ground_text
from prsum.history import History
from prsum.llm import GREEDY
from prsum.types import Card
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend

PARSER = "def parse(text):\n    return text.split()\n\n\ndef render(items):\n    return ' '.join(items)\n"


def write_card(
    repo: RepoBuilder,
    backend: FakeBackend,
    lang: str = "zh",
    style: str = "digest",
    rev: str = "HEAD",
) -> Card:
    history = History(repo.path)
    pr = history.find_pr(rev)
    diffs = history.diff(pr)
    return CardWriter(backend, lang, style).write(pr, compute_facts(pr, diffs), diffs)  # type: ignore[arg-type]


def test_a_name_the_diff_does_not_contain_never_reaches_the_card(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    backend = FakeBackend(
        answers={
            "概括": ["新增 `foo/bar.py` 里的解析器"],
            "摘要": ["`src/parser.py` 新增 `parse`，并改了 foo/bar.py 和 `frobnicate`。"],
            "收获": ["参考 `foo/bar.py` 的写法"],
        }
    )
    card = write_card(repo, backend)
    text = " ".join(
        [
            card.body.headline,
            card.body.summary,
            *card.body.lessons,
            *(f.why for f in card.body.focus),
        ]
    )
    assert "foo/bar.py" not in text
    assert "frobnicate" not in text
    assert "`parse`" in card.body.summary
    assert card.body.ungrounded_removed == 0  # rejected answers never reach the card


def test_grounding_repairs_near_misses_and_removes_inventions(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    evidence = Evidence.of(pr, history.diff(pr))
    text, removed = ground_text(
        "读 `src/parser.py` 的 `parse_`，别管 foo/bar.py 和 `frobnicate`。", evidence
    )
    assert text == "读 `src/parser.py` 的 `parse`，别管和。"
    assert removed == 2
    # A file cited by its bare name gets its path; a name two files share stays as it is.
    repo.commit("Add a CLI (#11)", {"src/cli.py": "import parser\n", "tests/cli.py": "pass\n"})
    pr = history.find_pr("HEAD")
    evidence = Evidence.of(pr, history.diff(pr))
    assert ground_text("Read `cli.py`.", evidence) == ("Read `cli.py`.", 0)
    repo.commit("Add a lexer (#12)", {"src/lexer.py": "import parser\n"})
    pr = history.find_pr("HEAD")
    evidence = Evidence.of(pr, history.diff(pr))
    assert ground_text("Read `lexer.py`.", evidence) == ("Read `src/lexer.py`.", 0)


def test_grounding_leaves_quotes_and_code_spans_as_they_are(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    evidence = Evidence.of(pr, history.diff(pr))
    # A quote of the description is the description's words: not a name in it is repaired
    # (`parser.py` would become its path) or removed; the seams of a removal elsewhere are
    # tidied around code spans, never inside one (`parse()` keeps its brackets).
    quote = "It says: “`parser.py`  splits on `tokenize_v1` ( ).”"
    text, removed = ground_text(
        f"{quote} It adds `frobnicate` ( ), so `parse()`.", evidence, verbatim=[quote]
    )
    assert (text, removed) == (f"{quote} It adds, so `parse()`.", 1)


def test_a_call_is_known_where_the_pr_calls_or_defines_it() -> None:
    text = (
        "func (c *Cache) Put() { c.evict(1) }\nc.Limit = 2\n"
        "pub fn parse<R: Read>(r: R)\nconst onClick = () => 1\ndef reset\nend"
    )
    evidence = Evidence(text, frozenset({"cache.go"}), ())
    for name in ("Put", "Put()", "Put().", "evict()", "evict(n)", "c.evict(1);", "cache.go"):
        assert evidence.knows(name), name
    for call in ("parse()", "onClick()", "reset()"):  # generics, an arrow function, Ruby
        assert evidence.knows(call), call
    # A name the PR only mentions is no call of it; broken names are no names of the PR.
    for name in ("evict)", "Limit(", "Limit()", "Cache()", "Put((", "Put)"):
        assert not evidence.knows(name), name


def test_copied_example_text_is_retried_with_its_start_banned(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    copied = "依赖机器人的例行升级，只改了工作流文件里的版本号。"
    backend = FakeBackend(
        answers={
            "概括": ["新增文本解析函数"],
            "摘要": [copied, "新增 `parse` 与 `render` 两个函数。"],
            "收获": ["无"],
        }
    )
    card = write_card(repo, backend)
    assert copied not in card.body.summary
    assert "新增 `parse` 与 `render` 两个函数。" in card.body.summary


def test_wrong_language_falls_back_to_a_written_headline(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    backend = FakeBackend(answers={"概括": ["Adds a parser", "Adds a parser", "Adds a parser"]})
    card = write_card(repo, backend)
    assert in_language(card.body.headline, "zh")
    assert in_language(card.body.summary, "zh")


def test_english_cards_are_english(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    backend = FakeBackend(
        answers={"Headline": ["A parser for plain text"], "Summary": ["Adds `parse` and `render`."]}
    )
    card = write_card(repo, backend, lang="en")
    assert card.body.headline == "A parser for plain text"
    assert in_language(card.body.summary, "en")
    assert "Adds `parse` and `render`." in card.body.summary


def test_breaking_change_is_deep_whatever_the_model_prefers(repo: RepoBuilder) -> None:
    repo.commit(
        "💥 Rename parse (#11)\n\nBREAKING CHANGE: parse is now tokenize",
        {"src/parser.py": PARSER.replace("parse", "tokenize")},
    )
    card = write_card(repo, FakeBackend(verdict_preference="跳过"))
    assert card.body.verdict == "deep"
    assert card.body.minutes >= 10
    assert card.facts.breaking.is_breaking


def test_feature_with_source_lines_is_never_skip(repo: RepoBuilder) -> None:
    repo.commit("✨ Add a parser (#10)", {"src/parser.py": PARSER})
    card = write_card(repo, FakeBackend(verdict_preference="跳过"))
    assert card.body.verdict == "skim"


def test_the_model_may_move_an_unsettled_verdict_one_step(repo: RepoBuilder) -> None:
    repo.commit(
        "Tidy test helpers (#12)", {"tests/test_parser.py": "def test_parse():\n    assert True\n"}
    )
    assert write_card(repo, FakeBackend()).body.verdict == "skip"
    assert write_card(repo, FakeBackend(verdict_preference="浏览")).body.verdict == "skim"


def test_deps_bump_is_skip_with_no_minutes(repo: RepoBuilder) -> None:
    repo.commit(
        "⬆ Bump requests from 2.31 to 2.32 (#13)",
        {"uv.lock": "requests==2.32\n"},
        author="dependabot[bot] <bot@example.com>",
    )
    card = write_card(repo, FakeBackend(verdict_preference="精读"))
    assert (card.facts.category, card.body.verdict, card.body.minutes, card.body.focus) == (
        "deps",
        "skip",
        0,
        (),
    )


@pytest.mark.parametrize("context", [1024, 2048, 4096, 8192])
@pytest.mark.parametrize("style", ["digest", "diff"])
def test_prompts_never_exceed_the_context(repo: RepoBuilder, context: int, style: str) -> None:
    files = {
        f"src/module_{i}.py": "".join(
            f"def function_{i}_{j}(x):\n    return x + {j}\n" for j in range(60)
        )
        for i in range(40)
    }
    repo.commit("Generate modules (#14)", files)
    backend = FakeBackend(
        context=context, answers={"概括": ["生成模块"], "摘要": ["新增四十个模块。"]}
    )
    try:
        card = write_card(repo, backend, style=style)
    except ConfigError as error:
        # Only the smallest context may be refused, in one line naming a size that fits.
        assert context == 1024 and "use at least" in str(error), error
        return
    assert card.coverage.prompt_tokens <= context
    assert card.coverage.files_total == 40
    covered = set(card.coverage.files_whole) | set(card.coverage.files_clipped)
    assert covered | {item.path for item in card.coverage.files_left_out} == set(files)
    assert covered or context == 1024
    assert all(backend.count_tokens(prompt) <= context for prompt in backend.prompts)


def test_clean_field_drops_repeated_clauses() -> None:
    assert clean_field(" 修复了错误，修复了错误，修复了错误 ") == "修复了错误，"
    assert clean_field("Adds a flag. Adds a flag. Done.") == "Adds a flag. Done."


def huge_pr(repo: RepoBuilder) -> None:
    """50,000 changed lines over 300 files: source, tests and docs."""
    files: dict[str, str | bytes | None] = {}
    for index in range(300):
        folder = ("src", "tests", "docs")[index % 3]
        suffix = ".md" if folder == "docs" else ".py"
        name = f"{folder}/{'test_' if folder == 'tests' else ''}part_{index}{suffix}"
        files[name] = "".join(
            f"def function_{index}_{line}(value):\n" if line % 4 == 0 else f"    value += {line}\n"
            for line in range(167)
        )
    repo.commit("Generate the world (#99)", files)


@pytest.mark.parametrize("context", [2048, 8192])
def test_a_50000_line_pr_fits_with_notes_and_coverage(
    repo: RepoBuilder, context: int, tmp_path: Path
) -> None:
    huge_pr(repo)
    notes_asked: list[str] = []
    backend = FakeBackend(
        context=context,
        answers={
            "要点": [f"新增 `function_{i}_0`。" for i in range(10)],
            "概括": ["生成大量模块"],
            "摘要": ["新增三百个文件。"],
        },
        on_complete=lambda prompt: (
            notes_asked.append(prompt) if prompt.endswith("要点：") else None
        ),
    )
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    diffs = history.diff(pr)
    assert pr.added + pr.deleted >= 50000 and len(pr.files) == 300
    store = JsonStore(tmp_path / "notes")
    writer = CardWriter(backend, "zh", "diff", map_chunks=3, note_store=store)
    card = writer.write(pr, compute_facts(pr, diffs), diffs)
    coverage = card.coverage
    assert coverage.prompt_tokens <= context
    assert all(backend.count_tokens(prompt) <= context for prompt in backend.prompts)
    reasons = [item.reason for item in coverage.files_left_out]
    assert coverage.files_total == 300
    assert len(coverage.files_whole) + len(coverage.files_clipped) + len(reasons) == 300
    assert "no room left in the context" in reasons
    assert any(reason.startswith("seen through a chunk note") for reason in reasons)
    assert len(notes_asked) == 3  # bounded: --map-chunks
    final_prompt = backend.prompts[-1]
    assert "补充：新增 `function_" in final_prompt
    # A second run reads the notes from the cache instead of asking the model again.
    notes_asked.clear()
    backend.answers["概括"] = ["生成大量模块"]
    writer.write(pr, compute_facts(pr, diffs), diffs)
    assert notes_asked == []


@pytest.mark.parametrize(
    "title",
    [
        "[rollout, trainer] fix: keep the parser's state (#12)",
        "fix(parser)!: keep the parser's state (#12)",
    ],
)
def test_a_headline_from_facts_drops_the_titles_convention(repo: RepoBuilder, title: str) -> None:
    from prsum import i18n

    repo.commit(title, {"src/parser.py": PARSER})
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    facts = compute_facts(pr, history.diff(pr))
    headline = i18n.fallback_headline(pr, facts, "en")
    assert "keep the parser's state" in headline
    assert "]" not in headline and "fix(" not in headline and "fix:" not in headline


def test_text_lifted_from_the_prompts_example_is_found() -> None:
    example = "`isExpired` 的边界：改动的边界条件。Time comparisons at a boundary deserve a test."
    pr = "修改 `parse`：空输入时报错。"
    assert copied("改动的边界条件", pr, example, "zh")  # a whole short field
    assert copied("It says time comparisons at a boundary deserve a test.", pr, example, "en")
    assert not copied("修改 `parse`", pr, example, "zh")  # the PR's own words
    assert not copied("边界", pr, example, "zh")  # too short to tell
    assert not copied("空输入时报错，并新增测试。", pr, example, "zh")


def test_in_a_test_file_only_tests_are_places_to_read(repo: RepoBuilder) -> None:
    """A callback in a test file (a stream's `start`) was judged false as the place to read."""
    helper = "def start(stream):\n    return stream.open()\n"
    test = "def test_reads(tmp_path):\n    assert start(tmp_path)\n"
    repo.commit("Add the tests (#1)", {"tests/test_stream.py": helper + "\n\n" + test})
    changed = helper.replace("open()", "open(mode='r')") + "\n\n" + test.replace("assert", "x =")
    repo.commit("Read streams as text (#2)", {"tests/test_stream.py": changed})
    history = History(repo.path)
    pr = history.find_pr("HEAD")
    diffs = history.diff(pr)
    packer = Packer(FakeBackend(), "en", "digest", "", 64, sampling=GREEDY)
    packed = packer.pack(pr, compute_facts(pr, diffs), diffs, [], Evidence.of(pr, diffs), Usage())
    (focus,) = focus_places(pr, packed, "en")
    assert (focus.path, focus.symbol) == ("tests/test_stream.py", "test_reads")
    assert "`start`" not in focus.why


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_only_a_prompts_worked_example_is_text_not_to_copy(lang: str) -> None:
    from prsum import prompts

    card = prompts.example_part(prompts.frame(lang, "card"))
    assert "isExpired" in card and "JSON" not in card  # the example, not the instructions
    assert prompts.example_part(prompts.frame(lang, "whole")) == ""  # instructions only


def test_a_summary_quotes_two_edits_of_the_files_read_first_in_the_cards_words() -> None:
    from prsum.cards.assembly import edits_sentences, quoted_edits
    from prsum.types import LineEdit

    edits = [
        LineEdit("src/a.py", "x = 1", "x = 2"),
        LineEdit("src/b.py", "if ready:", ""),
        LineEdit("src/b.py", "", "raise Timeout()"),
        LineEdit("src/c.py", "y = 1", "y = 2"),
    ]
    # src/b.py is read first; its edit about the title's "timeout" before the other
    shown = quoted_edits(edits, ["src/b.py"], "Raise a timeout")
    assert edits_sentences(shown, "en") == [
        "In `src/b.py`, adds `raise Timeout()`; drops `if ready:`."
    ]
    shown = quoted_edits(edits, ["src/c.py", "src/a.py"], "Bump")
    assert edits_sentences(shown, "zh") == [
        "`src/c.py` 中，`y = 1` 改为 `y = 2`。",
        "`src/a.py` 中，`x = 1` 改为 `x = 2`。",
    ]


def test_a_name_is_held_by_the_innermost_definition_this_pr_writes() -> None:
    from prsum.digest import holder

    assert holder("A.B.c", {"A", "A.B"}) == "A.B"
    assert holder("A::b", {"A"}) == "A"
    assert holder("B.c", {"A"}) is None


def test_a_quoted_edit_hides_only_the_setting_it_shows() -> None:
    from prsum.cards.assembly import edit_shows
    from prsum.types import LineEdit, SettingChange

    edit = LineEdit("a.yml", "n: 10", "n: 20")
    assert edit_shows(SettingChange("a.yml", "b.n", "changed", "10", "20"), edit)
    # `1` is not in `n: 10`; another key, another file
    assert not edit_shows(SettingChange("a.yml", "c.n", "changed", "1", "2"), edit)
    assert not edit_shows(SettingChange("a.yml", "b.m", "changed", "10", "20"), edit)
    assert not edit_shows(SettingChange("b.yml", "b.n", "changed", "10", "20"), edit)
    listed = LineEdit("a.toml", '"CHANGES.rst",', '"CHANGES.md",')
    assert edit_shows(SettingChange("a.toml", "include", "item_added", "", "CHANGES.md"), listed)
    assert edit_shows(SettingChange("a.toml", "include", "item_removed", "CHANGES.rst", ""), listed)
