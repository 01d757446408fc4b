"""What a PR changes in its configuration: the settings of its TOML, JSON and YAML files that
it adds, removes or changes, named by their key paths.

A reviewer of a configuration change asks what is now set: `[profile.debugging]` with
`debug = true`, `package.edition` from `2021` to `2024`, a workflow step that no longer uses an
action. The diff shows lines; the key a line sets lies in the lines above it, often outside the
hunk, and a block of lines inserted says nothing of where it goes. So both versions of the file
are read whole, through the blobs its patch names, parsed, and compared key by key: what is
said is what the files set, true by construction.

- Items of a list of tables (workflow steps, dependabot's updates) are matched by their `name`
  or `id`, else by their first key's value (`uses=actions/checkout`, a version after `@` not
  part of it); where those do not tell every item apart, by position (`steps[3]`, from 0) if
  the list keeps its length, else the list is said to change as a whole.
- A table added is told whole where it is short, else by its keys; a table of one key by that
  key (`profile.debugging`, not `profile` set to `{"debugging": …}`).
- A list's plain values are compared as a set, the items added and removed, where the
  tables among them (if any) stay as they were.
- A string too long to show (a step's script) that has a line edited in place is told by that
  line, as a line of code is quoted (`edited`).
- A value removed under one key and added under another of the same file is moved
  (golangci-lint's `run.deadline` became `run.timeout`; `gofmt` went from `linters.enable` to
  `formatters.enable`): told as a move (`moved`, `item_moved`), not as a setting gone and
  another set, which reads as if the setting were dropped.
- Values are shown as the format reads them; YAML's scalars as written (`3.10` is no 3.1, `on`
  no boolean), its merge keys (`<<: *defaults`) merged; a table or list as JSON where short, a
  string quoted where the other side holds the same text as no string (`"true"` to `true`).
- Not told: a package's dependencies and own version in a manifest (the lock, bump and
  release sentences tell those), a pinned reference moved (`actions/checkout@v4` to `@v5`: a
  bump), files the PR deletes, and a file either side of which is not a table in its format
  (JSON with comments, several YAML documents, a list at the top) or holds more than
  `_MAX_NODES` values once YAML's aliases are followed: nothing is said of it.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import PurePosixPath
from typing import Any

import yaml

from prsum.digest import BlobReader, blob_names, side_text
from prsum.facts.edits import edited_line
from prsum.filekinds import file_kind, is_generated, is_manifest
from prsum.types import FileDiff, SettingChange, SettingKind

_MAX_BYTES = 1 << 20  # a configuration file larger than this is data, not settings: not read
_MAX_NODES = 50_000  # values a YAML file may expand to through its aliases (a billion laughs)
_MAX_VALUE = 80  # characters of a value shown
_MAX_IDENTITY = 80  # characters of the value that names an item of a list of tables
_PLAIN_KEY = re.compile(r"[\w-]+")
# A pinned reference's version: `@v4`, `@4.1.0`, `@<commit sha>` (not an e-mail's domain).
_REF_VERSION = re.compile(r"@(?:v?\d[\w.-]*|[0-9a-f]{7,40})$")
_DEPENDENCIES = re.compile(r"(?i)depend")  # `dependencies`, `devDependencies`, `dependency-groups`
# A manifest's own version: the release sentence tells it.
_OWN_VERSION_KEYS = frozenset(
    {
        "version",
        "package.version",
        "project.version",
        "workspace.package.version",
        "tool.poetry.version",
    }
)
_KINDS = frozenset({"config", "ci"})
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, where built: 3× faster
_MERGE_TAG = "tag:yaml.org,2002:merge"

Change = tuple[tuple[str, ...], SettingKind, str, str]  # key path, kind, before, after (shown)
# Values too common to say that one removed and one added are the same setting moved.
_COMMON_VALUES = frozenset(
    {"", "true", "false", "True", "False", "null", "~", "yes", "no", "on", "off", "[]", "{}"}
)
_NUMBER = re.compile(r"[-+]?\d[\d_.]*")


class _Bare(str):
    """A YAML scalar the file writes unquoted that YAML reads as no string (`true`, `3`,
    `null`): shown without quotes inside a table or list."""


class _List(str):
    """A list added whole, as shown (a string that only looks like one is no list)."""


class _Item(str):
    """A part of a key path that names an item of a list (`Build` of `steps[Build]`), not a
    key of a table (which may be `[x]` itself)."""


def setting_changes(
    diffs: tuple[FileDiff, ...], statuses: Mapping[str, str], read_blob: BlobReader
) -> tuple[SettingChange, ...]:
    """Each setting the PR's configuration files add, remove or change, file by file in the
    diff's order; in a table, its keys in the new file's order, then those it removes."""
    found: list[SettingChange] = []
    for diff in diffs:
        reader = _READERS.get(PurePosixPath(diff.path).suffix.lower())
        blobs = blob_names(diff.patch)
        if (
            reader is None
            or blobs is None
            or statuses.get(diff.path) not in ("A", "M", "R")
            or file_kind(diff.path) not in _KINDS
            or is_generated(diff.path)
        ):
            continue
        old, new = (_read(reader, blob, read_blob) for blob in blobs)
        if old is None or new is None:
            continue
        manifest = is_manifest(diff.path)
        # What other sentences tell is left out before moves are found: a dependency's pin
        # arriving is no move of an override's.
        changes = [
            (key, kind, before, after)
            for key, kind, before, after in _compare(old, new, ())
            if not (manifest and _told_elsewhere(key)) and not _ref_moved(before, after)
        ]
        found += [
            SettingChange(diff.path, dotted(key), kind, str(before), str(after))
            for key, kind, before, after in _moves(changes)
        ]
    return tuple(found)


def _moves(changes: list[Change]) -> list[Change]:
    """`changes` with each value that leaves one key for another told as one move: a setting
    removed and one added with the same value (`moved`: the new key, the old key's dotted
    path as `before`, the value as `after`), a list's value removed and added to another
    list, or to a list the PR adds whole (`item_moved`, likewise). A list added whole whose
    values all moved into it is said by its moves.

    Only what is as good as the same setting moves: a value that leaves once and arrives
    once, no common scalar and no number (`true` or `5` removed here and added there are as
    often two settings as one), between keys of the same table or of the same name
    (`run.deadline` to `run.timeout`; `linters.enable` to `formatters.enable`)."""
    left: dict[str, list[int]] = {}
    arrived: dict[str, list[int]] = {}
    for index, (_, kind, before, after) in enumerate(changes):
        if kind in ("removed", "item_removed") and _distinct(before):
            left.setdefault(before, []).append(index)
        elif kind in ("added", "item_added") and _distinct(after) and not isinstance(after, _List):
            arrived.setdefault(after, []).append(index)
        if isinstance(after, _List):
            for value in _list_values(after):
                if _distinct(value):
                    arrived.setdefault(value, []).append(index)
    moved = dict(enumerate(changes))
    used: set[int] = set()  # targets a move took: one each
    into: Counter[int] = Counter()  # values moved into a list added whole, by its change
    for value, sources in left.items():
        targets = arrived.get(value, [])
        if len(sources) != 1 or len(targets) != 1 or targets[0] in used:
            continue
        (old_key, old_kind, _, _), (new_key, new_kind, _, new_value) = (
            changes[sources[0]],
            changes[targets[0]],
        )
        whole_list = isinstance(new_value, _List)  # the value is one of its items
        if (
            old_key == new_key
            or (old_kind == "removed") != (new_kind == "added" and not whole_list)
            or (old_key[:-1] != new_key[:-1] and old_key[-1:] != new_key[-1:])
        ):
            continue  # a setting's value now a list's item or the reverse, or far apart
        move: SettingKind = "moved" if old_kind == "removed" else "item_moved"
        moved[sources[0]] = (new_key, move, dotted(old_key), value)
        if whole_list:
            into[targets[0]] += 1
        else:
            used.add(targets[0])
            del moved[targets[0]]
    for target, count in into.items():
        if count == len(_list_values(changes[target][3])):
            del moved[target]
    return [moved[index] for index in sorted(moved)]


def _distinct(value: str) -> bool:
    """Whether a value is particular enough that one removed and one added are one setting."""
    return value not in _COMMON_VALUES and not _NUMBER.fullmatch(value)


def _list_values(shown: str) -> list[str]:
    """The values of a list added whole (`["gofmt", "goimports"]`), or [] where it holds
    anything but strings and numbers."""
    if not isinstance(shown, _List):
        return []
    try:
        values = json.loads(shown)
    except json.JSONDecodeError:
        return []
    plain = [v for v in values if isinstance(v, str | int | float) and not isinstance(v, bool)]
    return [str(v) for v in plain] if len(plain) == len(values) else []


def _ref_moved(before: str, after: str) -> bool:
    """A pinned reference moved (`actions/checkout@v4` to `actions/checkout@<sha>`): a bump,
    which the title and the quoted edits tell with the comment that names the version."""
    return bool(
        _REF_VERSION.search(before)
        and _REF_VERSION.search(after)
        and _REF_VERSION.sub("", before) == _REF_VERSION.sub("", after)
    )


def _told_elsewhere(key: tuple[str, ...]) -> bool:
    """A manifest's dependency or its own version: the bump, lock and release sentences'."""
    return any(map(_DEPENDENCIES.search, key)) or ".".join(key) in _OWN_VERSION_KEYS


def _compare(old: Any, new: Any, key: tuple[str, ...]) -> Iterator[Change]:
    """The changes from `old` to `new` under `key`: (key, kind, before, after), where kind is
    added, removed, changed, item_added or item_removed and a value not shown is ""."""
    if isinstance(old, dict) and isinstance(new, dict):
        for name, value in new.items():
            if name in old:
                yield from _compare(old[name], value, (*key, name))
            else:
                yield from _added((*key, name), value)
        for name, value in old.items():
            if name not in new:
                yield (*key, name), "removed", _shown(value), ""
    elif isinstance(old, list) and isinstance(new, list):
        yield from _compare_lists(old, new, key)
    elif _differ(old, new):
        before, after = _shown(old), _shown(new)
        if before and before == after:  # the same text, not the same value: `"true"` to `true`
            before, after = _shown(old, quoted=True), _shown(new, quoted=True)
        edit = (
            edited_line(old, new)
            if isinstance(old, str) and isinstance(new, str) and not (before and after)
            else None
        )
        if edit is not None:  # a script too long to show: the line of it edited
            yield key, "edited", *edit
        else:
            yield key, "changed", before, after


def _added(key: tuple[str, ...], value: Any) -> Iterator[Change]:
    """A setting added: whole where its value is short enough to show, else a table by each
    of its keys (a list stays whole: its items are not settings of their own); a table of one
    key by that key (`profile.debugging`, not `profile` set to `{"debugging": …}`)."""
    shown = _shown(value)
    single = isinstance(value, dict) and len(value) == 1
    if (shown and not single) or not isinstance(value, dict) or not value:
        yield key, "added", "", _List(shown) if isinstance(value, list) else shown
    else:
        for name, item in value.items():
            yield from _added((*key, name), item)


def _differ(old: Any, new: Any) -> bool:
    """Whether two values differ: a YAML string quoted on one side and not on the other is
    the same string; `"true"` and `true`, or `1` and `1.0`, are not the same value."""
    if isinstance(old, str) and isinstance(new, str):
        return str(old) != str(new)
    return _flow(old) != _flow(new) or type(old) is not type(new)


def _compare_lists(old: list[Any], new: list[Any], key: tuple[str, ...]) -> Iterator[Change]:
    """A list's changes: of plain values, those added and removed (where its tables, if any,
    stay as they were); of tables, each table matched with its own (`_identities`) and
    compared; else the list as a whole."""
    if old == new:
        return
    old_plain, new_plain = [v for v in old if not _nested(v)], [v for v in new if not _nested(v)]
    nested_same = [v for v in old if _nested(v)] == [v for v in new if _nested(v)]
    if nested_same and _unique(old_plain) and _unique(new_plain):
        # Plain values added or removed around tables that stay (a nav's pages by a section)
        yield from ((key, "item_added", "", _shown(v)) for v in new_plain if v not in old_plain)
        yield from ((key, "item_removed", _shown(v), "") for v in old_plain if v not in new_plain)
        return
    old_names, new_names = _identities(old), _identities(new)
    if old_names is None or new_names is None:
        if len(old) != len(new):
            yield key, "changed", _shown(old), _shown(new)
            return
        old_names = new_names = [str(index) for index in range(len(old))]
    before = dict(zip(old_names, old, strict=True))
    for name, item in zip(new_names, new, strict=True):
        if name in before:
            yield from _compare(before[name], item, (*key, _Item(name)))
        else:
            yield from _added((*key, _Item(name)), item)
    yield from (
        ((*key, _Item(name)), "removed", _shown(item), "")
        for name, item in zip(old_names, old, strict=True)
        if name not in new_names
    )


def _nested(value: Any) -> bool:
    return isinstance(value, dict | list)


def _unique(items: list[Any]) -> bool:
    return len({_flow(item) for item in items}) == len(items)


def _identities(items: list[Any]) -> list[str] | None:
    """What names each table of a list, if every item is a table and the names tell them
    apart: its `name` or `id`, else its first key and that key's value."""
    names = []
    for item in items:
        if not isinstance(item, dict) or not item:
            return None
        label = next((item[k] for k in ("name", "id") if _names(item.get(k))), None)
        if label is None:
            first, value = next(iter(item.items()))
            if not _names(value):
                return None
            label = f"{first}={_REF_VERSION.sub('', value)}"
        names.append(str(label))
    return names if max(Counter(names).values(), default=1) == 1 else None


