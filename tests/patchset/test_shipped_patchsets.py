"""The shipped patchsets on real vLLM files from PyPI wheels (read-only cache, copies only)."""

from __future__ import annotations

import logging
import shutil

import pytest
from conftest import MID, NEW, NEWEST, OLD, vendor_hardcode

from patchops.patchset.model import find_patchsets, get_patchset, patchset_files
from patchops.patchset.rewrite import missing_file_results, rewrite_source
from tests.support import wheelcache

ARG_UTILS = "engine/arg_utils.py"
V0_RUNNER = "worker/model_runner.py"
V1_RUNNER = "v1/worker/gpu_model_runner.py"


def read(version: str, rel: str) -> str:
    return (wheelcache.site_packages(version) / "vllm" / rel).read_text()


def hardcoded(version: str, tmp_path) -> str:
    """Return arg_utils.py of `version` as the CoreX fork ships it (on a copy)."""
    target = tmp_path / "vllm" / ARG_UTILS
    target.parent.mkdir(parents=True)
    shutil.copyfile(wheelcache.site_packages(version) / "vllm" / ARG_UTILS, target)
    vendor_hardcode(tmp_path)
    return target.read_text()


def test_shipped_patchsets_load():
    shipped = find_patchsets()
    assert {"corex-eager-allreduce", "decode-step-timing"} <= set(shipped)
    for name in ("corex-eager-allreduce", "decode-step-timing"):
        assert patchset_files()[name].parent.name == "patchsets"
        assert shipped[name].description


def test_shipped_values_parse_with_libcst_too():
    # load_patchset checks with ast; the rewrite parses with libcst, which must agree.
    import libcst as cst

    for ps in find_patchsets().values():
        for op in ps.ops:
            for name in ("value", "decorator"):
                if hasattr(op, name):
                    cst.parse_expression(getattr(op, name))
            for value in getattr(op, "pristine", ()):
                cst.parse_expression(value)
            if hasattr(op, "code"):
                cst.parse_module(op.code)


@pytest.mark.vllm
@pytest.mark.parametrize("version", [OLD, MID, NEW, NEWEST])
def test_corex_eager_allreduce_is_satisfied_on_upstream(version):
    ps = get_patchset("corex-eager-allreduce")
    source = read(version, ARG_UTILS)
    rewritten = rewrite_source(source, ARG_UTILS, [ps], version)
    (result,) = rewritten.results
    assert result.state == "satisfied", result.message
    assert len(result.sites) == 2
    assert rewritten.new_source == source and not rewritten.changed


@pytest.mark.vllm
@pytest.mark.parametrize("version", [OLD, MID, NEW, NEWEST])
def test_corex_eager_allreduce_undoes_the_vendor_hardcoding(version, tmp_path):
    ps = get_patchset("corex-eager-allreduce")
    upstream = read(version, ARG_UTILS)
    vendor = hardcoded(version, tmp_path)
    rewritten = rewrite_source(vendor, ARG_UTILS, [ps], version)
    (result,) = rewritten.results
    assert result.state == "applies", result.message
    # Same spot, same layout: the fix is exactly the upstream text.
    assert rewritten.new_source == upstream
    eager_line = next(i for i, line in enumerate(upstream.splitlines(), 1)
                      if "enforce_eager=self.enforce_eager," in line)
    assert eager_line in [site.line for site in result.sites]
    compile(rewritten.new_source, ARG_UTILS, "exec")
    again = rewrite_source(rewritten.new_source, ARG_UTILS, [ps], version)
    assert again.results[0].state == "satisfied" and not again.changed


@pytest.mark.vllm
def test_corex_eager_allreduce_reports_drift_on_a_real_file(tmp_path):
    ps = get_patchset("corex-eager-allreduce")
    source = hardcoded(MID, tmp_path).replace("enforce_eager=True,", "enforce_eager=False,")
    (result,) = rewrite_source(source, ARG_UTILS, [ps], MID).results
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "enforce_eager=False," in text)
    assert result.state == "drift"
    assert result.message == (
        'patchset "corex-eager-allreduce": op 1 (set-keyword ModelConfig(enforce_eager=...)) in '
        f"vllm/engine/arg_utils.py:{line}: found enforce_eager=False, expected self.enforce_eager "
        f"or True (vLLM {MID})")


