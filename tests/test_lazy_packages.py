"""`coursekit.verify` and `coursekit.exec` import a public name's module when it is first asked
for: a run that needs one of their tables (a status, a type) does not import the whole
package (the sympy server's client, the program runner)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
import coursekit.exec.types, coursekit.verify.status  # what coursekit.rules.outcomes reads
loaded = sorted(m for m in sys.modules if m.startswith(("coursekit.verify", "coursekit.exec")))
print(" ".join(loaded))
"""


def test_a_status_table_imports_neither_package_whole() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert "coursekit.exec.types" in out and "coursekit.verify.status" in out
    for heavy in ("coursekit.exec.runner", "coursekit.verify.runner", "coursekit.verify.claims"):
        assert heavy not in out, out


@pytest.mark.parametrize("package", ["coursekit.verify", "coursekit.exec"])
def test_every_public_name_is_there_and_an_unknown_one_is_an_attribute_error(
    package: str,
) -> None:
    module = __import__(package, fromlist=["__all__"])
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


SHADOW_PROBE = """
import importlib, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for info in pkgutil.iter_modules(package.__path__):
    if not info.name.startswith("_"):  # the sandbox's scripts run on their own
        importlib.import_module(f"{sys.argv[1]}.{info.name}")
wrong = [name for name in package.__all__ if type(getattr(package, name)).__name__ == "module"]
print(" ".join(wrong))
"""


@pytest.mark.parametrize("package", ["coursekit.verify", "coursekit.exec"])
def test_no_public_name_is_shadowed_by_a_submodule_imported_first(package: str) -> None:
    """`import coursekit.exec.compare` binds the submodule on the package: a name of the same
    spelling must still be the function, whoever imported what first."""
    run = subprocess.run(
        [sys.executable, "-c", SHADOW_PROBE, package],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert run.stdout.split() == [], run.stdout
