"""`lint --engine` that cannot ask vLLM says so and exits 2, not 1 with "disagrees".

The copy is a real vLLM 0.8.5 tree without torch beside it (this box has none), so its CLI
cannot be imported: there is no verdict to agree or disagree with.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from typer.testing import CliRunner

from patchops.cli.app import USAGE_OR_INPUT_ERROR, app

pytestmark = pytest.mark.vllm


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch imports here, so vLLM runs")
def test_an_engine_that_cannot_run_exits_2_and_says_so(vllm_site):
    site = vllm_site("0.8.5")
    done = CliRunner().invoke(app, ["lint", "--engine", "--no-detect-hardware", "--python", sys.executable,
                                    "--cmd", "vllm serve /models/m --max-model-len 4096"],
                              env={"PATCHOPS_ROOTS": "", "PYTHONPATH": str(site)})
    assert done.exit_code == USAGE_OR_INPUT_ERROR, done.output
    assert f"<command>: engine: could not run (vLLM 0.8.5 via {sys.executable}" in done.output
    assert "disagrees" not in done.output
