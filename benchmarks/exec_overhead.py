"""Per-problem overhead of the fork server against a fresh ``python -I problem.py``.

Over 50 small numpy problems, measured side by side in one run (the two interleaved, problem by
problem): the wall time of a fresh interpreter per problem, and the wall time of one job through
a pre-warmed fork server (serial: one server, one job at a time), each minus the problem's own
compute time measured in-process. Prints the medians and their ratio; the target is <= 1/20.
Then the throughput of the whole batch across all cores. The environment is left as it is
(OPENBLAS_CORETYPE and friends included).

    python benchmarks/exec_overhead.py [--problems 50] [--sandbox MODE] [--budget BUDGET]

Run it once per mode to quote each (``--sandbox namespace|setuid|basic``; as root, ``auto`` is
``namespace`` with a cgroup per job; ``--budget single-process`` drops the cgroup).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from coursekit.exec import Job, Limits, Runner
from coursekit.exec.runner import BUDGETS, SANDBOX_MODES

TEMPLATE = """\
import numpy as np


def solve():
    rng = np.random.default_rng({seed})
    a = rng.standard_normal(({n}, {n}))
    scores = a @ a.T / np.sqrt({n})
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return {{"rows": weights.sum(axis=1).round(12).tolist(), "det": float(np.linalg.det(a))}}


if __name__ == "__main__":
    print(solve())
"""


def problems(count: int) -> list[str]:
    return [TEMPLATE.format(seed=i, n=4 + i % 12) for i in range(count)]


def compute_time(source: str) -> float:
    """The problem's own work, in this (warm) process: the best of a few runs."""
    namespace: dict[str, object] = {"__name__": "bench"}
    exec(compile(source, "problem.py", "exec"), namespace)
    solve = namespace["solve"]
    assert callable(solve)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        solve()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=50)
    parser.add_argument("--sandbox", default="auto", choices=SANDBOX_MODES)
    parser.add_argument("--budget", default="auto", choices=BUDGETS)
    args = parser.parse_args()
    sources = problems(args.problems)
    import numpy  # noqa: F401  (warm this process for compute_time)

    limits = Limits()
    fresh: list[float] = []
    served: list[float] = []
    work: list[float] = []
    pool = {"sandbox": args.sandbox, "budget": args.budget}
    with tempfile.TemporaryDirectory() as tmp, Runner(parallel=1, **pool) as runner:
        start = time.perf_counter()
        mode = f"{runner.sandbox} ({runner.budget})"  # starts the server
        startup = time.perf_counter() - start
        for index, source in enumerate(sources):
            path = Path(tmp) / f"problem_{index:02d}.py"
            path.write_text(source)
            work.append(compute_time(source))

            start = time.perf_counter()
            subprocess.run([sys.executable, "-I", str(path)], check=True, capture_output=True)
            fresh.append(time.perf_counter() - start)

            start = time.perf_counter()
            [outcome] = runner.run([Job(str(index), source, "problem.py")], limits)
            served.append(time.perf_counter() - start)
            assert outcome.ok, outcome.message

    compute = statistics.median(work)
    fresh_med, served_med = statistics.median(fresh), statistics.median(served)
    fresh_over, served_over = fresh_med - compute, served_med - compute
    ratio = served_over / fresh_over
    ms = 1000.0
    load = os.getloadavg()[0]
    print(
        f"{len(sources)} problems, python {sys.version.split()[0]}, sandbox {mode}, "
        f"load average {load:.2f}, "
        f"{os.cpu_count()} cpus, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}"
    )
    print(f"  problem's own compute (median)     {compute * ms:8.2f} ms")
    print(
        f"  fresh `python -I problem.py`       {fresh_med * ms:8.2f} ms  "
        f"(overhead {fresh_over * ms:.2f} ms; min {min(fresh) * ms:.1f}, "
        f"p90 {statistics.quantiles(fresh, n=10)[-1] * ms:.1f})"
    )
    print(
        f"  fork server, one job at a time     {served_med * ms:8.2f} ms  "
        f"(overhead {served_over * ms:.2f} ms; min {min(served) * ms:.2f}, "
        f"p90 {statistics.quantiles(served, n=10)[-1] * ms:.2f})"
    )
    print(f"  server start-up (once per run)     {startup * ms:8.0f} ms")
    print(
        f"  overhead ratio  fork server / fresh = {ratio:.4f}  (1/{1 / ratio:.1f}; "
        f"target <= 1/20: {'met' if ratio <= 1 / 20 else 'NOT met'})"
    )

    jobs = [Job(str(i), source, "problem.py") for i, source in enumerate(sources)]
    with Runner(**pool) as runner:
        runner.start()
        start = time.perf_counter()
        outcomes = runner.run(jobs, limits)
        batch = time.perf_counter() - start
        assert all(o.ok for o in outcomes)
    print(
        f"  whole batch on {runner.parallel} servers: {batch * ms:.0f} ms "
        f"({batch / len(jobs) * ms:.2f} ms per problem)"
    )


if __name__ == "__main__":
    main()
