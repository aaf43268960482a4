"""The authoring aid of `apply --dry-run`: a patchset that does not fit says where it comes closest."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MID, NEWEST
from patchops import patching
from patchops.cli.app import DRIFTED, app
from patchops.host.locate import locate_site
from patchops.patching.mismatch import mismatches
from patchops.patchset.model import get_patchset, load_patchset
from tests.support import wheelcache

pytestmark = pytest.mark.vllm

ARG = "vllm/engine/arg_utils.py"
ENV = {"PATCHOPS_ROOTS": "", "PYTHONPATH": ""}


def patchset(tmp_path: Path, scope: str = "EngineArgs", keyword: str = "enforce_eager",
             pristine: str = "True") -> Path:
    path = tmp_path / "ps" / "authoring.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"""\
name: authoring
summary: a patchset being written
vllm: ">=0.6"
ops:
  - op: set-keyword
    file: engine/arg_utils.py
    scope: {scope}
    callee: ModelConfig
    keyword: {keyword}
    value: "False"
    pristine: [{pristine}]
    sites: 1
""")
    return path


def line_of(site: Path, text: str) -> int:
    lines = (site / ARG).read_text().splitlines()
    [number] = [i for i, line in enumerate(lines, 1) if text in line]
    return number


def dry_run(site: Path, path: Path):
    return CliRunner().invoke(app, ["apply", "authoring", "--dry-run", "--site", str(site),
                                    "--patchsets", str(path.parent)], env=ENV)


@pytest.mark.parametrize("version", [MID, NEWEST])
def test_wrong_pristine_names_the_site_and_not_reinstall(tmp_path, version):
    site = wheelcache.site_packages(version)
    path = patchset(tmp_path)
    done = dry_run(site, path)
    assert done.exit_code == DRIFTED
    line = line_of(site, "enforce_eager=self.enforce_eager,")
    assert (f"{site / ARG}:{line}: the patchset does not match this file: op 1 (set-keyword "
            f"ModelConfig(enforce_eager=...)) found enforce_eager=self.enforce_eager") in done.output
    assert f"line {line} reads: enforce_eager=self.enforce_eager," in done.output
    assert "the file is as pip installed it" in done.output
    assert "reinstall" not in done.output.lower()


@pytest.mark.parametrize("scope, keyword, within", [
    ("EngineArgz", "enforce_eager", "EngineArgs.create_model_config"),   # a misspelt scope
    ("EngineArgs", "enforce_eagr", "EngineArgs.create_model_config"),    # a misspelt keyword
])
def test_zero_sites_points_at_the_nearest_candidate(tmp_path, scope, keyword, within):
    site = wheelcache.site_packages(NEWEST)
    plan = patching.plan_apply([locate_site(site)], [load_patchset(patchset(tmp_path, scope, keyword))],
                               check=False)
    [found] = mismatches(plan)
    assert found.reason == f"matched 0 sites inside {scope}, expected 1"
    assert (found.line, found.within) == (line_of(site, "enforce_eager=self.enforce_eager,"), within)
    assert found.found == "enforce_eager=self.enforce_eager,"


def test_a_file_that_differs_from_record_says_so(tmp_path):
    site = wheelcache.copy_site_packages(NEWEST, tmp_path / "site", with_flash_attn=False)
    wheelcache.hardcode_like_corex(site)
    path = patchset(tmp_path, pristine="None")
    done = dry_run(site, path)
    assert done.exit_code == DRIFTED
    assert "found enforce_eager=True" in done.output
    assert "the file differs from what pip installed (`patchops verify`" in done.output


def test_other_problems_keep_their_own_advice(tmp_path):
    site = wheelcache.copy_site_packages(NEWEST, tmp_path / "site", with_flash_attn=False)
    copy = locate_site(site)
    timing = get_patchset("decode-step-timing")
    patching.commit_apply(patching.plan_apply([copy], [timing]))
    runner = site / "vllm/v1/worker/gpu_model_runner.py"
    runner.write_text(runner.read_text() + "\n# by hand\n")
    plan = patching.plan_apply([copy], [timing], check=False)
    assert mismatches(plan) == []  # patchops wrote this file: not an authoring mismatch
    done = CliRunner().invoke(app, ["apply", "decode-step-timing", "--dry-run", "--site", str(site)], env=ENV)
    assert done.exit_code == DRIFTED and "changed since patchops wrote it" in done.output
