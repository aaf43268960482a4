"""Test-only fault injection at the named steps where patchops writes: PATCHOPS_FAULT.

`PATCHOPS_FAULT=STEP:N:ACTION` acts the N-th time this process reaches STEP (counted per step
name). Actions: `kill` (SIGKILL itself, as a power cut or OOM kill would), `enospc` / `eio`
(fail as that syscall would), `stop` (SIGSTOP itself, so a test can run another patchops at
exactly this point, then SIGCONT). `PATCHOPS_FAULT_TRACE=FILE` appends every step reached and the file
it is about to touch, one per line, so a test can list the points to try. Nothing here acts unless a test sets them.

Write steps (just before the syscall): mkdir, write, fsync, rename, dirsync, append, unlink.
Named points for races: plan-copy (before planning each copy), commit (before commit_apply
takes its locks).
"""

from __future__ import annotations

import errno
import os
import signal
from typing import Dict, Optional, Tuple

ENV = "PATCHOPS_FAULT"
TRACE_ENV = "PATCHOPS_FAULT_TRACE"
ACTIONS = ("kill", "enospc", "eio", "stop")
_ERRNO = {"enospc": errno.ENOSPC, "eio": errno.EIO}

_counts: Dict[str, int] = {}


def _spec() -> Optional[Tuple[str, int, str]]:
    raw = os.environ.get(ENV)
    if not raw:
        return None
    step, count, action = raw.split(":")
    if action not in ACTIONS:
        raise ValueError(f"{ENV}={raw!r}: action must be one of {', '.join(ACTIONS)}")
    return step, int(count), action


def point(step: str, path: object = None) -> None:
    """Mark reaching `step` (about to touch `path`); act if PATCHOPS_FAULT names this visit."""
    trace = os.environ.get(TRACE_ENV)
    spec = _spec()
    if trace is None and spec is None:
        return
    _counts[step] = _counts.get(step, 0) + 1
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(f"{step} {'' if path is None else os.fspath(path)}\n")
    if spec is None or spec[:2] != (step, _counts[step]):
        return
    action = spec[2]
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    else:
        code = _ERRNO[action]
        raise OSError(code, os.strerror(code), None if path is None else os.fspath(path))


def reset() -> None:
    """Forget the steps counted so far (in-process tests run several commands)."""
    _counts.clear()
