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
    "bun.lock",  # Bun's text lockfile (1.2 on)
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
_CONFIG_NAMES = {
    "setup.py",
    "Makefile",
    "Dockerfile",
    "Containerfile",
    ".gitignore",
    "requirements.txt",
    "tox.ini",
    "go.mod",
    "go.work",
    "Gemfile",
    "Pipfile",
    "CMakeLists.txt",
    "BUILD",
    "BUILD.bazel",
    "WORKSPACE",
}
# `Dockerfile.cuda`, `build.Dockerfile`, `app.dockerfile`: container recipes, not program source.
_CONTAINER_RECIPE = re.compile(r"^(Dockerfile|Containerfile)\.|\.(dockerfile|containerfile)$", re.I)
# Where a repository keeps programs around its product rather than the product itself: helper
# scripts, examples, benchmarks. Their code counts as source, but not as the core a reader
# must understand.
_AUXILIARY_DIR = re.compile(
    r"(^|/)(scripts?|tools?|examples?|samples?|benchmarks?|bench|hack|contrib|misc)/"
)
# Files a tool wrote, by name, and what they are: the one table behind facts (is_generated)
# and the diff budget's noise (prsum.budget). The first that matches names the kind.
GeneratedKind = Literal["snapshot", "minified", "codegen"]
_GENERATED: tuple[tuple[GeneratedKind, re.Pattern[str]], ...] = (
    ("snapshot", re.compile(r"(^|/)(__snapshots__|snapshots)/|\.snap$|\.ambr$")),
    ("minified", re.compile(r"\.min\.(js|css|mjs)$|\.bundle\.js$|\.map$")),
    (
        "codegen",  # protobuf, stringer, Kubernetes deepcopy, build_runner, other codegen
        re.compile(
            r"(^|/|_)generated[_./]|\.generated\.\w+$|(^|/)zz_generated|_string\.go$"
            r"|\.(pb|pb\.gw)\.go$|\.pb\.(cc|h)$|_pb2(_grpc)?\.pyi?$|\.g\.dart$"
        ),
    ),
)
# Manifests that pin dependency versions (locks are kind "lock").
MANIFEST_NAMES = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "Cargo.toml",
        "package.json",
        "jsr.json",
        "deno.json",
        "go.mod",
        "Gemfile",
        "Pipfile",
        "composer.json",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "environment.yml",
        "environment.yaml",
        "mix.exs",
        "pubspec.yaml",
        "Package.swift",
    }
)


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
    if name in _CONFIG_NAMES or (name.startswith("requirements") and suffix in (".txt", ".in")):
        return "config"
    if (
        _DOCS_DIR.search(path)
        or suffix in _DOCS_EXT
        or PurePosixPath(name).stem.upper() in _DOC_NAMES
    ):
        return "docs"
    if (
        name in _CONFIG_NAMES
        or name.startswith("requirements")
        or suffix in _CONFIG_EXT
        or _CONTAINER_RECIPE.search(name)
    ):
        return "config"
    return "source"


@lru_cache(maxsize=8192)
def is_auxiliary(path: str) -> bool:
    """Source outside the product: helper scripts, examples, benchmarks."""
    return bool(_AUXILIARY_DIR.search(path))


@lru_cache(maxsize=8192)
def generated_kind(path: str) -> GeneratedKind | None:
    """What a tool wrote, if a file's name says one did: a test snapshot, a minified or
    bundled asset, or codegen output."""
    return next((kind for kind, pattern in _GENERATED if pattern.search(path)), None)


def is_generated(path: str) -> bool:
    """A file whose name says a tool wrote it (codegen output, snapshots, minified assets)."""
    return generated_kind(path) is not None


def is_manifest(path: str) -> bool:
    """A package manifest: where a project declares its version and its dependencies'."""
    name = PurePosixPath(path).name
    return (
        name in MANIFEST_NAMES
        or (name.startswith("requirements") and name.endswith((".txt", ".in")))
        or bool(_CONTAINER_RECIPE.search(name))
        or name in ("Dockerfile", "Containerfile")
    )


# A changelog document, or a folder of changelog fragments (towncrier, changesets); not
# `history.py` or a `news` module.
_CHANGELOG = re.compile(
    r"(?i)((^|/)(changelog|changes|history|news|release[-_ ]?notes)(\.(md|rst|txt|adoc))?$"
    r"|(^|/)(changelog\.d|changes|newsfragments|\.changeset)/)"
)


def is_changelog(path: str) -> bool:
    """Whether `path` is where a project writes its changelog."""
    return _CHANGELOG.search(path) is not None
