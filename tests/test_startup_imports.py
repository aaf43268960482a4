"""`status` and a no-op `apply` answer from hashes: they import no parser, no op, no libcst.

Those commands must start within 1.3x of the typer+rich import floor (bench/run.py
measures it); yaml, packaging, the ops and libcst together cost more than the rest of the
run. These tests run the real command in a fresh interpreter and read `sys.modules` as it exits,
so an eager import put back anywhere on those paths fails here, without timing anything.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MID, vendor_hardcode
from tests.support import wheelcache

NAME = "corex-eager-allreduce"
# What only parsing a patchset or rewriting a file needs (rich: only a terminal needs it).
PARSING = ("libcst", "yaml", "packaging", "patchops.patchset.ops", "patchops.patchset.yaml_format", "rich")
# What only lint, explain and launch need: their result dataclasses cost ~5M instructions each
# to define (patchops.api loads each part on first use).
LINT_API = ("patchops.api.linting", "patchops.api.explaining", "patchops.lint")


# `python -m patchops ARGS`, then sys.modules as the process exits, after the last import.
# RACY_SECONDS in the environment stands in for the wait after which a file's stamp is trusted.
DRIVER = """
import atexit, os, runpy, sys
if "RACY_SECONDS" in os.environ:
    import patchops.core.digest_cache
    patchops.core.digest_cache.RACY_SECONDS = float(os.environ["RACY_SECONDS"])
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules))))
sys.argv = ["patchops", *sys.argv[1:]]
runpy.run_module("patchops", run_name="__main__", alter_sys=True)
"""


def patchops(site: Path, cache: Path, *args: str, **env_vars: str):
    """Run `python -m patchops ARGS --site SITE`; return (exit code, stdout, imported modules)."""
    env = dict(os.environ, PATCHOPS_CACHE=str(cache), PYTHONPATH="", PATCHOPS_ROOTS="", **env_vars)
    env.pop("PATCHOPS_PATCHSETS", None)
    done = subprocess.run([sys.executable, "-c", DRIVER, *args, "--site", str(site)],
                          env=env, capture_output=True, text=True)
    modules = done.stderr.rpartition("\nMODULES ")[2]
    assert modules, done.stderr[-2000:]
    return done.returncode, done.stdout, set(modules.split())


def loaded(imported, prefixes):
    """Return the modules of `prefixes` in `imported`; every prefix must name a real module, so
    a rename cannot turn an absence check into one that passes for a module nobody has."""
    missing = [p for p in prefixes if importlib.util.find_spec(p) is None]
    assert not missing, f"no such module (renamed?): {missing}"
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
    assert loaded(imported, PARSING + LINT_API + ("patchops.patching.plan", "patchops.patching.commit",
                                                  "patchops.patching.restore")) == []
    assert "patchops.patching.status_check" in imported  # the run did look


def test_noop_apply_imports_no_parser_or_op(patched_site):
    code, out, imported = patchops(*patched_site, "apply", NAME, "--yes")
    assert code == 0 and "nothing to write" in out
    # Nothing is written, so no journal: the transaction module stays unloaded.
    assert loaded(imported, PARSING + LINT_API + ("patchops.patching.restore", "patchops.store.transaction")) == []
    assert "patchops.patching.plan" in imported


def test_an_unchanged_copy_is_judged_without_hashlib_and_an_edit_in_place_still_shows(patched_site):
    site, cache = patched_site
    old = {"RACY_SECONDS": "-3600"}  # as if apply had written the files an hour ago
    first = patchops(site, cache, "status", **old)
    assert first[0] == 0 and f"{NAME}: applied" in first[1] and "hashlib" in first[2]
    for args, said in ((["status"], f"{NAME}: applied"), (["apply", NAME, "--yes"], "nothing to write")):
        code, out, imported = patchops(site, cache, *args, **old)
        assert code == 0 and said in out and "hashlib" not in imported, args
    target = site / "vllm" / "engine" / "arg_utils.py"
    before = os.stat(target)
    with open(target, "r+b") as handle:  # same inode and size, mtime put back: only ctime moves
        handle.seek(100)
        byte = handle.read(1)
        handle.seek(100)
        handle.write(b"#" if byte != b"#" else b" ")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    code, out, imported = patchops(site, cache, "status", **old)
    assert code != 0 and f"{NAME}: drifted" in out and "hashlib" in imported


def test_files_written_just_now_are_hashed_on_every_run(patched_site):
    for _ in range(2):  # "just now": within the margin of a clock tick that may hide a write
        code, out, imported = patchops(*patched_site, "status", RACY_SECONDS="3600")
        assert code == 0 and f"{NAME}: applied" in out and "hashlib" in imported


def test_second_status_of_an_unpatched_copy_answers_from_hashes(tmp_path):
    site = wheelcache.copy_site_packages(MID, tmp_path / "site")
    vendor_hardcode(site)
    first = patchops(site, tmp_path / "cache", "status", NAME)
    assert first[0] == 0 and f"{NAME}: not-applied" in first[1] and "libcst" in first[2]
    code, out, imported = patchops(site, tmp_path / "cache", "status", NAME)
    assert (code, out) == first[:2]
    assert loaded(imported, PARSING) == []


def built_commands(monkeypatch, argv):
    """Run cli.main() with `argv`; return the names of the commands typer built."""
    import typer.main

    from patchops.cli import app as cli

    built = []
    real = typer.main.get_command_from_info

    def counting(command_info, **kwargs):
        built.append(command_info.name)
        return real(command_info, **kwargs)

    monkeypatch.setattr(typer.main, "get_command_from_info", counting)
    monkeypatch.setattr(sys, "argv", ["patchops", *argv])
    with pytest.raises(SystemExit):
        cli.main()
    return built


def test_main_builds_only_the_command_it_runs(monkeypatch, capsys):
    assert built_commands(monkeypatch, ["rules", "PO001"]) == ["rules"]
    assert "PO001" in capsys.readouterr().out
    everything = built_commands(monkeypatch, ["--help"])
    assert {"status", "apply", "lint", "rules"} <= set(everything) and len(everything) > 10


@pytest.mark.parametrize("args", [["status", "--help"], ["status", "--bogus"], ["apply"],
                                  ["fleet", "--help"], ["stauts"]])
def test_a_command_built_alone_parses_helps_and_fails_as_in_the_whole_app(args, tmp_path):
    env = dict(os.environ, PATCHOPS_CACHE=str(tmp_path), PYTHONPATH="", PATCHOPS_ROOTS="", COLUMNS="80")
    runs = [subprocess.run([sys.executable, "-c", f"from patchops.cli import app as cli; {entry}", *args], env=env,
                           capture_output=True, text=True)
            for entry in ("cli.main()", "cli.app()")]
    alone, whole = [(r.returncode, r.stdout, r.stderr) for r in runs]
    assert alone == whole and alone[0] in (0, 2) and (alone[1] or alone[2])


def test_every_public_name_of_the_api_modules_is_reachable_from_patchops_api():
    """patchops.api resolves names from its table: a new function left out of it would be
    unreachable as `api.name`."""
    import ast
    import importlib.util

    from patchops import api

    for module, names in api._HOMES.items():
        tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))
        public = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        public |= {target.id for node in tree.body if isinstance(node, ast.Assign)
                   for target in node.targets if isinstance(target, ast.Name)}
        public = {name for name in public if not name.startswith("_")}
        assert public == set(names), module
        for name in names:
            assert getattr(api, name) is getattr(importlib.import_module(module), name)
    with pytest.raises(AttributeError):
        api.no_such_function  # noqa: B018
