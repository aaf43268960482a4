"""One test per reliability defect found in review not already covered by the matrix, race
and hostile tests (the apply/rollback race: test_races.py; links: test_hostile_fs.py).
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import subprocess
import sys

import pytest

from devtools import reliability_harness as harness
from reliability_fixtures import expected, source  # noqa: F401 (fixtures)
from patchops import patching
from patchops.core.cache import cache_root
from patchops.host.locate import locate_site
from patchops.patchset.model import load_patchset


def cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "patchops", *map(str, args)], capture_output=True,
                          text=True, env={**harness._env(None, None), **(env or {})}, cwd=cwd, timeout=120)


def test_a_command_run_here_keeps_the_suites_cache(tmp_path):
    # Not ~/.cache/patchops: the fast loop's PATCHOPS_CACHE holds what its commands write.
    spec = tmp_path / "serve.yaml"
    spec.write_text('vllm: {version: "0.11.0"}\n')
    assert cli("lint", spec).returncode == 0
    assert any(str(spec) in path.read_text() for path in (cache_root() / "lint-results").glob("*.json"))


def deep_patchset(folder, depth=1000):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "deep.yaml"
    path.write_text('name: deep\nsummary: x\nvllm: ">=0.6"\nops:\n  - op: insert-code\n'
                    "    file: logger.py\n    marker: m\n    before: init_logger\n"
                    "    code: " + "[" * depth + "]" * depth + "\n")
    return path


# 4: a patchset nested ~1,000 levels deep
@pytest.mark.parametrize("command", [("patchsets",), ("status",)])
def test_deep_patchset_yaml_is_a_clear_error_naming_the_file(command, source, tmp_path):
    world = harness.build_world(tmp_path, source)
    path = deep_patchset(world.patchsets)
    done = cli(*command, *(world.site_args() if command == ("status",) else
                           ["--patchsets", world.patchsets]))
    assert "internal error" not in done.stderr
    if command == ("patchsets",):
        assert done.returncode == 2, done.stderr
        assert f"{path}:9:" in done.stderr and "nested more than 100 levels deep" in done.stderr
    else:  # status skips the broken file with a note and reports the rest: one bad file does not hide the others
        assert done.returncode in (0, 3), done.stderr
        assert f"note: skipped: {path}:9:" in done.stdout
        assert "nested more than 100 levels deep" in done.stdout


# 5: a lone surrogate in a serve spec
@pytest.mark.parametrize("fmt", ["text", "github"])  # the two that crashed
def test_lone_surrogate_in_a_spec_prints_instead_of_crashing(fmt, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text('vllm: {version: "0.11.0"}\nargs: {"max-model-len\\uD800": 4096}\n')
    done = cli("lint", spec, "--format", fmt)
    assert done.returncode == 1, done.stderr  # an unknown flag: a finding, not exit 70
    assert "internal error" not in done.stderr
    assert "\\ud800" in done.stdout  # printed, escaped


def test_lone_surrogate_as_the_version_prints_escaped(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text('vllm: {version: "\\uD800"}\n')  # the case, exactly
    done = cli("lint", spec)
    assert done.returncode == 0, done.stderr  # read as the newest release, with a warning
    assert f"{spec}:1:1: warning: vLLM '\\ud800' is not a version" in done.stdout  # PO010, on top
    assert "internal error" not in done.stderr


# 6: status on a read-only install
def test_status_opens_nothing_for_writing(source, tmp_path, monkeypatch):
    world = harness.build_world(tmp_path, source)
    assert harness.run_here(world, harness.APPLY).returncode == 0
    copies = [locate_site(site) for site in world.sites]
    patchsets = [load_patchset(world.patchsets / f"{n}.yaml") for n in ("mark-a", "mark-b")]
    real_open, real_mkdir = os.open, os.mkdir
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND

    def read_only_open(path, flags, *args, **kwargs):
        if flags & writes:
            raise OSError(errno.EROFS, "Read-only file system", path)
        return real_open(path, flags, *args, **kwargs)

    def read_only_mkdir(path, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", path)

    locks = []
    monkeypatch.setattr(os, "open", read_only_open)
    monkeypatch.setattr(os, "mkdir", read_only_mkdir)
    monkeypatch.setattr(fcntl, "flock", lambda fd, op: locks.append(op))
    rows = patching.status(copies, patchsets)
    assert [r.state for r in rows] == ["applied"] * 4 and rows.notes == ()
    assert locks == []  # no lock at all: status beside a running apply does not wait or fail


def test_status_on_a_read_only_store_needing_repair_says_what_to_do(source, tmp_path, monkeypatch):
    world = harness.build_world(tmp_path, source)
    killed = harness.run(world, harness.APPLY, fault="rename:12:kill")
    assert killed.returncode == -9
    real_open = os.open

    def read_only_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only_open)
    copies = [locate_site(site) for site in world.sites]
    rows = patching.status(copies, [load_patchset(world.patchsets / "mark-a.yaml")])
    assert rows.notes and all("needs repair, which needs write access" in n for n in rows.notes)
    assert "Read-only file system" in rows.notes[0]


# 7: status after apply --patchsets DIR
def test_status_knows_patchsets_applied_from_a_folder_even_once_it_is_gone(source, tmp_path):
    world = harness.build_world(tmp_path, source)
    sites = [a for site in world.sites for a in ("--site", site)]
    assert cli("apply", "mark-a", "--yes", *sites, "--patchsets", world.patchsets).returncode == 0
    shutil.rmtree(world.patchsets)
    done = cli("status", *sites)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("mark-a: applied") == 2
    rolled = cli("rollback", "mark-a", *sites)
    assert rolled.returncode == 0, rolled.stderr
    assert harness.files_of(world) == {str(p.relative_to(world.root)): (source / "vllm" / p.name).read_bytes()
                                       for p in world.targets()}


# 8: a failure after the commit point
def test_failure_after_the_commit_point_is_success_with_a_warning(source, tmp_path, expected):
    clean = expected("apply")
    n = clean.visit("rename", "state.json")  # state.json is written after the commit only
    done, verdict = harness.interrupt(harness.SCENARIO["apply"], tmp_path / "w", source, clean,
                                      "rename", n, "enospc")
    assert verdict.problems == []
    assert done.returncode == 0, done.stderr
    assert "the apply is complete (every file was written), but recording it in" in done.stdout
    assert "No space left on device" in done.stdout


# 9: I/O errors name the target file and exit 5
@pytest.mark.parametrize("step", ["write", "fsync", "rename"])
def test_io_error_names_the_target_not_the_temp_file(step, source, tmp_path, expected):
    clean = expected("apply")
    n = clean.visit(step, "vllm/logger.py")
    world = harness.prepare(harness.SCENARIO["apply"], tmp_path / "w", source, clean.template)
    done = harness.run(world, harness.APPLY, fault=f"{step}:{n}:eio")
    assert done.returncode == 5
    target = world.sites[0] / "vllm" / "logger.py"
    assert done.stderr.startswith(f"error: cannot write {target}: Input/output error")
    assert harness.TMP_SUFFIX not in done.stderr
    assert harness.files_of(world) == clean.before


# 10 and 11: stale temp files are cleaned, and every repair is reported
def test_next_command_cleans_temp_files_and_says_what_it_repaired(source, tmp_path, expected):
    clean = expected("apply")
    world = harness.prepare(harness.SCENARIO["apply"], tmp_path / "w", source, clean.template)
    n = clean.visit("rename", "state.json")
    assert harness.run(world, harness.APPLY, fault=f"rename:{n}:kill").returncode == -9
    left = list((world.sites[0] / ".patchops").glob(f"*{harness.TMP_SUFFIX}"))
    assert left
    done = cli("status", "mark-a", "mark-b", *world.site_args())
    assert done.returncode == 0, done.stderr
    assert f"note: removed 1 temp file(s) an interrupted patchops left in {world.sites[0]}/.patchops" in done.stdout
    assert "rebuilt it from" in done.stdout
    assert not list(world.root.rglob(f"*{harness.TMP_SUFFIX}"))


def test_status_reports_a_rolled_back_transaction(source, tmp_path, expected):
    clean = expected("apply")
    world = harness.prepare(harness.SCENARIO["apply"], tmp_path / "w", source, clean.template)
    n = clean.visit("rename", "vllm/sampling_params.py", nth=2)  # the second copy's swap
    assert harness.run(world, harness.APPLY, fault=f"rename:{n}:kill").returncode == -9
    done = cli("status", "mark-a", "mark-b", "--json", *world.site_args())
    assert done.returncode == 0, done.stderr
    assert "note: recovered an interrupted apply in" in done.stderr  # JSON stays on stdout
    assert "restored its files to their previous bytes" in done.stderr
    assert harness.files_of(world) == clean.before
