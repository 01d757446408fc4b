"""Card strategies: the choice from capabilities, the whole card's checks and fallbacks, the
field-by-field fallbacks, and both on the real default model."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from prsum.cards import choose_strategy
from prsum.cards.checks import loops, sentences
from prsum.cards.fields import BASE_MODEL_SAMPLING
from prsum.cards.whole import parse_card, salvaged
from prsum.config import resolve_settings
from prsum.errors import ConfigError
from prsum.grounding import cited_names
from prsum.llm import GREEDY, Capabilities, ChatFormatSource
from prsum.llm.models import adapter_of
from prsum.pipeline import prompt_style_for
from prsum.profiles import EMBEDDED, PROFILES, choose_profile, for_strategy
from prsum.prompts import frame
from prsum.render import card_to_dict
from prsum.types import Card
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend
from tests.pipeline import cards_for, summarizer_for
from tests.test_end_to_end import history, run_range  # noqa: F401  # the fixture is used below
from tests.test_render import SCHEMA

PARSER = "def parse(text):\n    return text.split()\n\n\ndef render(items):\n    return ' '.join(items)\n"
EVERY_FIELD = ("headline", "verdict", "minutes", "summary", "focus", "lessons", "follow_ups")


def test_the_profile_and_strategy_follow_the_backends_capabilities() -> None:
    base = Capabilities(completion=True, chat=None, json_schema=False)
    family = Capabilities(completion=True, chat="family", json_schema=False)
    tuned_small = Capabilities(completion=True, chat="tuned", json_schema=True)
    templated = Capabilities(completion=True, chat="model", json_schema=True)
    served = Capabilities(completion=True, chat="server", json_schema=True)
    small, big = 300 << 20, 2 << 30
    profiles = [
        choose_profile(c.chat, size)
        for c, size in ((base, small), (family, small), (base, big), (tuned_small, small))
    ]
    # A base model's family format is no sign that it follows instructions.
    assert [p.name for p in profiles] == ["small-base", "small-base", "base", "small-tuned"]
    assert choose_profile(templated.chat, small).name == "instruct"  # whatever its size
    assert choose_profile(served.chat, None).name == "instruct"
    assert choose_profile(None, None).name == "base"  # a size not known counts as big
    assert [choose_strategy("auto", c, choose_profile(c.chat, small)) for c in (base, served)] == [
        "fields",
        "brief",
    ]
    assert choose_strategy("whole", family, PROFILES["small-base"]) == "whole"
    assert choose_strategy("fields", served, PROFILES["instruct"]) == "fields"
    assert for_strategy(PROFILES["instruct"], "fields", big).name == "base"
    assert for_strategy(PROFILES["small-tuned"], "fields", small).name == "small-base"
    assert for_strategy(PROFILES["small-base"], "whole", small).name == "small-tuned"
    # An instruction model writes whole cards with its own prompt and schema, not the small one's.
    whole = for_strategy(PROFILES["instruct"], "whole", big)
    assert (whole.name, whole.strategy, whole.schema) == ("instruct", "whole", True)
    assert for_strategy(PROFILES["small-tuned"], "brief", small).prompt == "whole"
    with pytest.raises(ConfigError, match="chat format"):
        choose_strategy("whole", base, PROFILES["small-base"])


def whole_card(
    repo: RepoBuilder,
    answer: object,
    lang: str = "zh",
    chat_format: ChatFormatSource = "tuned",
    **flags: object,
) -> tuple[Card, FakeBackend]:
    """The card a whole-card answer makes: by default as the small tuned model's (held by every
    check), with `chat_format="model"` as an instruction-following model's."""
    backend = FakeBackend(
        chat_format=chat_format,
        chat_answers=[json.dumps(answer, ensure_ascii=False)],
        json_schema=chat_format == "model",
    )
    (card,) = cards_for(repo.path, model=backend, lang=lang, cache=False, **flags)
    assert isinstance(card, Card)
    jsonschema.validate(card_to_dict(card), SCHEMA)
    return card, backend


GOOD = {
    "headline": "文本解析与渲染各有了独立入口",
    "verdict": "skim",
    "minutes": 3,
    "summary": "改动集中在一个新文件里，逻辑很短。`parse` 按空白切分文本，`render` 再把结果拼回去。两者互为逆操作，适合补一个往返测试。",
    "focus": [{"path": "src/parser.py", "symbol": "parse", "why": "切分规则决定了渲染能否还原"}],
    "lessons": ["成对的解析与渲染函数最好用往返测试锁住"],
    "follow_ups": ["为 `parse` 和 `render` 补往返测试"],
}


