"""`patchops capture` on real vLLM copies: hand edit, capture, roll back, re-apply, other versions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import MID, NEW, NEWEST, OLD
from patchops import patching
from patchops.patching import capture
from tests.support import wheelcache
from patchops.cli.app import OK, app
from patchops.core.errors import PatchopsError
from patchops.host.locate import locate_site
from patchops.patchset.model import load_patchset
from patchops.patchset.states import PatchState

pytestmark = pytest.mark.vllm

ARG = "engine/arg_utils.py"
RUNNER = "v1/worker/gpu_model_runner.py"


def copy(tmp_path: Path, version: str, name: str = "site") -> Path:
    return wheelcache.copy_site_packages(version, tmp_path / name / version, with_flash_attn=False)


def pristine(version: str, rel: str) -> bytes:
    return (wheelcache.site_packages(version) / "vllm" / rel).read_bytes()


def time_by_hand(path: Path, method: str = "execute_model") -> None:
    """Instrument GPUModelRunner.<method> the way a user does in an editor: time the whole body."""
    text = path.read_text()
    tree = ast.parse(text)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GPUModelRunner")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == method)
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and isinstance(
        getattr(fn.body[0], "value", None), ast.Constant) else fn.body
    lines = text.splitlines(keepends=True)
    first, last = body[0].lineno - 1, fn.end_lineno
    pad = " " * body[0].col_offset
    inner = [("    " + line) if line.strip() else line for line in lines[first:last]]
    lines[first:last] = [
        f"{pad}import time as _time  # decode timing, by hand\n",
        f"{pad}_start = _time.perf_counter()\n",
        f"{pad}try:\n", *inner,
        f"{pad}finally:\n",
        f"{pad}    logger.info(\"{method}: %.3f ms\", (_time.perf_counter() - _start) * 1e3)\n",
    ]
    path.write_text("".join(lines))


def plan(site: Path, patchset):
    return patching.plan_apply([locate_site(site)], [patchset], check=False)


def state_of(site: Path, patchset) -> str:
    return plan(site, patchset).outcomes[0].state


def test_corex_hardcoding_captured_rolled_back_and_reapplied(tmp_path):
    site = copy(tmp_path, MID)
    target = site / "vllm" / ARG
    wheelcache.hardcode_like_corex(site)  # the hand edit
    edited = target.read_bytes()

    result = capture.capture("corex-hardcode", [target], from_wheel=True, out_dir=tmp_path / "ps")
    assert [op.name for op in result.files[0].ops] == ["set-keyword", "set-keyword"]
    assert result.versions == f">={MID}"
    data = yaml.safe_load(result.path.read_text())
    assert data["ops"][0]["value"] == "True" and data["ops"][0]["pristine"] == ["self.enforce_eager"]
    patchset = load_patchset(result.path)
    copy_ = locate_site(site)

    assert state_of(site, patchset) == "applied"  # recorded: the store knows the edit
    patching.rollback([copy_], ["corex-hardcode"])
    assert target.read_bytes() == pristine(MID, ARG)
    patching.commit_apply(patching.plan_apply([copy_], [patchset]))
    assert target.read_bytes() == edited

    # Another version in range, with the same sites: the same edit, byte for byte.
    newer = copy(tmp_path, NEW)
    patching.commit_apply(patching.plan_apply([locate_site(newer)], [patchset]))
    by_hand = copy(tmp_path, NEW, "by-hand")
    wheelcache.hardcode_like_corex(by_hand)
    assert (newer / "vllm" / ARG).read_bytes() == (by_hand / "vllm" / ARG).read_bytes()
    # Older than the copy it was captured on: not applicable.
    assert state_of(copy(tmp_path, OLD), patchset) == PatchState.NOT_APPLICABLE


def test_decode_timing_captured_rolled_back_reapplied_and_refused_elsewhere(tmp_path):
    site = copy(tmp_path, NEWEST)
    target = site / "vllm" / RUNNER
    time_by_hand(target)
    edited = target.read_bytes()

    result = capture.capture("decode-timing-by-hand", [target], from_wheel=True,
                             out_dir=tmp_path / "ps", versions=">=0.11")
    [op] = result.files[0].ops
    assert (op.name, op.scope) == ("replace-function", "GPUModelRunner.execute_model")
    patchset = load_patchset(result.path)
    copy_ = locate_site(site)

    patching.rollback([copy_], ["decode-timing-by-hand"])
    assert target.read_bytes() == pristine(NEWEST, RUNNER)
    assert state_of(site, patchset) == PatchState.APPLIES
    patching.commit_apply(patching.plan_apply([copy_], [patchset]))
    assert target.read_bytes() == edited
    assert state_of(site, patchset) == "applied"

    # The same hand edit made on another fresh copy: already applied, nothing to write.
    twin = copy(tmp_path, NEWEST, "twin")
    time_by_hand(twin / "vllm" / RUNNER)
    assert state_of(twin, patchset) == PatchState.SATISFIED

    # 0.11.0's execute_model is another function: refused, naming the mismatch.
    older = plan(copy(tmp_path, NEW), patchset)
    assert older.outcomes[0].state == PatchState.DRIFT
    assert "does not match this file" in older.problems[0]
    assert "GPUModelRunner.execute_model" in older.problems[0]
    # With the default range (>= the copy's version) it is not applicable there.
    default = capture.capture("decode-timing-default", [target], base=wheelcache.site_packages(NEWEST)
                              / "vllm" / RUNNER, out_dir=tmp_path / "ps", record=False)
    assert state_of(copy(tmp_path, NEW, "other"), load_patchset(default.path)) == PatchState.NOT_APPLICABLE


def test_capture_on_top_of_a_patchops_patch_uses_the_store(tmp_path):
    from patchops.patchset.model import get_patchset

    site = copy(tmp_path, NEWEST)
    target = site / "vllm" / RUNNER
    timing = get_patchset("decode-step-timing")
    copy_ = locate_site(site)
    patching.commit_apply(patching.plan_apply([copy_], [timing]))
    patched = target.read_bytes()
    time_by_hand(target, "load_model")
    edited = target.read_bytes()

    result = capture.capture("time-load-model", [target], out_dir=tmp_path / "ps")
    assert result.files[0].pristine_from == capture.FROM_STORE
    [op] = result.files[0].ops
    assert op.scope == "GPUModelRunner.load_model"

    patching.rollback([copy_], ["time-load-model"], patchsets_dirs=[tmp_path / "ps"])
    assert target.read_bytes() == patched  # decode-step-timing stays
    patching.commit_apply(patching.plan_apply([copy_], [load_patchset(result.path)]))
    assert target.read_bytes() == edited


def test_changed_defaults_become_set_default(tmp_path):
    site = copy(tmp_path, NEWEST)
    target = site / "vllm" / ARG
    text = target.read_text()
    line = next(l for l in text.splitlines() if l.strip().startswith("enforce_eager:"))
    target.write_text(text.replace(line, line.split("=")[0] + "= True", 1))
    result = capture.capture("eager-default", [target], from_wheel=True, out_dir=tmp_path / "ps",
                             record=False)
    [op] = result.files[0].ops
    assert (op.name, op.scope, op.field, op.value) == ("set-default", "EngineArgs", "enforce_eager", "True")


@pytest.mark.parametrize("edit, says", [
    (lambda t: "import time\n" + t, "a change outside any function"),
    (lambda t: t.replace("class EngineArgs", "# vendor note\nclass EngineArgs", 1),
     "only comments or layout changed"),
    (lambda t: t.replace("        enforce_eager=self.enforce_eager,",
                         "        enforce_eager=self.enforce_eager,  # note", 1)
     .replace("disable_custom_all_reduce=self.disable_custom_all_reduce,",
              "disable_custom_all_reduce=True,", 1),
     "cannot reproduce the edit exactly"),
])
def test_what_capture_cannot_express_is_refused_and_nothing_written(tmp_path, edit, says):
    site = copy(tmp_path, NEWEST)
    target = site / "vllm" / ARG
    target.write_text(edit(target.read_text()))
    with pytest.raises(PatchopsError, match=says):
        capture.capture("nope", [target], from_wheel=True, out_dir=tmp_path / "ps")
    assert not (tmp_path / "ps").exists() and not (site / ".patchops").exists()


def test_pristine_text_must_be_known_and_match_record(tmp_path):
    site = copy(tmp_path, NEWEST)
    target = site / "vllm" / ARG
    wheelcache.hardcode_like_corex(site)
    with pytest.raises(PatchopsError, match="no stored original.*--from-wheel"):
        capture.capture("x", [target], out_dir=tmp_path / "ps")
    record = next(site.glob("vllm-*.dist-info/RECORD"))
    lines = record.read_text().splitlines()
    wrong = [l if not l.startswith("vllm/engine/arg_utils.py,") else
             "vllm/engine/arg_utils.py,sha256=" + "A" * 43 + "," + l.rsplit(",", 1)[1] for l in lines]
    record.write_text("\n".join(wrong) + "\n")
    with pytest.raises(PatchopsError, match="does not have the hash RECORD lists"):
        capture.capture("x", [target], from_wheel=True, out_dir=tmp_path / "ps")
    (site / "vllm" / "_version.py").write_text("__version__ = '0.33.0+corex.4.2'\n")
    with pytest.raises(PatchopsError, match="not a PyPI release"):
        capture.capture("x", [target], from_wheel=True, out_dir=tmp_path / "ps")


def test_cli_capture_then_dry_run(tmp_path):
    site = copy(tmp_path, NEWEST)
    target = site / "vllm" / ARG
    wheelcache.hardcode_like_corex(site)
    out = tmp_path / "ps"
    env = {"PATCHOPS_ROOTS": "", "PYTHONPATH": "", "PATCHOPS_CACHE": str(wheelcache.cache_root())}
    run = CliRunner()
    done = run.invoke(app, ["capture", "corex-hardcode", str(target), "--from-wheel", "--out", str(out)], env=env)
    assert done.exit_code == OK, done.output
    assert f"wrote {out / 'corex-hardcode.yaml'}" in done.output
    again = run.invoke(app, ["capture", "corex-hardcode", str(target), "--from-wheel", "--out", str(out)], env=env)
    assert again.exit_code == 2 and "exists; pass --force" in again.output
    status = run.invoke(app, ["status", "corex-hardcode", "--site", str(site), "--patchsets", str(out)], env=env)
    assert status.exit_code == OK and "applied" in status.output
    fresh = copy(tmp_path, NEWEST, "fresh")
    dry = run.invoke(app, ["apply", "corex-hardcode", "--dry-run", "--site", str(fresh),
                           "--patchsets", str(out)], env=env)
    assert dry.exit_code == OK and "+            enforce_eager=True," in dry.output
    assert (fresh / "vllm" / ARG).read_bytes() == pristine(NEWEST, ARG)


def test_the_same_edit_in_lib_and_lib64_is_captured_once_and_recorded_in_both(tmp_path, corex_tree):
    _, sites = corex_tree(MID, with_flash_attn=False)
    for site in sites:
        wheelcache.hardcode_like_corex(site)  # the seed's log: both copies edited by hand
    targets = [site / "vllm" / ARG for site in sites]
    edited = targets[0].read_bytes()
    result = capture.capture("corex-hardcode", targets, from_wheel=True, out_dir=tmp_path / "ps")
    assert len(load_patchset(result.path).ops) == 2 and result.recorded == tuple(targets)
    copies = [locate_site(site) for site in sites]
    report = patching.rollback(copies, ["corex-hardcode"])
    assert sorted(report.restored) == sorted(targets)
    assert all(t.read_bytes() == pristine(MID, ARG) for t in targets)
    patching.commit_apply(patching.plan_apply(copies, [load_patchset(result.path)]))
    assert all(t.read_bytes() == edited for t in targets)

    patching.rollback(copies, ["corex-hardcode"])
    targets[1].write_bytes(targets[1].read_bytes().replace(b"enforce_eager=self.enforce_eager,",
                                                           b"enforce_eager=True,"))
    wheelcache.hardcode_like_corex(sites[0])
    with pytest.raises(PatchopsError, match="edited differently from the other copy"):
        capture.capture("corex-hardcode", targets, from_wheel=True, out_dir=tmp_path / "ps", force=True)
