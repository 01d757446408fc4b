"""Frozen dataclasses to plain JSON values and back, for the card cache."""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


def to_plain(value: Any) -> Any:
    """A dataclass tree as dicts, lists and scalars."""
    return dataclasses.asdict(value)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _revive(kind: Any, data: Any) -> Any:
    origin = typing.get_origin(kind)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        hints = _hints(kind)
        return kind(
            **{
                f.name: _revive(hints[f.name], data[f.name])
                for f in dataclasses.fields(kind)
                if f.name in data
            }
        )
    if origin is tuple:
        arguments = typing.get_args(kind)
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return tuple(_revive(arguments[0], item) for item in data)
        return tuple(
            _revive(argument, item) for argument, item in zip(arguments, data, strict=True)
        )
    if origin in (typing.Union, types.UnionType):
        if data is None:
            return None
        real = [argument for argument in typing.get_args(kind) if argument is not type(None)]
        # Of several dataclasses (a precedent or a leftover), the one with the data's fields.
        shaped = [
            argument
            for argument in real
            if dataclasses.is_dataclass(argument)
            and isinstance(data, dict)
            and {f.name for f in dataclasses.fields(argument)} == set(data)
        ]
        return _revive((shaped or real)[0], data)
    if origin is dict:
        _, item = typing.get_args(kind)
        return {k: _revive(item, v) for k, v in data.items()}
    return data


def from_plain(cls: type[T], data: Any) -> T:
    """Rebuild a dataclass of type `cls` from what `to_plain` made of one."""
    revived: T = _revive(cls, data)
    return revived
