"""Kill apply and rollback (a real SIGKILL) and inject ENOSPC/EIO at a sample of their write steps.

After each interruption the next command must leave every file of both copies original or fully
patched, backups intact, no temp file, nothing outside the copies touched; running the command
again must finish it. `bench/reliability.py` runs every point; CI runs this sample (the first
and last visit of each step, and every 16th).
"""

from __future__ import annotations

import pytest

from devtools import reliability_harness as harness
from reliability_fixtures import expected, source  # noqa: F401 (fixtures)

EVERY = 16


@pytest.mark.parametrize("scenario", ["apply", "rollback", "rollback-all"])
def test_sigkill_at_each_sampled_write_step_loses_nothing(scenario, expected, source, tmp_path):
    clean = expected(scenario)
    tried = harness.points(clean, every=EVERY)
    assert {step for step, _ in tried} >= {"write", "fsync", "rename", "dirsync", "append"}
    problems = []
    for step, n in tried:
        _, verdict = harness.interrupt(harness.SCENARIO[scenario], tmp_path / f"{step}-{n}",
                                       source, clean, step, n, "kill")
        problems += [f"{step}:{n}: {p}" for p in verdict.problems]
    assert problems == []


@pytest.mark.parametrize("scenario,action,steps", [
    ("apply", "enospc", ("write", "append", "mkdir")),
    ("apply", "eio", harness.WRITE_STEPS),
    ("rollback", "eio", harness.WRITE_STEPS),
    ("rollback", "enospc", ("write", "append")),
])
def test_injected_io_error_at_each_sampled_write_is_undone_or_completed(scenario, action, steps,
                                                                         expected, source, tmp_path):
    clean = expected(scenario)
    problems = []
    for step, n in harness.points(clean, steps=steps, every=EVERY):
        _, verdict = harness.interrupt(harness.SCENARIO[scenario], tmp_path / f"{step}-{n}",
                                       source, clean, step, n, action)
        problems += [f"{step}:{n}: {p}" for p in verdict.problems]
    assert problems == []
