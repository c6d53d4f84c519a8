"""Configuration from `[tool.coursekit]` in the project's pyproject.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """A configuration problem: reported with exit 2 (usage error)."""


@dataclass(frozen=True)
class Limits:
    sympy_seconds: float = 5.0
    exec_seconds: float = 10.0
    exec_memory_mb: int = 1024
    exec_output_kb: int = 1024


@dataclass(frozen=True)
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


_KEYS = {"course", "select", "ignore", "per-file-ignores", "limits", "output-format"}
_LIMIT_KEYS = {
    "sympy-seconds": "sympy_seconds",
    "exec-seconds": "exec_seconds",
    "exec-memory-mb": "exec_memory_mb",
    "exec-output-kb": "exec_output_kb",
}


def load_config(project_root: Path) -> Config:
    path = project_root / "pyproject.toml"
    if not path.is_file():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path.name}: {exc}") from None
    table = data.get("tool", {}).get("coursekit", {})
    return parse_config(table, path.name)


def parse_config(table: dict[str, Any], origin: str = "pyproject.toml") -> Config:
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(
            f"{origin}: unknown key(s) in [tool.coursekit]: {', '.join(sorted(unknown))}"
        )
    limits_table = table.get("limits", {})
    bad = set(limits_table) - set(_LIMIT_KEYS)
    if bad:
        raise ConfigError(
            f"{origin}: unknown key(s) in [tool.coursekit.limits]: {', '.join(sorted(bad))}"
        )
    try:
        limits = Limits(**{_LIMIT_KEYS[key]: value for key, value in limits_table.items()})
        per_file = {
            str(k): tuple(str(c) for c in v) for k, v in table.get("per-file-ignores", {}).items()
        }
        return Config(
            course=str(table.get("course", "course")),
            select=tuple(str(code) for code in table.get("select", ())),
            ignore=tuple(str(code) for code in table.get("ignore", ())),
            per_file_ignores=per_file,
            limits=limits,
            output_format=table.get("output-format"),
        )
    except (TypeError, AttributeError) as exc:
        raise ConfigError(f"{origin}: [tool.coursekit] {exc}") from None