def _names(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= _MAX_IDENTITY and "\n" not in value


def dotted(key: tuple[str, ...]) -> str:
    """A key path as the card writes it: `profile.dev.package."*".debug`, `steps[Build].run`."""
    parts = []
    for part in key:
        if isinstance(part, _Item):
            parts.append(f"[{part}]")
        else:
            shown = part if _PLAIN_KEY.fullmatch(part) else json.dumps(part, ensure_ascii=False)
            parts.append(("." if parts else "") + shown)
    return "".join(parts)


def _shown(value: Any, quoted: bool = False) -> str:
    """A value as the card shows it, or "" where it is too long to quote: a string as written
    (`quoted`: as JSON writes it), a table or a list as JSON (a YAML key with no value,
    `workflow_dispatch:`, shows none)."""
    text = value if isinstance(value, str) and not quoted else _flow(value)
    return text if len(text) <= _MAX_VALUE and "\n" not in text and text.strip() else ""


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if isinstance(value, _Bare):
        return str(value) or "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    return str(value)  # numbers, TOML's dates and times


def _read(reader: Callable[[str], Any], blob: str, read_blob: BlobReader) -> Any:
    """A version of a file as a table: empty for a side that does not exist, None for one the
    clone lacks, that its format cannot read, or that is no table."""
    text = side_text(blob, read_blob, _MAX_BYTES)
    if text is None:
        return None
    try:
        data = reader(text) if text.strip() else {}
    except (ValueError, TypeError, yaml.YAMLError, RecursionError):
        return None  # not its format; or a merge key that names no table
    return data if isinstance(data, dict) else None


def _yaml(text: str) -> Any:
    """A YAML document as written: its scalars as the text they are (YAML 1.1 would read `on`
    as true and `3.10` as 3.1), keys as text, merge keys merged."""
    node = yaml.compose(text, Loader=_YAML_LOADER)
    return {} if node is None else _YamlReader().value(node)


class _YamlReader:
    """Turns YAML's nodes into values, counting them: an alias is read again wherever it is
    used, so a small file can name billions of values."""

    def __init__(self) -> None:
        self.left = _MAX_NODES

    def value(self, node: yaml.Node) -> Any:
        self.left -= 1
        if self.left < 0:
            raise ValueError("too many values")
        if isinstance(node, yaml.MappingNode):
            merged: dict[str, Any] = {}
            own: dict[str, Any] = {}
            for key, item in node.value:
                if key.tag == _MERGE_TAG:  # `<<: *defaults` or `<<: [*a, *b]`, the first wins
                    sources = item.value if isinstance(item, yaml.SequenceNode) else [item]
                    for source in reversed(sources):
                        merged.update(self.value(source))
                else:
                    own[self.key(key)] = self.value(item)
            return {**merged, **own} if merged else own
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item) for item in node.value]
        text = str(node.value)
        plain = not node.style and node.tag != "tag:yaml.org,2002:str"  # libyaml says ""
        return _Bare(text) if plain else text

    def key(self, node: yaml.Node) -> str:
        return str(node.value) if isinstance(node, yaml.ScalarNode) else _flow(self.value(node))


_READERS: dict[str, Callable[[str], Any]] = {
    ".toml": tomllib.loads,
    ".json": json.loads,
    ".yml": _yaml,
    ".yaml": _yaml,
}