def test_out_of_range_is_not_applicable():
    ps = get_patchset("corex-eager-allreduce")
    (result,) = rewrite_source("x = 1\n", ARG_UTILS, [ps], "0.5.4").results
    assert result.state == "not-applicable"
    timing = get_patchset("decode-step-timing")
    assert timing.files_for("0.5.4") == ()


@pytest.mark.parametrize("version, files", [
    (OLD, (V0_RUNNER,)),
    ("0.7.3", (V0_RUNNER, V1_RUNNER)),
    (MID, (V0_RUNNER, V1_RUNNER)),
    ("0.10.2", (V0_RUNNER, V1_RUNNER)),
    (NEW, (V1_RUNNER,)),
    (NEWEST, (V1_RUNNER,)),
])
def test_decode_step_timing_reads_only_files_that_exist(version, files):
    ps = get_patchset("decode-step-timing")
    assert ps.files_for(version) == files
    root = wheelcache.site_packages(version) / "vllm"
    for rel in ps.files:
        assert (root / rel).exists() == (rel in files), (version, rel)


@pytest.mark.vllm
@pytest.mark.parametrize("version", [OLD, MID, NEW, NEWEST])
def test_decode_step_timing_applies_and_is_idempotent(version):
    ps = get_patchset("decode-step-timing")
    results = []
    for rel in ps.files_for(version):
        source = read(version, rel)
        first = rewrite_source(source, rel, [ps], version)
        (result,) = first.results
        assert result.state == "applies", result.message
        compile(first.new_source, rel, "exec")
        assert first.new_source.count("# patchops: decode-step-timing") == 1
        assert first.new_source.count("@_patchops_step_timer(") == len(result.sites) - 1
        second = rewrite_source(first.new_source, rel, [ps], version)
        assert second.results[0].state == "satisfied", second.results[0].message
        assert second.new_source == first.new_source and not second.changed
        results.append(result)
    assert {r.state for r in results} == {"applies"}


def test_decode_step_timing_on_a_version_without_the_file():
    ps = get_patchset("decode-step-timing")
    (result,) = rewrite_source("x = 1\n", V0_RUNNER, [ps], NEW).results
    assert result.state == "not-applicable"
    assert missing_file_results(V0_RUNNER, [ps], NEW)[0].state == "not-applicable"
    # Unknown version: every op runs, and a missing file is drift, not a silent skip.
    (result,) = missing_file_results(V0_RUNNER, [ps], None)
    assert result.state == "drift" and "does not exist" in result.message


def timer_namespace(monkeypatch, value):
    code = get_patchset("decode-step-timing").ops[0].code
    if value is None:
        monkeypatch.delenv("PATCHOPS_DECODE_TIMING", raising=False)
    else:
        monkeypatch.setenv("PATCHOPS_DECODE_TIMING", value)
    namespace = {}
    exec(compile(code, "decode-step-timing", "exec"), namespace)
    return namespace["_patchops_step_timer"]


@pytest.mark.parametrize("value", [None, "", "0"])
def test_timer_off_returns_the_method_itself(monkeypatch, value):
    timer = timer_namespace(monkeypatch, value)

    def execute_model(self, scheduler_output):
        return scheduler_output

    assert timer("X.execute_model")(execute_model) is execute_model


def test_timer_on_logs_each_step(monkeypatch, caplog):
    timer = timer_namespace(monkeypatch, "1")

    class Batch:
        total_num_scheduled_tokens = 7

    class Runner:
        @timer("GPUModelRunner.execute_model")
        def execute_model(self, scheduler_output):
            """Doc kept."""
            return "out"

    caplog.set_level(logging.INFO, logger="vllm.patchops.decode_timing")
    runner = Runner()
    assert runner.execute_model(Batch()) == "out"
    assert runner.execute_model(scheduler_output=None) == "out"
    assert Runner.execute_model.__doc__ == "Doc kept."
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("GPUModelRunner.execute_model step 1: ")
    assert messages[0].endswith(" ms (7 tokens)")
    assert messages[1].startswith("GPUModelRunner.execute_model step 2: ")