def test_a_whole_card_is_the_models_where_every_field_passes(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    card, backend = whole_card(repo, GOOD)
    assert set(card.body.by_model) == set(EVERY_FIELD)
    assert card.body.summary == GOOD["summary"] and card.body.headline == GOOD["headline"]
    assert card.body.ungrounded_removed == 0
    assert backend.samplings == [GREEDY]  # nothing steers the model's tokens
    assert "可选结论：" in backend.prompts[0]  # the rubric's options go along with the PR
    assert backend.schemas == [None]  # this backend has no native JSON schema


def test_an_instruction_model_writes_to_the_cards_schema_from_a_system_turn(
    repo: RepoBuilder,
) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER, "README.md": "docs\n"})
    card, backend = whole_card(
        repo, GOOD, chat_format="model", prompt_style="diff", strategy="whole"
    )
    assert set(card.body.by_model) == set(EVERY_FIELD)
    ((system, user),) = backend.conversations
    # The instructions are the system turn, the same for every PR (the KV cache keeps them);
    # the PR, title first, is the user turn.
    assert system["role"] == "system" and system["content"] == frame("zh", "card").rstrip()
    assert user["role"] == "user" and user["content"].startswith("合并请求 #10：Add a parser")
    assert "可选结论：" in user["content"] and "<diff>" in user["content"]
    (sampling,) = backend.samplings
    assert sampling == GREEDY  # no guard, no repeat breaker: the schema holds the answer
    (schema,) = backend.schemas
    assert isinstance(schema, dict)
    properties = schema["properties"]
    assert properties["verdict"]["enum"] == ["skim"]  # the rubric's choice for this PR
    places = properties["focus"]["items"]["anyOf"]
    assert {place["properties"]["path"]["const"] for place in places} == {"src/parser.py"}
    (place,) = places
    assert set(place["properties"]["symbol"]["enum"]) == {"parse", "render", None}


def test_a_pr_without_code_to_point_at_gets_no_focus_place(repo: RepoBuilder) -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    repo.commit("Document the parser (#11)", {"README.md": "How to parse.\n"})
    _, backend = whole_card(repo, {**GOOD, "focus": []}, chat_format="model")
    (schema,) = backend.schemas
    assert isinstance(schema, dict)
    grammar = json_schema_to_gbnf(json.dumps(schema))
    # An empty list, not any array (an array schema without items admits anything).
    assert 'focus ::= "[]"' in grammar.splitlines()


