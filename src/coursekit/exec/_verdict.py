"""How a finished job is judged (imported by ``_server.py``; standard library only).

A result counts only when the worker then ended normally (exit status 0) and wrote exactly one
frame of its own format; anything else is reported as what happened.
"""

from __future__ import annotations

import json
import math
import os
import signal
import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coursekit.exec import _worker
else:  # beside it, on sys.path while _server.py imports it
    import _worker

#: What a worker may put in its frame; anything else did not come from the worker.
FRAME_STATUSES = ("ok", "error", "memory", "exited", "no-result", "sandbox")


def signal_name(sig: int) -> str:
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
    meaning = {
        "SIGSEGV": "segmentation fault",
        "SIGBUS": "bus error",
        "SIGABRT": "aborted",
        "SIGFPE": "arithmetic fault",
        "SIGILL": "illegal instruction",
        "SIGKILL": "killed",
    }.get(name)
    return f"{name} ({meaning})" if meaning else name


def cpu_exceeded(cpu_limit: float) -> dict[str, Any]:
    return {"status": "timeout", "message": f"CPU time limit exceeded ({cpu_limit:g} s of CPU)"}


def parse_frame(result: bytes) -> tuple[dict[str, Any] | None, str]:
    """The worker's one frame from what came down the result pipe, or why there is none."""
    if not result:
        return None, ""
    if len(result) < 4:
        return None, "a partial frame"
    (size,) = struct.unpack(">I", result[:4])
    if len(result) < 4 + size:
        return None, "a partial frame"
    if len(result) > 4 + size:
        return None, "more than one frame (the program wrote to the result channel itself)"
    try:  # the program can write to the result pipe itself: it must parse and re-encode
        loaded = json.loads(result[4:])
        json.dumps(loaded, allow_nan=False)
    except (ValueError, RecursionError):
        return None, "not valid JSON"
    if not isinstance(loaded, dict) or loaded.get("status") not in FRAME_STATUSES:
        return None, "not a result frame"
    if not isinstance(loaded.get("message", ""), str) or (
        loaded["status"] == "ok" and "value" not in loaded
    ):
        return None, "not a result frame"
    return loaded, ""


def judge(
    wait_status: int | None, result: bytes, limits: dict[str, Any], cpu_used: float
) -> dict[str, Any]:
    """The verdict on a worker that ended: its frame counts only after a normal exit."""
    frame, problem = parse_frame(result)
    if frame is not None and frame.get("status") == "sandbox":
        return {"status": "crashed", "message": str(frame.get("message"))}
    if problem and problem != "a partial frame":
        return {"status": "crashed", "message": f"the result could not be read ({problem})"}
    assert wait_status is not None
    cpu_limit = float(limits["cpu_s"])
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        # Only the kernel sends these here (our own kills already have a verdict): at the CPU
        # limit, a pid-namespace init gets SIGKILL. rusage is sampled, hence the margin.
        if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu_used >= 0.8 * math.ceil(cpu_limit):
            return cpu_exceeded(cpu_limit)
        return {
            "status": "crashed",
            "message": f"crashed: killed by {signal_name(sig)} (after {cpu_used:.2f} s of CPU)",
        }
    code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else -1
    if code == 0 and frame is not None:
        return frame
    if code == _worker.EXIT_CHANNEL_CLOSED:
        reason = "the program closed the result channel (fd 3)"
        return {"status": "exited", "message": f"{reason}, so no result could be returned"}
    if code == _worker.EXIT_WORKER_FAILED:
        return {"status": "crashed", "message": "the worker failed after the program ran"}
    after = " after writing to the result channel itself" if frame or problem else ""
    return {
        "status": "exited",
        "message": f"the process exited with status {code}{after} before returning a result",
    }
