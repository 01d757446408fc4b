"""bench/eval.py's chrF against values computed with sacrebleu 2.4.3 (CHRF(), its defaults)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def evaluation() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("prsum_bench_eval", BENCH / "eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("hypothesis", "reference", "score"),
    [
        ("完全一致", "完全一致", 100.0),
        ("Bump jiff to 0.2.18", "Bump jiff time library to 0.2.18", 52.290425),
        ("a", "abc def", 20.0),
        (
            "新功能：改动 `get_metavar` 等 133 个文件",
            "统一帮助信息中的 metavar 显示格式",
            24.451229,
        ),
        ("xyz", "abc", 0.0),
    ],
)
def test_sentence_chrf_matches_sacrebleu(
    evaluation: ModuleType, hypothesis: str, reference: str, score: float
) -> None:
    assert evaluation.chrf(hypothesis, reference) == pytest.approx(score, abs=1e-6)


def test_corpus_chrf_sums_statistics_as_sacrebleu_does(evaluation: ModuleType) -> None:
    pairs = [
        ("新功能：改动 `get_metavar` 等 133 个文件", "统一帮助信息中的 metavar 显示格式"),
        ("Bump jiff to 0.2.18", "Bump jiff time library to 0.2.18"),
        ("a", "abc def"),
        ("完全一致", "完全一致"),
    ]
    total = [0] * 18
    for hypothesis, reference in pairs:
        stats = evaluation.chrf_statistics(hypothesis, reference)
        total = [a + b for a, b in zip(total, stats, strict=True)]
    assert evaluation.chrf_score(total) == pytest.approx(39.344169, abs=1e-6)