def test_an_instruction_models_card_is_checked_for_truth_only(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    untrue = "它还改了 `tokenize`。"  # a name the PR does not contain
    answer = {
        **GOOD,
        "headline": "Parser and renderer",  # English in a Chinese card
        # Restating the facts line is no lie: the small model's shaping checks do not apply.
        "summary": "改了测试之外的一个新文件。" + untrue + "`parse` 按空白切分文本。",
        "lessons": ["参考 `frobnicate` 的写法", "成对的解析与渲染函数最好用往返测试锁住"],
    }
    card, _ = whole_card(repo, answer, chat_format="model", strategy="whole")
    assert card.body.summary == "改了测试之外的一个新文件。`parse` 按空白切分文本。"
    assert "headline" not in card.body.by_model and card.body.headline != answer["headline"]
    assert card.body.lessons == ("成对的解析与渲染函数最好用往返测试锁住",)
    rules = {(event.rule, event.field) for event in card.body.dropped}
    assert ("summary.names-something-the", "summary") in rules
    assert ("untrue.wrong-language", "headline") in rules
    assert ("untrue.names-something-the-PR", "lessons") in rules


def test_a_brief_card_takes_the_headline_verdict_and_minutes_and_no_prose(
    repo: RepoBuilder,
) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    brief, backend = whole_card(repo, GOOD, chat_format="model")
    whole, whole_backend = whole_card(repo, GOOD, chat_format="model", strategy="whole")
    assert brief.model.strategy == "brief"  # the default of an instruction model
    assert whole.body.summary == GOOD["summary"]  # the same answer, read whole
    # The same request as a whole card's, read no further than the summary's key.
    assert backend.conversations == whole_backend.conversations
    assert backend.schemas == whole_backend.schemas
    body = brief.body
    assert body.by_model == ("headline", "verdict", "minutes")
    assert (body.headline, body.verdict, body.minutes) == (
        "文本解析与渲染各有了独立入口",
        "skim",
        3,
    )
    assert GOOD["summary"] not in body.summary and not body.lessons
    for text in (body.summary, *(place.why for place in body.focus), *body.follow_ups):
        assert text not in (GOOD["summary"], GOOD["focus"][0]["why"], *GOOD["follow_ups"])
    assert body.summary and body.focus  # facts write them
    assert not body.dropped  # stopping where it was told to is no fault of the answer


@pytest.mark.parametrize(
    ("lang", "quoted"),
    [
        (
            "zh",
            "`src/parser.py` 中，`return text.split()` 改为 `return text.split(sep)`；"
            "`def parse(text):` 改为 `def parse(text, sep=None):`。",
        ),
        (
            "en",
            "In `src/parser.py`, `return text.split()` becomes `return text.split(sep)`; "
            "`def parse(text):` becomes `def parse(text, sep=None):`.",
        ),
    ],
)
def test_a_brief_card_quotes_the_code_its_pr_edits_in_place(
    repo: RepoBuilder, lang: str, quoted: str
) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    edited = PARSER.replace(
        "(text):\n    return text.split()", "(text, sep=None):\n    return text.split(sep)"
    )
    repo.commit("Split on a separator (#11)", {"src/parser.py": edited})
    # The edit the title speaks of ("split") comes first.
    card, _ = whole_card(repo, GOOD, lang=lang, chat_format="model", spec="HEAD~1..HEAD")
    assert quoted in card.body.summary


def test_a_brief_card_quotes_the_check_its_tests_add_about_the_change(repo: RepoBuilder) -> None:
    tests = "def test_parse():\n    assert parse('a') == ['a']\n"
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER, "tests/test_parser.py": tests})
    edited = PARSER.replace(
        "(text):\n    return text.split()", "(text, sep=None):\n    return text.split(sep)"
    )
    checks = (
        tests
        + "    assert response.status == 200\n    assert parse('a,b', sep=',') == ['a', 'b']\n"
    )
    repo.commit("Take a separator (#11)", {"src/parser.py": edited, "tests/test_parser.py": checks})
    card, _ = whole_card(repo, GOOD, lang="en", chat_format="model", spec="HEAD~1..HEAD")
    # the check of what the PR changes (`parse`), not the incidental one
    assert (
        "In `tests/test_parser.py`, the tests now check `assert parse('a,b', sep=',') == ['a', 'b']`."
        in card.body.summary
    )
    assert "response.status" not in card.body.summary
    incidental = checks + "    assert response.ok\n"
    repo.commit("Tidy (#12)", {"tests/test_parser.py": incidental, "src/parser.py": PARSER})
    card, _ = whole_card(repo, GOOD, lang="en", chat_format="model", spec="HEAD~1..HEAD")
    assert "the tests now check" not in card.body.summary  # it cites nothing the PR changes


def test_a_brief_card_quotes_the_authors_account_and_code_that_holds_backticks(
    repo: RepoBuilder,
) -> None:
    header = "const header = (value) => {\n  return `policy=${value ? '*' : 'none'}`\n}\n"
    repo.commit("Add the header (#10)", {"src/header.ts": header})
    message = (
        "Write an empty list for a disabled policy (#11)\n\n"
        "## What does this PR do?\n\n"
        "Browsers read `none` in `header.ts` as an origin named none, so a disabled\n"
        "policy allowed that origin instead of none.\n\n"
        "- [x] tests\n\nSigned-off-by: Ada <ada@example.com>\n"
    )
    repo.commit(message, {"src/header.ts": header.replace("'none'", "'()'")})
    card, _ = whole_card(repo, GOOD, lang="en", chat_format="model", spec="HEAD~1..HEAD")
    assert (
        # quoted as written: not "`src/header.ts`", as grounding makes a bare file name elsewhere
        "The description says: “Browsers read `none` in `header.ts` as an origin named none, so a "
        "disabled policy "
        "allowed that origin instead of none.”" in card.body.summary
    )
    # Fenced by two backticks, the quote keeps its own: grounding reads it as one span.
    assert (
        "In `src/header.ts`, `` return `policy=${value ? '*' : 'none'}` `` becomes "
        "`` return `policy=${value ? '*' : '()'}` ``." in card.body.summary
    )
    assert card.facts.account.startswith("Browsers read") and card.body.ungrounded_removed == 0


