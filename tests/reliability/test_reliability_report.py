"""The reliability report itself runs, and prints zero losses, on a handful of each kind."""

from __future__ import annotations

import subprocess
import sys

from devtools import reliability_harness as harness
from reliability_fixtures import source  # noqa: F401 (fixtures)


def test_smoke_report_prints_every_figure_and_no_loss(source):
    done = subprocess.run([sys.executable, str(harness.REPO / "bench" / "reliability.py"), "--smoke"],
                          capture_output=True, text=True, timeout=600, env=harness._env(None, None))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:4]]
            for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line}
    for label in ("kill points (SIGKILL at a write step)", "faults injected (ENOSPC, EIO)",
                  "races (one held at a named point)", "hostile filesystem cases", "generated inputs"):
        tried, held = rows[label]
        assert int(tried) > 0 and tried == held, label
    for label in ("files lost", "half-applied transactions", "writes outside a copy", "internal errors"):
        assert rows[label][0] == "0", label
