"""Rendering: JSON that validates against prsum.card/1, Markdown in CARDS.md's layout."""

from __future__ import annotations

import json
import re
from importlib.resources import files

import jsonschema
import pytest

from prsum import render
from prsum.types import Card, Discovery, RangeReport
from tests.conftest import RepoBuilder
from tests.fakes import FakeBackend
from tests.test_cards import PARSER, write_card

SCHEMA = json.loads(files("prsum").joinpath("schema/card.schema.json").read_text(encoding="utf-8"))


@pytest.fixture
def cards(repo: RepoBuilder) -> list[Card]:
    repo.commit(
        "✨ Add a parser (#10)\n\nCo-authored-by: Grace Hopper <grace@example.com>",
        {"src/parser.py": PARSER},
    )
    repo.commit("⬆ Bump requests (#11)", {"uv.lock": "requests==2.32\n"})
    backend = FakeBackend(
        answers={
            "概括": ["新增文本解析函数", "升级锁文件"],
            "摘要": ["新增 `parse` 与 `render`。", "只改了锁文件。"],
            "Headline": ["A text parser"],
            "Summary": ["Adds `parse`."],
        }
    )
    return [
        write_card(repo, backend, rev="HEAD~1"),
        write_card(repo, backend, rev="HEAD"),
        write_card(repo, backend, lang="en", rev="HEAD~1"),
    ]


def test_every_card_validates_against_the_schema(cards: list[Card]) -> None:
    for card in cards:
        jsonschema.validate(render.card_to_dict(card), SCHEMA)


def test_markdown_follows_the_cards_layout(cards: list[Card]) -> None:
    feature, bump, english = cards
    lines = render.card_to_markdown(feature).splitlines()
    assert lines[0] == f"### {feature.body.headline}"
    assert re.fullmatch(
        r"<sub>#10 · [0-9a-f]{7} · Ada Lovelace, Grace Hopper · 1 file · \+6 −0</sub>", lines[1]
    )
    assert lines[2] == ""
    assert lines[3].startswith(f"值得快速浏览（约 {feature.body.minutes} 分钟）：")
    assert render.card_to_markdown(bump).splitlines()[3].startswith("不必精读代码细节：")
    assert (
        render.card_to_markdown(english)
        .splitlines()[3]
        .startswith(f"Worth a quick read (about {english.body.minutes} minutes): ")
    )


def test_range_json_lists_cards_and_what_was_skipped(cards: list[Card]) -> None:
    discovery = Discovery("v0..main", tuple(card.pr for card in cards[:2]), (), ())
    document = json.loads(render.report_to_json(RangeReport(discovery, tuple(cards[:2]), (), "zh")))
    assert document["schema"] == "prsum.range/1" and document["complete"] is True
    assert [card["pr"]["number"] for card in document["cards"]] == [10, 11]
    assert document["skipped"] == {"bot_commits": [], "sync_merges": []}
    lines = render.cards_to_jsonl(cards).splitlines()
    assert [json.loads(line)["pr"]["number"] for line in lines] == [10, 11, 10]


def test_a_code_span_fenced_by_more_backticks_is_one_span_in_every_format() -> None:
    from prsum.render.inert import md_prose
    from prsum.render.terminal import _inline_code

    text = "`` return `a=${b}` `` becomes `c`."
    rendered = _inline_code(text)
    assert rendered.plain == "return `a=${b}` becomes c."
    styled = [rendered.plain[span.start : span.end] for span in rendered.spans]
    assert styled == ["return `a=${b}`", "c"]
    assert md_prose(text) == text  # a code span is kept whole, its backticks included
    # What Markdown would read as escaping a backtick, or opening a span, is escaped in prose,
    # so Markdown pairs the spans as prsum does: no HTML between them is left live.
    tricky = "Fix \\\\`a `<img src=x onerror=alert(1)>` and \\` <b>x</b>"
    assert md_prose(tricky) == (
        "Fix \\\\\\\\\\`a `<img src=x onerror=alert(1)>` and \\\\\\` &lt;b&gt;x&lt;/b&gt;"
    )


@pytest.mark.parametrize(
    ("days", "label", "en", "zh"),
    [
        (0, "#5", "merged less than a day earlier", "那个 PR 比它早不到一天合并"),
        (1, "#5", "merged 1 day earlier", "那个 PR 比它早 1 天合并"),
        (59, "#5", "merged 59 days earlier", "那个 PR 比它早 59 天合并"),
        (60, "abc1234", "committed about 2 months earlier", "那次提交比它早约 2 个月"),
        (729, "#5", "merged about 24 months earlier", "那个 PR 比它早约 24 个月合并"),
        (730, "abc1234", "committed about 2 years earlier", "那次提交比它早约 2 年"),
        (1075, "#5", "merged about 3 years earlier", "那个 PR 比它早约 3 年合并"),
        (140, "#5", "merged about 5 months earlier", "那个 PR 比它早约 5 个月合并"),
    ],
)
def test_an_origin_says_how_long_before_in_the_cards_language(
    days: int, label: str, en: str, zh: str
) -> None:
    from prsum.i18n import origin_sentence
    from prsum.types import Origin

    origin = Origin(label, "Add `x`", days, whole=days % 2 == 0)
    share = "The" if origin.whole else "Most of the"
    assert origin_sentence(origin, "en") == (
        f"{share} lines it removes were last changed in {label} (“Add `x`”), {en}."
    )
    assert origin_sentence(origin, "zh") == (
        f"它删去的行{'' if origin.whole else '大多'}是 {label}（“Add `x`”）最后改动的，{zh}。"
    )