@pytest.mark.parametrize("honours_stop", [True, False])
def test_a_brief_card_takes_only_its_three_fields_from_any_answer(
    repo: RepoBuilder, honours_stop: bool
) -> None:
    """A server may ignore the stop string, or the model write a key the schema puts later
    before the summary: a brief card still takes only the headline, verdict and minutes."""
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    answer = {"headline": GOOD["headline"], "verdict": "skim", "minutes": 3, **GOOD}
    answer = {"lessons": GOOD["lessons"], **answer}  # out of the schema's order
    backend = FakeBackend(
        chat_format="model",
        chat_answers=[json.dumps(answer, ensure_ascii=False)],
        json_schema=True,
        honours_stop=honours_stop,
    )
    (card,) = cards_for(repo.path, model=backend, cache=False)
    assert isinstance(card, Card)
    assert card.body.by_model == ("headline", "verdict", "minutes")
    assert not card.body.lessons and GOOD["summary"] not in card.body.summary
    assert not card.body.dropped  # all three were there: nothing was salvaged


def test_a_focus_place_keeps_only_a_symbol_the_pr_contains(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    why = GOOD["focus"][0]["why"]
    for symbol, kept in ((None, None), ("", None), ("frobnicate", None), ("render", "render")):
        place = {"path": "src/parser.py", "symbol": symbol, "why": why}
        card, _ = whole_card(repo, {**GOOD, "focus": [place]})
        (focus,) = card.body.focus
        assert "focus" in card.body.by_model and focus.why == why
        assert focus.symbol == kept  # none rather than one the model did not name


def test_each_botched_field_falls_back_to_ours_and_says_so(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    botched = {
        "headline": "Adds a parser",  # English in a Chinese card
        "verdict": "maybe",
        "minutes": 90,
        "summary": "它改了 `nowhere.py` 和 `elsewhere.py`。",  # files the PR does not touch
        "focus": [{"path": "src/other.py", "symbol": None, "why": "不存在的文件"}],
        "lessons": ["参考 `frobnicate` 的写法"],
        "follow_ups": [],
    }
    card, _ = whole_card(repo, botched)
    assert card.body.by_model == ()
    assert card.body.headline != botched["headline"] and "nowhere.py" not in card.body.summary
    assert card.body.verdict in ("skim", "deep") and card.body.minutes <= 60
    assert [place.path for place in card.body.focus] == ["src/parser.py"]
    assert card.body.lessons == () and card.body.follow_ups  # ours, from facts
    assert card.body.ungrounded_removed == 0


def test_a_sentence_the_pr_does_not_back_goes_and_the_rest_stays(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    invented = "它还重写了 `tokenize_all`。"  # a name the PR does not contain
    unstated = "解析速度提高了 40 倍。"  # a number the PR does not state
    answer = {**GOOD, "summary": invented + GOOD["summary"] + unstated}
    card, _ = whole_card(repo, answer)
    assert "summary" in card.body.by_model and card.body.summary == GOOD["summary"]
    card, _ = whole_card(repo, {**GOOD, "summary": invented + unstated})
    assert "summary" not in card.body.by_model and "tokenize_all" not in card.body.summary
    itself = "返回值从 `render` 改为 `render`。"  # a change of something into itself
    card, _ = whole_card(repo, {**GOOD, "summary": itself + GOOD["summary"]})
    assert card.body.summary == GOOD["summary"]
    en = {
        **GOOD,
        "headline": "A parser",
        "summary": "It moves `render` from `parse` to `parse`. It adds `parse`.",
    }
    card, _ = whole_card(repo, en, lang="en")
    assert card.body.summary == "It adds `parse`."
    idiom = "It splits text from time to time. It adds `parse`."  # no value: no claim
    card, _ = whole_card(repo, {**en, "summary": idiom}, lang="en")
    assert card.body.summary == idiom


def test_a_card_cut_off_by_a_loop_keeps_what_it_finished(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    looping = "`render` 把结果拼回去。"
    whole_json = json.dumps(GOOD, ensure_ascii=False)
    # The model loops on one sentence until the token limit: no closing quote, no JSON.
    cut = whole_json[: whole_json.index("两者")] + looping * 6 + "`render` 把结"
    assert parse_card(cut) is None
    assert salvaged(cut, "zh")["verdict"] == "skim" and salvaged(cut, "zh")["minutes"] == 3
    backend = FakeBackend(chat_format="tuned", chat_answers=[cut])
    (card,) = cards_for(repo.path, model=backend, cache=False)
    assert isinstance(card, Card)
    assert {"headline", "verdict", "minutes", "summary"} <= set(card.body.by_model)
    # The finished sentences are kept (at most five), the unfinished end goes.
    opening = GOOD["summary"][: GOOD["summary"].index("两者")]
    assert card.body.summary == opening + looping * 3
    assert "focus" not in card.body.by_model  # not finished: ours


def test_sentences_end_outside_code_spans() -> None:
    text = "It calls `os.path.join`. Then `a.b!` runs! Last one"
    assert sentences(text, "en") == ["It calls `os.path.join`.", "Then `a.b!` runs!", "Last one"]
    assert sentences("先看 `x。y`。再看测试。", "zh") == ["先看 `x。y`。", "再看测试。"]
    assert sentences("他说“好。”然后走了。", "zh") == ["他说“好。”", "然后走了。"]


def test_a_loop_is_a_name_said_three_times_in_one_sentence() -> None:
    assert loops("`a` calls `a` and then `a`.")
    assert not loops("`a` splits. `a` joins. `a` returns.")  # the main function, named again
    # Words that stutter, in either script, loop too; a long number or a row of dots does not.
    assert loops("It computes the no-attention-heads-heads-heads-heads flops.")
    assert loops("它把矩阵切开切开切开切开。")
    assert not loops("It moves 1.0.1111111 up... and back........ as before.")
    assert not loops("It listens on 0.0.0.0.") and loops("它改了 '___.___.___.___.' 各一行。")
    assert not loops("It masks the id with `0xFFFFFFFF`.")  # code spans are no prose
    assert loops("It draws --------x--x--x--x.")  # a run without letters hides none
    # So does a phrase said a third time in one sentence, whatever stands between its repeats.
    assert loops("选项在父目录里执行的子目录里执行，父目录里执行的子目录里执行，父目录里执行。")
    assert loops(
        "It skips the worker's own hooks when the worker's own hooks run, so the worker's own hooks stay."
    )
    assert loops("`parse` 在父目录里执行，`render` 在父目录里执行，`emit` 在父目录里执行。")
    # Not one phrase said in three sentences, nor three clauses that differ in their code names,
    # nor a code span said thrice (a name is `most_repeated_name`'s to count).
    assert not loops(
        "The change to the parser moves the check. The change to the parser adds a test. The change to the parser is small."
    )
    assert not loops(
        "It adds a test for `parse` in the module, a test for `render` in the module, and a test for `emit` in the module."
    )
    assert not loops("它把 `在父目录里执行` 换成 `在父目录里执行的` 与 `在父目录里执行了`。")


def test_a_code_fence_in_the_summary_does_not_spoil_it(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    card, _ = whole_card(repo, {**GOOD, "summary": "```json\n" + GOOD["summary"]})
    assert "summary" in card.body.by_model and card.body.summary == GOOD["summary"]


def test_the_view_follows_the_profile_and_the_strategy(tmp_path: Path) -> None:
    settings = resolve_settings({"repo": str(tmp_path)}, env={})
    assert prompt_style_for(settings, PROFILES["small-base"], "fields") == "digest"
    assert prompt_style_for(settings, PROFILES["small-tuned"], "whole") == "diff"
    assert prompt_style_for(settings, PROFILES["base"], "fields") == "diff"
    assert prompt_style_for(settings, PROFILES["instruct"], "whole") == "diff"
    assert prompt_style_for(settings, PROFILES["instruct"], "facts") == "digest"
    chosen = resolve_settings({"repo": str(tmp_path), "prompt_style": "digest"}, env={})
    assert prompt_style_for(chosen, PROFILES["small-tuned"], "whole") == "digest"


def test_only_a_base_model_gets_chunk_notes(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    tuned = summarizer_for(repo.path, FakeBackend(chat_format="tuned"), map_chunks=4)
    assert tuned.map_chunks == 0
    instruct = summarizer_for(repo.path, FakeBackend(chat_format="model"), map_chunks=4)
    assert instruct.map_chunks == 0  # it reads the packed diff; notes would cost a call each
    assert summarizer_for(repo.path, FakeBackend(), map_chunks=4).map_chunks == 4


@pytest.mark.parametrize("answer", ["no json at all", "[1, 2]", '{"headline": 5'])
def test_an_answer_that_is_not_a_card_gives_a_card_of_facts(repo: RepoBuilder, answer: str) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    backend = FakeBackend(chat_format="model", chat_answers=[answer])
    (card,) = cards_for(repo.path, model=backend, cache=False)
    assert isinstance(card, Card) and card.body.by_model == ()
    jsonschema.validate(card_to_dict(card), SCHEMA)
    assert parse_card(answer) is None


def test_fields_fall_back_to_banned_starts_then_a_grammar(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    wrong = ["Adds a parser here", "A parser is added", "Parser added now"]
    backend = FakeBackend(answers={"概括": list(wrong)})
    (card,) = cards_for(repo.path, model=backend, cache=False)
    assert isinstance(card, Card) and "headline" not in card.body.by_model
    headline_calls = [
        constraint
        for prompt, constraint in zip(backend.prompts, backend.constraints, strict=True)
        if prompt.endswith("概括：")
    ]
    assert [grammar is not None for grammar, _ in headline_calls] == [False, False, True]
    assert [banned for _, banned in headline_calls] == [(), tuple(wrong[:1]), tuple(wrong[:2])]
    assert set(backend.samplings) == {BASE_MODEL_SAMPLING}


def test_the_strategy_is_part_of_the_cache_key(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    chat = FakeBackend(chat_format="model", chat_answers=[json.dumps(GOOD, ensure_ascii=False)])
    (fields,) = cards_for(repo.path, model=chat, strategy="fields")
    (whole,) = cards_for(repo.path, model=chat, strategy="whole")
    assert isinstance(fields, Card) and isinstance(whole, Card)
    assert not whole.timing.cached and whole.model.strategy == "whole"
    (again,) = cards_for(repo.path, model=chat, strategy="whole")
    assert isinstance(again, Card) and again.timing.cached


def assert_whole_cards_hold(
    cards: list[dict],
    history: RepoBuilder,  # noqa: F811
    base_model: bool = True,
    strategy: str = "whole",
) -> None:
    assert cards
    for card in cards:
        jsonschema.validate(card, SCHEMA)
        assert card["model"]["strategy"] == strategy
        evidence = history.git("show", "--first-parent", "--format=%B", card["pr"]["sha"])
        body = card["card"]
        texts = [body["headline"], body["summary"], *body["lessons"], *body["follow_ups"]]
        for text in texts + [focus["why"] for focus in body["focus"]]:
            for name in cited_names(text):
                assert name.strip("()") in evidence, f"{name!r} in {text!r} is not in the PR"
        paths = {change["path"] for change in card["pr"]["files"]}
        assert all(focus["path"] in paths for focus in body["focus"])
        if base_model:  # what the untuned model botched is ours, and so marked
            assert set(body["by_model"]) < set(EVERY_FIELD)


@pytest.mark.model
def test_whole_cards_on_the_embedded_default_model(
    history: RepoBuilder,  # noqa: F811
    small_model: Path,
) -> None:
    document = run_range(history.path, small_model, "--strategy", "whole", "--no-cache")
    assert_whole_cards_hold(document["cards"], history)


def test_a_model_without_a_chat_format_refuses_whole_cards(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    with pytest.raises(ConfigError, match="chat format"):
        cards_for(repo.path, model=FakeBackend(), strategy="whole")


@pytest.mark.model
def test_the_small_model_is_tuned_to_write_whole_cards(
    history: RepoBuilder,  # noqa: F811
    small_model: Path,
    no_network: None,
) -> None:
    document = run_range(history.path, None, "--model", "small", "--no-cache")
    cards = document["cards"]
    assert_whole_cards_hold(cards, history, base_model=False)
    adapter = adapter_of(EMBEDDED["small"])
    assert adapter is not None
    assert all(card["model"]["adapter"] == adapter.name for card in cards)
    # The tuned model writes fields that pass every check (the base model writes none here).
    assert any(card["card"]["by_model"] for card in cards)
    base = run_range(history.path, None, "--model", "small", "--no-cache", "--no-adapter")["cards"]
    assert all(card["model"]["adapter"] is None for card in base)
    assert all(card["model"]["strategy"] == "fields" for card in base)
