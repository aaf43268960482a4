"""`patchops lint` must stay light: no vLLM, torch or libcst import, even with vLLM importable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed-multistep-long-context.yaml"

PROBE = """
import json, runpy, sys
sys.argv = ["patchops", "lint", "--exit-zero", sys.argv[1]]
try:
    runpy.run_module("patchops", run_name="__main__")
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("vllm", "torch", "libcst"))
print(json.dumps(heavy), file=sys.stderr)
"""


def test_lint_imports_no_vllm_torch_or_libcst(vllm_site, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(vllm_site("0.8.5")), PATCHOPS_CACHE=str(tmp_path),
               PATCHOPS_ROOTS="")
    done = subprocess.run([sys.executable, "-c", PROBE, str(EXAMPLE)], env=env,
                          capture_output=True, text=True)
    assert "linted against vLLM 0.8.5" in done.stdout, done.stdout + done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
