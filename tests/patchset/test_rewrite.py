"""rewrite_source over snippets: the four states, ordering, messages, missing files."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from patchops.core.errors import PatchsetError
from patchops.patchset.ops import AddDecorator, InsertCode, SetKeyword, SiteState
from patchops.patchset.model import Patchset
from patchops.patchset.rewrite import (FileRewrite, PatchsetResult, missing_file_results,
                              rewrite_source)

REL = "engine/arg_utils.py"
SOURCE = """\
class EngineArgs:
    def create_model_config(self):
        return ModelConfig(
            enforce_eager=True,  # vendor
        )

    def create_engine_config(self):
        return ParallelConfig(disable_custom_all_reduce=True)
"""


def keyword(callee: str, name: str, **extra) -> SetKeyword:
    return SetKeyword(file=REL, sites=1, scope="EngineArgs", callee=callee, keyword=name,
                      value=f"self.{name}", pristine=("True",), **extra)


def patchset(*ops, name: str = "eager", versions: str = ">=0.6.3") -> Patchset:
    return Patchset(name, "summary", "", SpecifierSet(versions), tuple(ops), Path(f"{name}.yaml"))


EAGER = patchset(keyword("ModelConfig", "enforce_eager"),
                 keyword("ParallelConfig", "disable_custom_all_reduce"))


def test_applies_then_satisfied():
    first = rewrite_source(SOURCE, REL, [EAGER], "0.8.5")
    assert isinstance(first, FileRewrite) and first.changed
    (result,) = first.results
    assert result.state == "applies"
    assert [(s.line, s.state) for s in result.sites] == [(4, SiteState.PRISTINE), (8, SiteState.PRISTINE)]
    assert result.message == ('patchset "eager": will rewrite 2 sites in vllm/engine/arg_utils.py '
                              "(lines 4, 8) (vLLM 0.8.5)")
    assert first.new_source == SOURCE.replace("enforce_eager=True,  # vendor", "enforce_eager=self.enforce_eager,") \
        .replace("all_reduce=True", "all_reduce=self.disable_custom_all_reduce")
    second = rewrite_source(first.new_source, REL, [EAGER], "0.8.5")
    assert not second.changed and second.new_source is first.new_source
    assert second.results[0].state == "satisfied"
    assert second.results[0].message == ('patchset "eager": already applied in '
                                         "vllm/engine/arg_utils.py (2 sites) (vLLM 0.8.5)")


def test_drift_names_file_line_and_found_text_and_changes_nothing():
    source = SOURCE.replace("enforce_eager=True", "enforce_eager=False")
    rewritten = rewrite_source(source, REL, [EAGER], "0.9.2")
    assert rewritten.new_source == source
    (result,) = rewritten.results
    assert result.state == "drift"
    assert [s.state for s in result.sites] == [SiteState.DRIFT, SiteState.PRISTINE]
    assert result.message == (
        'patchset "eager": op 1 (set-keyword ModelConfig(enforce_eager=...)) in '
        "vllm/engine/arg_utils.py:4: found enforce_eager=False, expected self.enforce_eager or True "
        "(vLLM 0.9.2)")


def test_site_count_mismatch_is_drift():
    source = SOURCE.replace("ParallelConfig(", "OtherConfig(")
    (result,) = rewrite_source(source, REL, [EAGER], None).results
    assert result.state == "drift"
    assert result.message == (
        'patchset "eager": op 2 (set-keyword ParallelConfig(disable_custom_all_reduce=...)) in '
        "vllm/engine/arg_utils.py: matched 0 sites, expected 1")


def test_several_problems_are_counted():
    source = SOURCE.replace("=True", "=False").replace("ParallelConfig(", "ParallelConfig(x=1, ")
    (result,) = rewrite_source(source, REL, [EAGER], None).results
    assert result.message.endswith("expected self.enforce_eager or True (and 1 more)")


def test_not_applicable_outside_range():
    rewritten = rewrite_source(SOURCE, REL, [EAGER], "0.5.4")
    assert not rewritten.changed
    assert rewritten.results == (PatchsetResult(
        "eager", "not-applicable", (), 'patchset "eager": not for vLLM 0.5.4 (it supports vLLM >=0.6.3)'),)


def test_unknown_version_lets_sites_decide():
    assert rewrite_source(SOURCE, REL, [EAGER], None).results[0].state == "applies"


def test_op_level_ranges():
    ps = patchset(keyword("ModelConfig", "enforce_eager", vllm=SpecifierSet("<0.11")))
    assert rewrite_source(SOURCE, REL, [ps], "0.10.2").results[0].state == "applies"
    (result,) = rewrite_source(SOURCE, REL, [ps], "0.11.0").results
    assert result.state == "not-applicable"
    assert result.message == ('patchset "eager": no op for vllm/engine/arg_utils.py runs on '
                              "vLLM 0.11.0 (op 1: <0.11)")


def test_patchsets_without_ops_for_the_file_are_skipped_without_parsing():
    other = patchset(AddDecorator(file="worker/model_runner.py", sites=1, scope="f", decorator="d"))
    rewritten = rewrite_source("this is not python", REL, [other], "0.8.5")
    assert rewritten.results == () and rewritten.new_source == "this is not python"


def test_drifted_patchset_does_not_stop_the_next_one():
    eager = patchset(keyword("ModelConfig", "enforce_eager"), name="one")
    broken = patchset(keyword("Missing", "enforce_eager"), name="two")
    allreduce = patchset(keyword("ParallelConfig", "disable_custom_all_reduce"), name="three")
    rewritten = rewrite_source(SOURCE, REL, [eager, broken, allreduce], "0.8.5")
    assert [r.state for r in rewritten.results] == ["applies", "drift", "applies"]
    assert "enforce_eager=self.enforce_eager" in rewritten.new_source
    assert "all_reduce=self.disable_custom_all_reduce" in rewritten.new_source


def test_ops_chained_but_lines_reported_as_in_the_file():
    ps = patchset(
        InsertCode(file=REL, sites=1, marker="m", before="EngineArgs", code="A = 1\nB = 2\n"),
        keyword("ModelConfig", "enforce_eager"))
    rewritten = rewrite_source(SOURCE, REL, [ps], None)
    (result,) = rewritten.results
    assert result.state == "applies"
    assert [s.line for s in result.sites] == [1, 4]  # op 2's site as in SOURCE, not shifted
    assert rewritten.new_source.startswith("\n\n# patchops: m\nA = 1\nB = 2\nclass EngineArgs:")
    assert "enforce_eager=self.enforce_eager" in rewritten.new_source
    assert rewrite_source(rewritten.new_source, REL, [ps], None).results[0].state == "satisfied"


def test_colliding_ops_are_drift():
    ps = patchset(keyword("ModelConfig", "enforce_eager"),
                  SetKeyword(file=REL, sites=1, scope="EngineArgs", callee="ModelConfig",
                             keyword="enforce_eager", value="False", pristine=("True",)))
    rewritten = rewrite_source(SOURCE, REL, [ps], None)
    (result,) = rewritten.results
    assert result.state == "drift"
    assert "op 2" in result.message and result.message.endswith("(after the earlier ops ran)")
    assert not rewritten.changed


def test_display_path_and_parse_errors():
    source = SOURCE.replace("=False", "=0").replace("enforce_eager=True", "enforce_eager=False")
    (result,) = rewrite_source(source, REL, [EAGER], None, display_path="/opt/x/vllm/engine/arg_utils.py").results
    assert "in /opt/x/vllm/engine/arg_utils.py:4:" in result.message
    with pytest.raises(PatchsetError, match=r"^vllm/engine/arg_utils.py:\d+:\d+: cannot parse"):
        rewrite_source("def broken(:\n", REL, [EAGER], None)


def test_missing_file_results():
    v0 = patchset(AddDecorator(file="worker/model_runner.py", sites=1, scope="A.f", decorator="d"),
                  name="timing")
    optional = patchset(AddDecorator(file="worker/model_runner.py", sites="<=1", scope="A.f",
                                     decorator="d"), name="optional")
    (drift, fine) = missing_file_results("worker/model_runner.py", [v0, optional, EAGER], "0.11.0")
    assert drift.state == "drift"
    assert drift.message == ('patchset "timing": op 1 (add-decorator @d on A.f) targets '
                             "vllm/worker/model_runner.py, which does not exist (vLLM 0.11.0)")
    assert fine.state == "satisfied"


