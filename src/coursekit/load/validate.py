"""Turning pydantic's validation errors into located, readable diagnostics."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from coursekit import codes
from coursekit.diagnostics import Diagnostic
from coursekit.hints import did_you_mean, one_of
from coursekit.model.base import Node, Source

N = TypeVar("N", bound=Node)
_QUOTED = re.compile(r"'([^']*)'")


def validate(kind: type[N], data: Any, source: Source) -> tuple[N | None, list[Diagnostic]]:
    """The located model, or None and a diagnostic per problem."""
    if not isinstance(data, dict):
        what = "nothing" if data is None else f"a {_yaml_type(data)}"
        loc = source.value_at(())
        return None, [
            Diagnostic.at(
                loc,
                codes.WRONG_TYPE,
                f"expected a mapping of keys for a {_kind_name(kind)}, found {what}",
            )
        ]
    try:
        model = kind.model_validate(data)
    except ValidationError as exc:
        return None, list(_diagnostics(kind, exc, source))
    model.attach(source)
    return model, []


def _diagnostics(kind: type[Node], exc: ValidationError, source: Source) -> Iterator[Diagnostic]:
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        where = ".".join(str(part) for part in loc)
        etype = error["type"]
        if etype == "extra_forbidden":
            key = str(loc[-1])
            allowed = _fields_at(kind, loc[:-1])
            listed = f" (allowed here: {', '.join(sorted(allowed))})" if allowed else ""
            message = f"unknown key '{key}'" + did_you_mean(key, allowed, otherwise=listed)
            yield Diagnostic.at(source.key_at(loc), codes.UNKNOWN_KEY, message)
        elif etype == "missing":
            parent = ".".join(str(part) for part in loc[:-1])
            inside = f" in '{parent}'" if parent else ""
            yield Diagnostic.at(
                source.value_at(loc[:-1]),
                codes.MISSING_KEY,
                f"missing required key '{loc[-1]}'{inside}",
            )
        elif etype == "literal_error":
            # "Input should be 'draft' or 'published'": name the value and the choices.
            choices = _QUOTED.findall(str(error.get("ctx", {}).get("expected", "")))
            got = error.get("input")
            prefix = f"'{where}': " if where else ""
            if got is None or isinstance(got, dict | list):
                what = (
                    "an empty value"
                    if got is None
                    else "a list"
                    if isinstance(got, list)
                    else "a mapping"
                )
                message = f"{prefix}expected one of {', '.join(choices)}, found {what}"
            else:
                message = f"{prefix}{_short(got)} is not a valid value" + one_of(str(got), choices)
            yield Diagnostic.at(source.value_at(loc), codes.WRONG_TYPE, message)
        else:
            message = error["msg"]
            if etype == "value_error":
                message = message.removeprefix("Value error, ")
            got = error.get("input")
            shown = (
                ""
                if isinstance(got, dict | list) or etype == "value_error"
                else f" (got {_short(got)})"
            )
            prefix = f"'{where}': " if where else ""
            yield Diagnostic.at(source.value_at(loc), codes.WRONG_TYPE, f"{prefix}{message}{shown}")


def _fields_at(kind: type[BaseModel], path: tuple[Any, ...]) -> list[str]:
    """The keys allowed in the mapping at `path` of a document of `kind`."""
    current: Any = kind
    for part in path:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            current = _inner(current)
            if isinstance(part, int):
                continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = _field_named(current, str(part))
        if field is None:
            return []
        current = _inner(field)
    current = _inner(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [info.alias or name for name, info in current.model_fields.items()]
    return []


def _field_named(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.annotation
    return None


def _inner(annotation: Any) -> Any:
    """The model inside `list[M]`, `dict[str, M]`, `M | None`."""
    origin = typing.get_origin(annotation)
    if origin in (list, dict, typing.Union, types.UnionType):
        for arg in reversed(typing.get_args(annotation)):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                return arg
            inner = _inner(arg)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return annotation


def _yaml_type(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _kind_name(kind: type[Node]) -> str:
    return {
        "CourseManifest": "course",
        "BookManifest": "book",
        "ChapterManifest": "chapter",
        "LessonFrontMatter": "lesson's front matter",
        "WorkedProblem": "worked problem",
        "Exercise": "exercise",
    }.get(kind.__name__, kind.__name__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
