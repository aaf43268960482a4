"""`status` and a no-op `apply` answer from hashes: they import no parser, no op, no libcst.

Issue 11: those commands must start within 1.3x of the typer+rich import floor (bench/run.py
measures it); yaml, packaging, the ops and libcst together cost more than the rest of the
run. These tests run the real command in a fresh interpreter and read `sys.modules` as it exits,
so an eager import put back anywhere on those paths fails here, without timing anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MID, vendor_hardcode
from tests.support import wheelcache

NAME = "corex-eager-allreduce"
# What only parsing a patchset or rewriting a file needs (rich: only a terminal needs it).
PARSING = ("libcst", "yaml", "packaging", "patchops.ops", "patchops.patchset_yaml", "rich")


# `python -m patchops ARGS`, then sys.modules as the process exits, after the last import.
DRIVER = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules))))
sys.argv = ["patchops", *sys.argv[1:]]
runpy.run_module("patchops", run_name="__main__", alter_sys=True)
"""


def patchops(site: Path, cache: Path, *args: str):
    """Run `python -m patchops ARGS --site SITE`; return (exit code, stdout, imported modules)."""
    env = dict(os.environ, PATCHOPS_CACHE=str(cache), PYTHONPATH="", PATCHOPS_ROOTS="")
    env.pop("PATCHOPS_PATCHSETS", None)
    done = subprocess.run([sys.executable, "-c", DRIVER, *args, "--site", str(site)],
                          env=env, capture_output=True, text=True)
    modules = done.stderr.rpartition("\nMODULES ")[2]
    assert modules, done.stderr[-2000:]
    return done.returncode, done.stdout, set(modules.split())


def loaded(imported, prefixes):
    return sorted(m for m in imported if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.fixture
def patched_site(tmp_path):
    site = wheelcache.copy_site_packages(MID, tmp_path / "site")
    vendor_hardcode(site)
    code, out, imported = patchops(site, tmp_path / "cache", "apply", NAME, "--yes")
    assert code == 0 and "patched" in out
    assert "libcst" in imported  # the check below can see what a rewrite imports
    return site, tmp_path / "cache"


def test_status_of_a_patched_copy_imports_no_parser_op_or_planner(patched_site):
    code, out, imported = patchops(*patched_site, "status")
    assert code == 0 and f"{NAME}: applied" in out
    assert loaded(imported, PARSING + ("patchops.patching.plan", "patchops.patching.commit",
                                       "patchops.patching.restore")) == []
    assert "patchops.patching.status_check" in imported  # the run did look


def test_noop_apply_imports_no_parser_or_op(patched_site):
    code, out, imported = patchops(*patched_site, "apply", NAME, "--yes")
    assert code == 0 and "nothing to write" in out
    assert loaded(imported, PARSING + ("patchops.patching.restore",)) == []
    assert "patchops.patching.plan" in imported


def test_second_status_of_an_unpatched_copy_answers_from_hashes(tmp_path):
    site = wheelcache.copy_site_packages(MID, tmp_path / "site")
    vendor_hardcode(site)
    first = patchops(site, tmp_path / "cache", "status", NAME)
    assert first[0] == 0 and f"{NAME}: not-applied" in first[1] and "libcst" in first[2]
    code, out, imported = patchops(site, tmp_path / "cache", "status", NAME)
    assert (code, out) == first[:2]
    assert loaded(imported, PARSING) == []
