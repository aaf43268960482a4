"""api/explaining.py: explain's table and the lint verdict beside it come from one read of the input."""

from __future__ import annotations

import os
import subprocess
import sys

READS_OF_INPUT = """
import sys
from pathlib import Path

from patchops.api.explaining import explain

target = str(Path(sys.argv[1]).resolve())
reads = []
sys.addaudithook(lambda event, args: reads.append(args) if event == "open" and args[0] is not None
                 and str(Path(str(args[0])).resolve()) == target else None)
result = explain(Path(sys.argv[1]), vllm_version="0.8.5")
print(len(reads), len(result.errors), len(result.rows))
"""


def test_explain_reads_its_input_once_and_still_lints_it(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text("model: m\nargs:\n  max-model-len: 4096\n  max-num-seqs: abc\n")
    env = {**os.environ, "PATCHOPS_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", READS_OF_INPUT, str(path)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=True)
    reads, errors, rows = map(int, done.stdout.split())
    assert rows > 0 and errors == 1       # max-num-seqs abc: argparse refuses it
    assert reads == 1
