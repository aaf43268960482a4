"""`patchops diff` and `patchops export` on real copies: the patches `git apply` and `patch -p1` take."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MID, NEWEST, vendor_hardcode
from patchops import patching
from patchops.patching import diff as diffs
from tests.support import wheelcache
from patchops.cli.app import OK, USAGE_OR_INPUT_ERROR, app
from patchops.core.errors import PatchopsError
from patchops.host.locate import locate_site
from patchops.patchset.model import get_patchset

pytestmark = pytest.mark.vllm

RUNNER = "vllm/v1/worker/gpu_model_runner.py"
V0_RUNNER = "vllm/worker/model_runner.py"
ARG = "vllm/engine/arg_utils.py"
ENV = {"PATCHOPS_ROOTS": "", "PYTHONPATH": ""}


def copy(tmp_path: Path, version: str, name: str) -> Path:
    return wheelcache.copy_site_packages(version, tmp_path / name, with_flash_attn=False)


def apply(site: Path, name: str) -> None:
    patching.commit_apply(patching.plan_apply([locate_site(site)], [get_patchset(name)]))


def git_apply(patch: str, site: Path, tmp_path: Path, *, check: bool) -> subprocess.CompletedProcess:
    path = tmp_path / "change.patch"
    path.write_text(patch)
    cmd = ["git", "apply", "-p1"] + (["--check"] if check else []) + [str(path)]
    return subprocess.run(cmd, cwd=site, capture_output=True, text=True)


def patch_p1(patch: str, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["patch", "-p1", "--dry-run", "--batch"], cwd=site, input=patch,
                          capture_output=True, text=True)


def test_diff_of_patched_files_applies_to_a_pristine_copy(tmp_path):
    site = copy(tmp_path, MID, "patched")
    apply(site, "decode-step-timing")  # both the V0 and the V1 runner in 0.8.5
    [v1, v0] = diffs.diff([locate_site(site)])
    assert (v1.path, v0.path) == (RUNNER, V0_RUNNER) and v0.patchsets == ("decode-step-timing",)
    assert v1.text.startswith(f"diff --git a/{RUNNER} b/{RUNNER}\n--- a/{RUNNER}\n+++ b/{RUNNER}\n")
    patch = v0.text + v1.text
    pristine = copy(tmp_path, MID, "pristine")
    done = git_apply(patch, pristine, tmp_path, check=True)
    assert done.returncode == 0, done.stderr
    assert patch_p1(patch, pristine).returncode == 0
    assert git_apply(patch, pristine, tmp_path, check=False).returncode == 0
    for rel in (RUNNER, V0_RUNNER):
        assert (pristine / rel).read_bytes() == (site / rel).read_bytes()
    # A patch that does not fit is refused by git, so the check above could fail.
    assert git_apply(patch, pristine, tmp_path, check=True).returncode != 0


def test_diff_selects_by_patchset_or_file_and_shows_hand_edits(tmp_path):
    site = copy(tmp_path, NEWEST, "site")
    vendor_hardcode(site)
    apply(site, "corex-eager-allreduce")
    apply(site, "decode-step-timing")
    copies = [locate_site(site)]
    assert [d.path for d in diffs.diff(copies)] == [ARG, RUNNER]
    assert [d.path for d in diffs.diff(copies, "corex-eager-allreduce")] == [ARG]
    for spelling in (str(site / RUNNER), RUNNER, RUNNER[len("vllm/"):]):
        assert [d.path for d in diffs.diff(copies, spelling)] == [RUNNER], spelling
    [arg] = diffs.diff(copies, ARG)
    assert "-            enforce_eager=True,\n+            enforce_eager=self.enforce_eager,\n" in arg.text
    assert not arg.drifted

    path = site / ARG
    path.write_text(path.read_text().replace("enforce_eager=self.enforce_eager,", "enforce_eager=False,"))
    [arg] = diffs.diff(copies, ARG)
    assert arg.drifted and "+            enforce_eager=False,\n" in arg.text

    with pytest.raises(PatchopsError, match="no stored original of this file"):
        diffs.diff(copies, "vllm/envs.py")
    with pytest.raises(PatchopsError, match='"no-such" is not applied'):
        diffs.diff(copies, "no-such")


def test_export_is_the_patchsets_effect_on_pristine_files(tmp_path):
    timing = get_patchset("decode-step-timing")
    fresh = copy(tmp_path, NEWEST, "fresh")
    patch = diffs.export([locate_site(fresh)], timing)
    assert patch.startswith(f"diff --git a/{RUNNER} b/{RUNNER}\n")
    assert not (fresh / ".patchops").exists()  # computed in memory

    patched = copy(tmp_path, NEWEST, "patched")
    apply(patched, "decode-step-timing")
    assert diffs.export([locate_site(patched)], timing) == patch  # from the stored original

    target = copy(tmp_path, NEWEST, "target")
    assert git_apply(patch, target, tmp_path, check=True).returncode == 0
    assert git_apply(patch, target, tmp_path, check=False).returncode == 0
    assert (target / RUNNER).read_bytes() == (patched / RUNNER).read_bytes()

    both = [locate_site(fresh), locate_site(copy(tmp_path, MID, "older"))]
    with pytest.raises(PatchopsError, match="changes these copies differently"):
        diffs.export(both, timing)
    with pytest.raises(PatchopsError, match="nothing to export"):
        diffs.export([locate_site(fresh)], get_patchset("corex-eager-allreduce"))


def test_cli_diff_and_export_output_is_a_patch(tmp_path):
    site = copy(tmp_path, NEWEST, "site")
    vendor_hardcode(site)
    pristine_vendor = copy(tmp_path, NEWEST, "vendor")
    vendor_hardcode(pristine_vendor)
    run = CliRunner()
    exported = run.invoke(app, ["export", "corex-eager-allreduce", "--site", str(site),
                                "-o", str(tmp_path / "corex.patch")], env=ENV)
    assert exported.exit_code == OK, exported.output
    patch = (tmp_path / "corex.patch").read_text()
    assert git_apply(patch, pristine_vendor, tmp_path, check=True).returncode == 0

    apply(site, "corex-eager-allreduce")
    shown = run.invoke(app, ["diff", "--site", str(site)], env=ENV)
    assert shown.exit_code == OK
    assert shown.stdout == patch  # the same patch, byte for byte, ready for a pipe
    missing = run.invoke(app, ["diff", "vllm/envs.py", "--site", str(site)], env=ENV)
    assert missing.exit_code == USAGE_OR_INPUT_ERROR and "patchops verify" in missing.output
