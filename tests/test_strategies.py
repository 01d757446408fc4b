"""Card strategies: the choice from capabilities, the whole card's checks and fallbacks, the
field-by-field fallbacks, and both on the real default model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from prsum.cards import choose_strategy
from prsum.cards.checks import loops, said_again, sentences
from prsum.cards.fields import BASE_MODEL_SAMPLING
from prsum.cards.whole import SUMMARY_FLOOR, WHOLE_SAMPLING, answer_guard, parse_card, salvaged
from prsum.config import resolve_settings
from prsum.errors import ConfigError
from prsum.grounding import cited_names, cites_only_known
from prsum.llm import GREEDY, Capabilities, ChatFormatSource, RepeatBreaker, repeat_penalties
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
        "whole",
    ]
    assert choose_strategy("whole", family, PROFILES["small-base"]) == "whole"
    assert choose_strategy("fields", served, PROFILES["instruct"]) == "fields"
    assert for_strategy(PROFILES["instruct"], "fields").name == "base"
    assert for_strategy(PROFILES["small-base"], "whole").name == "small-tuned"
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
    (sampling,) = backend.samplings
    assert replace(sampling, allows=None) == WHOLE_SAMPLING
    # The answer is held to the PR's own names: those in its diff, not others.
    assert sampling.allows is not None
    assert sampling.allows("它新增 `", "parse`") and sampling.allows("见 `", "src/parser.py`")
    assert not sampling.allows("它新增 `", "frobnicate`")
    # A name's start is held as written (a call's parentheses aside): no sentence's period.
    assert sampling.allows("它新增 `parse", "()") and not sampling.allows("它新增 `parse", ".")
    assert "可选结论：" in backend.prompts[0]  # the rubric's options go along with the PR
    assert backend.schemas == [None]  # this backend has no native JSON schema


def test_an_instruction_model_writes_to_the_cards_schema_from_a_system_turn(
    repo: RepoBuilder,
) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER, "README.md": "docs\n"})
    card, backend = whole_card(repo, GOOD, chat_format="model", prompt_style="diff")
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
    card, _ = whole_card(repo, answer, chat_format="model")
    assert card.body.summary == "改了测试之外的一个新文件。`parse` 按空白切分文本。"
    assert "headline" not in card.body.by_model and card.body.headline != answer["headline"]
    assert card.body.lessons == ("成对的解析与渲染函数最好用往返测试锁住",)
    rules = {(event.rule, event.field) for event in card.body.dropped}
    assert ("summary.names-something-the", "summary") in rules
    assert ("untrue.wrong-language", "headline") in rules
    assert ("untrue.names-something-the-PR", "lesson") in rules


def test_a_focus_place_without_a_known_symbol_gets_the_one_facts_pick(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    why = GOOD["focus"][0]["why"]
    for symbol in (None, "", "frobnicate"):  # none, empty, one the PR does not contain
        place = {"path": "src/parser.py", "symbol": symbol, "why": why}
        card, _ = whole_card(repo, {**GOOD, "focus": [place]})
        (focus,) = card.body.focus
        assert "focus" in card.body.by_model and focus.why == why
        assert focus.symbol in ("parse", "render")


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


def test_a_sentence_that_loops_on_a_name_goes_and_the_rest_stays(repo: RepoBuilder) -> None:
    repo.commit("Add a parser (#10)", {"src/parser.py": PARSER})
    looping = "`parse` 先调用 `parse`，再交给 `parse`。"
    card, _ = whole_card(repo, {**GOOD, "summary": looping + GOOD["summary"]})
    assert "summary" in card.body.by_model and card.body.summary == GOOD["summary"]


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
    # The looped sentence is kept once, its repeats go, the unfinished end goes.
    assert card.body.summary == GOOD["summary"][: GOOD["summary"].index("两者")] + looping
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
    assert said_again("`render` 把结果拼回去。", "`render` 再把结果拼回去。")
    assert not said_again("`parse` splits the text.", "`render` joins the text.")


BREAKER = RepeatBreaker(allowed=3, multiplier=1.0, base=2.0)
QUOTE = 0  # a token with a quote in it: no repeat stretches across it


def no_breaks(token: int) -> bool:
    return token == QUOTE


def test_a_token_that_would_continue_a_long_repeat_is_penalized() -> None:
    # 1 2 3 4 was written, then 9, then 1 2 3 again: 4 would repeat a stretch of four.
    assert repeat_penalties([1, 2, 3, 4, 9, 1, 2, 3], no_breaks, BREAKER) == {4: 1.0}
    # Each token further into the repeat doubles the penalty.
    assert repeat_penalties([1, 2, 3, 4, 5, 9, 1, 2, 3, 4], no_breaks, BREAKER) == {5: 2.0}


def test_a_short_repeat_or_one_across_a_quote_costs_nothing() -> None:
    assert repeat_penalties([1, 2, 7, 9, 1, 2], no_breaks, BREAKER) == {}
    assert repeat_penalties([1, QUOTE, 3, 4, 9, 1, QUOTE, 3], no_breaks, BREAKER) == {}
    assert repeat_penalties([5], no_breaks, BREAKER) == {}


def known(name: str) -> bool:
    return name in "def parse_text(): render(items)"


STATED = frozenset({"2", "3", "1.24", "1.25", "30"})  # the numbers the PR states


def test_a_backticked_name_may_only_grow_into_a_known_one() -> None:
    assert cites_only_known("It calls `parse", "_text", known)  # still the start of a name
    assert not cites_only_known("It calls `parse", "_all", known)
    assert cites_only_known("It calls `parse_text", "`.", known)  # closes a known name
    assert not cites_only_known("It calls `", "frob`", known)  # opens and closes an unknown one

    # Prose is no name, even where `knows` forgives the space or period around one (as the
    # card's does): a sentence ends outside backticks.
    def forgiving(name: str) -> bool:
        return known(name.strip().rstrip(".。)"))

    assert cites_only_known("It calls `parse_text", "`", forgiving)
    for name in ("parse_text.", "parse_text.)", "parse_text. ", " render", "render。"):
        assert not cites_only_known(f"It calls `{name}", "`", forgiving)
    assert not cites_only_known("It calls `parse_text", ". ", forgiving)  # refused while open
    assert cites_only_known("It calls ", " `", known) and cites_only_known(
        "It calls ", "`pa", known
    )
    assert not cites_only_known("It calls ", "``", known)  # an empty name is no name


def test_text_outside_backticks_and_names_already_written_are_free() -> None:
    assert cites_only_known("It calls `parse_text` and", " frobnicates", known)
    assert cites_only_known("`frob` was written before; now", " `render`", known)
    # A quote or a line break ends a JSON string: a name must be closed before it, and a
    # backtick before it opens nothing after it.
    assert cites_only_known('"summary": "see `parse', '`", "focus": "`frob', known)
    assert not cites_only_known('"summary": "see `parse', '", "focus": "', known)
    assert cites_only_known('"a": "`parse`", "b": "', "frob", known)
    assert cites_only_known("`parse\n", "frob", known)


def test_a_summary_may_not_end_before_its_verdicts_floor() -> None:
    allows = answer_guard(known, {"src/parser.py"}, "en", STATED)
    opening = '{"headline": "Parser", "verdict": "skim", "minutes": 3, "summary": "'
    short = opening + "It adds `parse_text`."
    long = short + " word" * SUMMARY_FLOOR["en"]["skim"]
    assert not allows(short, '",') and not allows(short, "\n")
    assert allows(short, " It") and allows(long, '",')
    # Other strings end where the model ends them, the headline and the summary of a skip card.
    assert allows('{"headline": "Parser', '",')
    skip = opening.replace("skim", "skip") + long[len(opening) :][: SUMMARY_FLOOR["en"]["skip"]]
    assert allows(skip, '",')


def test_the_end_of_the_turn_is_the_end_of_the_summary() -> None:
    allows = answer_guard(known, {"src/parser.py"}, "en", STATED)
    opening = '{"headline": "Parser", "verdict": "skim", "minutes": 3, "summary": "'
    short = opening + "It adds `parse_text`."
    long = short + " word" * SUMMARY_FLOOR["en"]["skim"]
    # A control token's text is empty: before the floor it would cut the card's paragraph.
    assert not allows(short, "") and allows(long, "") and allows(short + '", "focus": [', "")
    assert not allows('{"focus": [{"path": "src/pars', "")  # nor may it cut a path


def test_a_summary_states_only_the_prs_numbers_and_changes_nothing_into_itself() -> None:
    allows = answer_guard(known, {"src/parser.py"}, "en", STATED)
    opening = '{"headline": "Go", "verdict": "skip", "minutes": 0, "summary": "It moves Go from '
    assert allows(opening, "1.24") and allows(opening, "1.") and allows(opening + "1.2", "5 to")
    assert not allows(opening, "1.23") and not allows(opening, "7")  # starts no stated number
    assert not allows(opening + "1.2", " to")  # "1.2" is not stated, though it starts two
    assert allows(opening + "1.24 to 3", "0.") and allows(opening + "1.24 to 3", ".")
    assert not allows(opening + "1.24 to 3", "0.1")  # "30.1" is not stated; "30." ends it
    # A change of something into itself is refused where it is finished, not before: digit by
    # digit, "from 3 to 3" may still become "from 3 to 30".
    to_three = (
        '{"headline": "Go", "verdict": "skip", "minutes": 0, "summary": "It moves Go from 3 to '
    )
    assert allows(to_three, "3") and allows(to_three + "3", "0") and allows(to_three + "3", ".")
    assert not allows(to_three + "3", " and") and not allows(to_three + "3.", " It")
    assert allows(opening + "1.24 to ", "1.25") and not allows(opening + "1.24 to 1.24", ",")
    # A JSON escape holds no number.
    assert allows(opening + "1.24 \\u21", "92 1.25") and not allows(opening + "1.24 \\n", "7")
    allows_zh = answer_guard(known, {"src/parser.py"}, "zh", STATED)
    opening_zh = opening[: -len("It moves Go from ")] + "把 `parse_text` 的调用从 `render` 改为 "
    assert not allows_zh(opening_zh, "`render`，") and allows_zh(opening_zh, "`parse_text`，")
    assert allows_zh(opening_zh + "`parse_text`，改了 ", "3 处")
    assert not allows_zh(opening_zh + "`parse_text`，改了 ", "4 处")
    # Numbers outside the summary are the checks' business, not the guard's.
    assert allows('{"headline": "Go ', "1.23")


def test_a_summary_keeps_to_its_languages_letters_and_the_prs() -> None:
    opening = '{"headline": "Release", "verdict": "skip", "minutes": 0, "summary": "'
    allows_zh = answer_guard(known, {"src/parser.py"}, "zh", STATED)
    assert allows_zh(opening, "发布版本") and allows_zh(opening + "给 ", "café 加上")
    assert not allows_zh(opening + "改了 ", "'__клю__'")  # a stray token of another script
    allows_en = answer_guard(known, {"src/parser.py"}, "en", STATED)
    assert not allows_en(opening + "It bumps ", "版本") and allows_en(opening, "It bumps µs")
    # A letter the PR itself writes may be quoted; in en not a CJK one, which `in_language`
    # refuses, though inside a code span it is part of a name.
    pr_letters = answer_guard(lambda name: name in "'λ' `名前`", {"a.py"}, "en", STATED)
    assert pr_letters(opening + "It renames the unit to ", "λs.")
    assert not pr_letters(opening + "It renames ", "名前") and pr_letters(
        opening + "It renames `", "名前"
    )


def test_a_focus_place_is_one_of_the_prs_files_and_names() -> None:
    allows = answer_guard(known, {"src/parser.py", "src/render.py"}, "en", STATED)
    place = '{"focus": [{"path": "src/'
    assert allows(place, "parser") and allows(place + "parser", '.py", ')
    assert not allows(place, "lexer") and not allows(place + "parser", '", ')  # a path's start
    symbol = place + 'parser.py", "symbol": "'
    assert allows(symbol, "parse_text") and not allows(symbol, "frob")
    assert allows(symbol + "parse_text", '", "why": "') and allows(symbol[:-1], "null")


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
) -> None:
    assert cards
    for card in cards:
        jsonschema.validate(card, SCHEMA)
        assert card["model"]["strategy"] == "whole"
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


def test_a_summary_sentence_does_not_loop_on_names_or_words() -> None:
    allows = answer_guard(known, {"src/parser.py"}, "en", STATED)
    opening = '{"headline": "Parser", "verdict": "skip", "minutes": 0, "summary": "'
    twice = opening + "`parse_text` calls `render`, and `parse_text` "
    assert not allows(twice, "calls `") and allows(twice, "calls it")
    assert allows(opening + "`parse_text` calls `render` and ", "`parse")  # no repeat yet
    # A new sentence may name it again.
    assert allows(twice + "returns.", " `") and allows(twice + "returns. Then", " `render")
    # Nor may a stretch of words run a fourth time on end.
    stutter = opening + "It counts the attention-heads-heads-heads"
    assert not allows(stutter, "-heads") and allows(stutter, " and the rest.")
    assert not allows(stutter, "-heads ")  # wherever the piece stops
    # Nor may a sentence say a phrase a third time (four words in en, five characters in zh).
    phrase = (
        opening + "It skips the old worker hooks as the old worker hooks run, so the old worker "
    )
    assert not allows(phrase, "hooks") and allows(phrase, "callbacks")
    assert allows(phrase + "callbacks stay. Then the old worker ", "hooks")  # a new sentence
    numbers = opening + "It sets numpy to 2, sets numpy to 2 and sets numpy to "
    assert not allows(numbers, "2") and allows(numbers, "3")  # a phrase may end on a digit
    # In zh a refused backtick is not traded for the name written bare.
    allows_zh = answer_guard(known, {"src/parser.py"}, "zh", STATED)
    twice_zh = opening + "`parse_text` 调用 `render`，`parse_text` 再"
    assert not allows_zh(twice_zh, "调用 `") and not allows_zh(twice_zh, "调用 render")
    assert allows_zh(twice_zh, "返回。") and allows_zh(twice_zh + "返回。", "`render")
    assert allows_zh(opening + "`parse_text` 调用 ", "render")  # no repeat yet
    phrase_zh = opening + "它在父目录里执行，在父目录里执行，在父目录"
    assert not allows_zh(phrase_zh, "里") and allows_zh(phrase_zh, "中执行")
    # A sentence that already loops (`loops` drops it) refuses nothing more: no search in vain.
    assert allows_zh(opening + "它在父目录里执行，在父目录里执行，在父目录里执行，然", "后")
    assert allows_zh(opening + "它在 `父目录里执行` 与 `父目录里执行` 里执行，在父目", "录里")
