"""What kind of file a path is, by name alone: used for facts and for diff salience."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Literal

FileKind = Literal["source", "test", "docs", "config", "ci", "lock", "vendored"]

_LOCK_FILES = {
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile.lock",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "go.sum",
    "composer.lock",
    "Gemfile.lock",
    "bun.lockb",
}
_VENDORED = re.compile(r"(^|/)(vendor|vendored|third_party|node_modules|_vendor)/")
_CI = re.compile(
    r"^(\.github/|\.gitlab-ci|\.circleci/|\.travis\.yml|azure-pipelines|\.pre-commit-config|Jenkinsfile|\.buildkite/)"
)
_TEST = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(test|spec)\.[jt]sx?$"
)
_DOCS_DIR = re.compile(r"(^|/)(docs?|documentation|docs_src)/")
_DOCS_EXT = {".md", ".rst", ".txt", ".adoc", ".html", ".css", ".svg", ".png", ".jpg", ".gif"}
_DOC_NAMES = {
    "README",
    "CHANGES",
    "CHANGELOG",
    "HISTORY",
    "NEWS",
    "AUTHORS",
    "LICENSE",
    "CONTRIBUTING",
}
_CONFIG_EXT = {".toml", ".cfg", ".ini", ".yml", ".yaml", ".json", ".lock", ".in"}
_CONFIG_NAMES = {"setup.py", "Makefile", "Dockerfile", ".gitignore", "requirements.txt", "tox.ini"}


@lru_cache(maxsize=8192)
def file_kind(path: str) -> FileKind:
    """The reviewer's category of a file, judged from its path."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(path).suffix.lower()
    if name in _LOCK_FILES:
        return "lock"
    if _VENDORED.search(path):
        return "vendored"
    if _CI.match(path):
        return "ci"
    if _TEST.search(path):
        return "test"
    if (
        _DOCS_DIR.search(path)
        or suffix in _DOCS_EXT
        or PurePosixPath(name).stem.upper() in _DOC_NAMES
    ):
        return "docs"
    if name in _CONFIG_NAMES or name.startswith("requirements") or suffix in _CONFIG_EXT:
        return "config"
    return "source"
