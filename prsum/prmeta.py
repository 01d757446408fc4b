"""Forge metadata carried in by hand: the JSON that `gh pr list --json ...` writes.

On a connected machine: `gh pr list --state merged --limit 500 --json
number,title,body,labels,author,reviews,comments > prs.json`; carry the file across; pass it
with `--pr-meta prs.json`. PR bodies, labels and review comments then reach the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prsum.errors import ConfigError
from prsum.types import PrMeta

_EXPECTED = "a JSON list from `gh pr list --json number,title,body,labels,author,reviews,comments`"
_COMMENT_LIMIT = 5


def _login(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("login"), str):
        return str(value["login"])
    return None


def _objects(entry: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    """The objects of a list field; a field of another type is the file's error, named."""
    value = entry.get(key) or []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: `{key}` is a JSON {type(value).__name__}, expected a list")
    return [item for item in value if isinstance(item, dict)]


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _meta(entry: dict[str, Any], source: str, where: str) -> PrMeta:
    labels = tuple(
        label["name"]
        for label in _objects(entry, "labels", where)
        if isinstance(label.get("name"), str)
    )
    reviews = _objects(entry, "reviews", where)
    comments = _objects(entry, "comments", where)
    reviewers = tuple(
        dict.fromkeys(login for review in reviews if (login := _login(review.get("author"))))
    )
    bodies = [_text(item.get("body")) for item in [*reviews, *comments]]
    return PrMeta(
        source=source,
        body=_text(entry.get("body")),
        labels=labels,
        author=_login(entry.get("author")),
        reviewers=reviewers,
        review_comments=tuple(body for body in bodies if body)[:_COMMENT_LIMIT],
    )


def load_pr_meta(path: Path) -> dict[int, PrMeta]:
    """PR metadata by number, or a ConfigError naming what is wrong with the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"--pr-meta {path} does not exist: expected {_EXPECTED}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read --pr-meta {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"--pr-meta {path} is not valid JSON (line {exc.lineno}): expected {_EXPECTED}"
        ) from None
    except RecursionError:
        raise ConfigError(f"--pr-meta {path} is nested too deeply: expected {_EXPECTED}") from None
    if not isinstance(data, list):
        raise ConfigError(
            f"--pr-meta {path} holds a JSON {type(data).__name__}: expected {_EXPECTED}"
        )
    metas: dict[int, PrMeta] = {}
    for position, entry in enumerate(data):
        number = entry.get("number") if isinstance(entry, dict) else None
        if not isinstance(number, int) or isinstance(number, bool):
            raise ConfigError(
                f"--pr-meta {path}: entry {position} has no PR number: expected {_EXPECTED}"
            )
        metas[number] = _meta(entry, path.name, f"--pr-meta {path}, entry {position}")
    return metas
