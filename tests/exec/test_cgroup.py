"""The job cgroup's bookkeeping, for both layouts, on a stand-in folder (no root needed).

The real hierarchies are exercised by tests/exec/test_hostile.py as root; here the same code
reads and writes files laid out as each kernel interface lays them out.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coursekit.exec import _cgroup


def make_job(tmp_path: Path, kind: str) -> tuple[_cgroup.JobCgroup, dict[str, Path]]:
    controllers = [""] if kind == "cgroup2" else ["memory", "pids", "cpuacct"]
    parents = {}
    for ctrl in controllers:
        parents[ctrl] = str(tmp_path / (ctrl or "unified"))
        os.mkdir(parents[ctrl])
    job = _cgroup.Layout(kind, parents).new_job()
    dirs = {ctrl: Path(path) for ctrl, path in job.dirs.items()}
    for path in dirs.values():
        assert path.name.startswith(f"coursekit-job-{os.getpid()}-")
    return job, dirs


def test_cgroup2_limits_cpu_and_oom(tmp_path: Path) -> None:
    job, dirs = make_job(tmp_path, "cgroup2")
    unified = dirs[""]
    (unified / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\n")
    job.limit(256 << 20, 8)
    assert (unified / "memory.max").read_text() == str(256 << 20)
    assert (unified / "memory.swap.max").read_text() == "0"
    assert (unified / "pids.max").read_text() == "8"
    (unified / "cpu.stat").write_text("usage_usec 4000000\nuser_usec 3000000\n")
    assert job.job_cpu() == pytest.approx(2.5)  # counted from the moment the job was limited
    assert job.oom_kills() == 0
    (unified / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert job.oom_kills() == 1
    job.add(12345)
    assert (unified / "cgroup.procs").read_text() == "12345"
    job.kill()
    assert (unified / "cgroup.kill").read_text() == "1"


def test_cgroup1_limits_cpu_and_oom(tmp_path: Path) -> None:
    job, dirs = make_job(tmp_path, "cgroup1")
    (dirs["cpuacct"] / "cpuacct.usage").write_text("500000000\n")
    job.limit(64 << 20, 4)
    assert (dirs["memory"] / "memory.limit_in_bytes").read_text() == str(64 << 20)
    assert (dirs["pids"] / "pids.max").read_text() == "4"
    (dirs["cpuacct"] / "cpuacct.usage").write_text("2000000000\n")
    assert job.job_cpu() == pytest.approx(1.5)
    (dirs["memory"] / "memory.oom_control").write_text(
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"
    )
    assert job.oom_kills() == 2
    job.add(4242)
    assert {(d / "cgroup.procs").read_text() for d in dirs.values()} == {"4242"}


def test_removal_and_the_sweep_of_dead_servers(tmp_path: Path) -> None:
    job, dirs = make_job(tmp_path, "cgroup2")
    job.remove()
    assert not any(path.exists() for path in dirs.values())
    parent = tmp_path / "unified"
    dead = parent / f"{_cgroup.PREFIX}999999999-1"  # no such pid
    alive = parent / f"{_cgroup.PREFIX}{os.getpid()}-7"
    other = parent / "someone-else"
    for path in (dead, alive, other):
        path.mkdir()
    _cgroup.Layout("cgroup2", {"": str(parent)}).sweep()
    assert not dead.exists() and alive.exists() and other.exists()


def test_no_cgroup_without_root() -> None:
    if os.geteuid() == 0:
        layout = _cgroup.detect()
        assert layout is None or layout.kind in ("cgroup1", "cgroup2")
    else:
        assert _cgroup.detect() is None
