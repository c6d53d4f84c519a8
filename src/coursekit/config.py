"""Configuration from `[tool.coursekit]` in the project's pyproject.toml.

    [tool.coursekit]
    course = "course"                     # the course folder, relative to pyproject.toml
    select = ["CK"]                       # codes, prefixes ("CK3") or rule names
    ignore = ["CK110", "unused-suppression"]
    output-format = "text"                # text | json | github | sarif (what `check` prints)
    sympy-seconds = 5                     # limits: here, or in [tool.coursekit.limits]
    exec-seconds = 10
    exec-memory-mb = 1024
    exec-output-kb = 1024

    [tool.coursekit.per-file-ignores]
    "course/I/*/chapter.yaml" = ["CK3"]   # fnmatch patterns, project-relative

Any mistake (an unknown key, a wrong type, a selector that names no rule, a limit outside its
range: seconds from 0.01 to 3,600, memory from 16 MB to 1 TiB, output from 1 KB to 1 GiB) is a
`ConfigError`: the command line reports it as a usage error (exit 2).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from coursekit.bounds import shorten
from coursekit.catalogue import REPORTER_NAMES, RULE_NAMES
from coursekit.hints import did_you_mean
from coursekit.records import record


class ConfigError(Exception):
    """A configuration problem: reported with exit 2 (usage error)."""


@record(frozen=True)
class Limits:
    sympy_seconds: float = 5.0
    sympy_memory_mb: int = 2048
    exec_seconds: float = 10.0
    exec_memory_mb: int = 1024
    exec_output_kb: int = 1024


@record(frozen=True)
class Config:
    course: str = "course"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    output_format: str | None = None

    @property
    def fingerprint(self) -> str:
        return repr(self)

    def selects(self, code: str, name: str) -> bool:
        """Whether `select` and `ignore` let the rule `code`/`name` run."""
        if self.select and not any(selector_matches(code, name, s) for s in self.select):
            return False
        return not any(selector_matches(code, name, s) for s in self.ignore)


def selector_matches(code: str, name: str, selector: str) -> bool:
    """A selector names a code (CK301), a code prefix (CK3) or a rule name (yaml-syntax).

    The one definition, shared by the engine, suppressions, the config's own validation and
    `coursekit explain`.
    """
    return code.startswith(selector.upper()) or name == selector


_LIMIT_KEYS = {
    "sympy-seconds": "sympy_seconds",
    "sympy-memory-mb": "sympy_memory_mb",
    "exec-seconds": "exec_seconds",
    "exec-memory-mb": "exec_memory_mb",
    "exec-output-kb": "exec_output_kb",
}
_INT_LIMITS = {"sympy_memory_mb", "exec_memory_mb", "exec_output_kb"}
# The range each limit may take. Past an hour a check is not waiting for a result but hung; past
# a terabyte a limit overflows what the kernel takes (`2**62` MB in bytes does not fit a C long).
_RANGES: dict[str, tuple[float, float, str]] = {
    "sympy_seconds": (0.01, 3600, "seconds"),
    "exec_seconds": (0.01, 3600, "seconds"),
    "sympy_memory_mb": (16, 1_048_576, "MB"),
    "exec_memory_mb": (16, 1_048_576, "MB"),
    "exec_output_kb": (1, 1_048_576, "KB"),
}
_KEYS = {"course", "select", "ignore", "per-file-ignores", "limits", "output-format", *_LIMIT_KEYS}

Known = Callable[[str], bool]


def load_config(project_root: Path) -> Config:
    path = project_root / "pyproject.toml"
    if not path.is_file():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:  # also tomllib's bare ValueError for 5,000 digits
        raise ConfigError(f"{path.name}: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("coursekit", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path.name}: [tool.coursekit] must be a table")
    return parse_config(table, path.name)


def parse_config(
    table: dict[str, Any],
    origin: str = "pyproject.toml",
    known_selector: Known | None = None,
    formats: Iterable[str] | None = None,
) -> Config:
    """Validate `[tool.coursekit]`; `known_selector` and `formats` default to the live registries."""
    where = f"{origin}: [tool.coursekit]"
    _no_unknown(table, _KEYS, where)
    known = known_selector or _registry_selector
    limits = _limits(table, where)
    course = table.get("course", "course")
    if not isinstance(course, str) or not course.strip():
        raise ConfigError(f"{where} 'course' must be a folder name (a string), got {course!r}")
    if PurePosixPath(course).is_absolute() or ".." in PurePosixPath(course).parts:
        raise ConfigError(f"{where} 'course' must be a folder inside the project, got {course!r}")
    select = _selectors(table, "select", where, known)
    ignore = _selectors(table, "ignore", where, known)
    per_file_table = table.get("per-file-ignores", {})
    if not isinstance(per_file_table, dict):
        raise ConfigError(f"{where} 'per-file-ignores' must be a table of pattern = [codes]")
    per_file: dict[str, tuple[str, ...]] = {}
    for pattern, codes in per_file_table.items():
        per_file[str(pattern)] = _selector_list(
            codes, f'{where} per-file-ignores."{pattern}"', known
        )
    output_format = table.get("output-format")
    if output_format is not None:
        allowed = sorted(set(formats if formats is not None else _formats()))
        if not isinstance(output_format, str) or output_format not in allowed:
            raise ConfigError(
                f"{where} 'output-format' is {output_format!r}; expected one of {', '.join(allowed)}"
            )
    return Config(
        course=course,
        select=select,
        ignore=ignore,
        per_file_ignores=per_file,
        limits=limits,
        output_format=output_format,
    )


def _no_unknown(table: dict[str, Any], allowed: Iterable[str], where: str) -> None:
    allowed = sorted(allowed)
    for key in table:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed, otherwise=f" (known: {', '.join(allowed)})")
            raise ConfigError(f"{where}: unknown key '{key}'{hint}")


def _limits(table: dict[str, Any], where: str) -> Limits:
    sub = table.get("limits", {})
    if not isinstance(sub, dict):
        raise ConfigError(f"{where} 'limits' must be a table")
    _no_unknown(sub, _LIMIT_KEYS, f"{where.removesuffix(']')}.limits]")
    values: dict[str, float | int] = {}
    for key, name in _LIMIT_KEYS.items():
        if key in table and key in sub:
            raise ConfigError(f"{where} '{key}' is set twice (top level and in limits)")
        if key not in table and key not in sub:
            continue
        raw = table.get(key, sub.get(key))
        if (
            isinstance(raw, bool)
            or not isinstance(raw, int | float)
            or (isinstance(raw, float) and not math.isfinite(raw))  # a huge int is no float
        ):
            raise ConfigError(f"{where} '{key}' must be a number, got {raw!r}")
        if raw <= 0:
            raise ConfigError(f"{where} '{key}' must be positive, got {raw!r}")
        if name in _INT_LIMITS and isinstance(raw, float) and not raw.is_integer():
            raise ConfigError(f"{where} '{key}' must be a whole number, got {raw!r}")
        low, high, unit = _RANGES[name]
        if not low <= raw <= high:
            raise ConfigError(
                f"{where} '{key}' is {shorten(repr(raw))}; it must be between {_number(low)} and "
                f"{_number(high)} {unit}"
            )
        if name in _INT_LIMITS:
            values[name] = int(raw)
        else:
            values[name] = float(raw)
    return Limits(**values)  # type: ignore[arg-type]


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def with_selection(config: Config, select: str | None, ignore: str | None) -> Config:
    """The configuration with `--select` (replacing) and `--ignore` (adding) from the command line.

    Both are comma-separated codes, prefixes or names, checked like the configuration's own.
    """
    chosen = config
    if select is not None:
        items = [part for part in select.split(",") if part.strip()]
        chosen = replace(chosen, select=_selector_list(items, "--select", _registry_selector))
    if ignore is not None:
        items = [part for part in ignore.split(",") if part.strip()]
        more = _selector_list(items, "--ignore", _registry_selector)
        chosen = replace(chosen, ignore=chosen.ignore + more)
    return chosen


def _selectors(table: dict[str, Any], key: str, where: str, known: Known) -> tuple[str, ...]:
    if key not in table:
        return ()
    return _selector_list(table[key], f"{where} '{key}'", known)


def _selector_list(value: Any, where: str, known: Known) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list):
        raise ConfigError(f"{where} must be a list of rule codes or names, got {value!r}")
    result: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"{where}: {item!r} is not a rule code or name")
        if not known(item.strip()):
            raise ConfigError(
                f"{where}: '{item}' matches no rule (a code like CK301, a prefix like CK3, "
                "or a rule name; see `coursekit rules`)"
            )
        result.append(item.strip())
    return tuple(result)


def _registry_selector(selector: str) -> bool:
    """Matched the way the engine matches: a code, a code prefix, or a rule's name."""
    return any(selector_matches(code, name, selector) for code, name in RULE_NAMES.items())


def _formats() -> list[str]:
    return list(REPORTER_NAMES)
