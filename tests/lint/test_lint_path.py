"""`patchops lint` and `explain` must stay light: no vLLM, torch or libcst import, even with
vLLM importable, and on a cached run only what judging a config needs (lint's speed
goal, guarded here by what is imported rather than by a timing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed-multistep-long-context.yaml"

PROBE = """
import json, runpy, sys
sys.argv = ["patchops"] + sys.argv[1:]
try:
    runpy.run_module("patchops", run_name="__main__")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

NEVER = ("vllm", "torch", "libcst")
# What a cached run has no use for, each a cost if it came back on the way: the patch engine
# (ops, rewrites, plans), the fact extractor, packaging's specifier parser, TOML without a
# settings file, rich on a pipe, Ray.
NOT_ON_A_CACHED_RUN = (
    "patchops.patchset.ops", "patchops.patchset.rewrite", "patchops.patching.plan", "patchops.patching.commit",
    "patchops.patching.file_rewrites", "patchops.patching.status_cache", "patchops.patching.verify", "patchops.patching.capture",
    "patchops.run", "patchops.fleet", "patchops.run.launch", "patchops.lint.extract",
    "packaging.specifiers", "tomllib", "rich", "ray",
)
# lint reads no patch state at all; explain reads which patchsets the copy's store records.
NOT_IN_LINT = ("patchops.patching", "patchops.store.site_store", "patchops.patchset.model")


def modules_after(args, env, cwd) -> list:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, cwd=cwd,
                          capture_output=True, text=True)
    assert "vLLM 0.8.5" in done.stdout, done.stdout + done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


def loaded(modules, names):
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.fixture
def env(vllm_site, tmp_path):
    return dict(os.environ, PYTHONPATH=str(vllm_site("0.8.5")), PATCHOPS_CACHE=str(tmp_path / "cache"),
                PATCHOPS_ROOTS="")


def test_lint_imports_no_vllm_torch_or_libcst(env, tmp_path):
    modules = modules_after(["lint", "--exit-zero", str(EXAMPLE)], env, tmp_path)
    assert loaded(modules, NEVER) == []


@pytest.mark.parametrize("command, unused", [(["lint", "--exit-zero"], NOT_IN_LINT),
                                             (["explain", "--no-detect-hardware"], ())])
def test_a_cached_run_imports_only_what_judging_needs(env, tmp_path, command, unused):
    args = [*command, str(EXAMPLE)]
    first = modules_after(args, env, tmp_path)       # extracts the facts of the copy
    assert "patchops.lint.extract" in first    # (so the probe sees a real difference)
    cached = modules_after(args, env, tmp_path)
    assert loaded(cached, NEVER + NOT_ON_A_CACHED_RUN + unused) == []
    assert "patchops.lint.reading" in cached and "yaml" in cached  # it did judge the config
