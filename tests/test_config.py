"""Settings resolve once, with flag > PRSUM_* env > [tool.prsum] > default."""

from __future__ import annotations

from pathlib import Path

import pytest

from prsum.config import DEFAULT_CONTEXT, resolve_settings
from prsum.errors import ConfigError


def write_pyproject(repo: Path, table: str) -> None:
    (repo / "pyproject.toml").write_text(f"[tool.prsum]\n{table}\n", encoding="utf-8")


def test_defaults(tmp_path: Path) -> None:
    settings = resolve_settings({"repo": str(tmp_path)}, env={})
    assert (settings.lang, settings.ctx, settings.model, settings.include_bots) == (
        "zh",
        DEFAULT_CONTEXT,
        None,
        False,
    )
    assert settings.threads >= 1
    assert settings.sources["lang"] == "default"


def test_precedence_flag_env_pyproject(tmp_path: Path) -> None:
    write_pyproject(tmp_path, 'lang = "en"\nctx = 2048\nmodel = "models/m.gguf"')
    from_file = resolve_settings({"repo": str(tmp_path)}, env={})
    assert (from_file.lang, from_file.ctx) == ("en", 2048)
    assert from_file.model == tmp_path / "models/m.gguf"  # relative to the target repo
    assert from_file.sources["ctx"] == "pyproject"
    from_env = resolve_settings(
        {"repo": str(tmp_path)}, env={"PRSUM_CTX": "1024", "PRSUM_LANG": "zh"}
    )
    assert (from_env.lang, from_env.ctx, from_env.sources["ctx"]) == ("zh", 1024, "env")
    from_flag = resolve_settings({"repo": str(tmp_path), "ctx": 8192}, env={"PRSUM_CTX": "1024"})
    assert (from_flag.ctx, from_flag.sources["ctx"]) == (8192, "flag")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PRSUM_LANG": "fr"}, "PRSUM_LANG: unknown language"),
        ({"PRSUM_CTX": "lots"}, "PRSUM_CTX: expected a whole number"),
        ({"PRSUM_CTX": "16"}, "at least 512"),
    ],
)
def test_bad_values_name_their_source(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_settings({"repo": str(tmp_path)}, env=env)


def test_broken_pyproject_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.prsum\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read"):
        resolve_settings({"repo": str(tmp_path)}, env={})
