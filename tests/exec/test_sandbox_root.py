"""The namespace sandbox builds its root in a tmpfs of its own, and nowhere else.

A spare worker builds its root while its server may be dying: the parent then removes the
server's folder, the root's mount point among it. Whatever the worker does after that must not
land on the host's disk (a leftover skeleton of empty mount points was seen under load).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from coursekit.exec import _sandbox


def _can_unshare_mounts() -> bool:
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _sandbox._libc.unshare(_sandbox.CLONE_NEWNS) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


needs_namespaces = pytest.mark.skipif(
    os.geteuid() != 0 or not _can_unshare_mounts(), reason="needs mount namespaces (root)"
)


# where the worker is when the parent removes the folder: its root's tmpfs just mounted, or
# the first folder of the host's bound into it (more folders are made after each)
PAUSES = {"at the root's tmpfs": "", "at the first bind mount": "/fs/"}


@needs_namespaces
@pytest.mark.parametrize("pause", list(PAUSES))
def test_a_root_whose_folder_is_removed_midway_leaves_nothing_on_the_host(
    tmp_path: Path, pause: str
) -> None:
    workdirs = tmp_path / "coursekit-exec-x"
    base = workdirs / "root-x"
    base.mkdir(parents=True)
    mounted_r, mounted_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: build the root, pausing once its tmpfs is mounted
        try:
            real_mount = _sandbox._mount
            paused: list[str] = []

            def mount(source: Any, target: str, fstype: Any, flags: int, data: str = "") -> None:
                real_mount(source, target, fstype, flags, data)
                if paused:
                    return
                where = "" if target == str(base) else os.path.relpath(target, base)
                if (where + "/").startswith(PAUSES[pause].lstrip("/")):
                    paused.append(target)
                    os.write(mounted_w, b"m")
                    os.read(go_r, 1)

            _sandbox._mount = mount
            _sandbox.enter_namespaces(str(base), _sandbox.readable_roots())
        except BaseException:
            os._exit(3)
        os._exit(0)
    os.close(mounted_w)
    os.close(go_r)
    assert os.read(mounted_r, 1) == b"m", "the worker did not reach its root's tmpfs"
    shutil.rmtree(workdirs)  # the parent cleaning up after a killed server
    assert not workdirs.exists()
    os.write(go_w, b"g")
    os.waitpid(pid, 0)
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert left == [], f"the worker built its root on the host's disk: {left[:8]}"
