"""transformer: a libcst transformer from this module, run as an op."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import PositionProvider

from patchops.patchset.ops import SiteState, Transformer, site_for
from rewrite_assert import assert_rewrite, run_op


class ForceValue(cst.CSTTransformer):
    """Set `name = <value>` assignments to `wanted`; `name = <bad>` is pristine."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, name: str, wanted: str, bad: str = "True"):
        super().__init__()
        self.name, self.wanted, self.bad = name, wanted, bad
        self.sites = []

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        target = original.targets[0].target
        if not (isinstance(target, cst.Name) and target.value == self.name):
            return updated
        current = cst.Module([]).code_for_node(original.value)
        state = {self.wanted: "satisfied", self.bad: "pristine"}.get(current, "drift")
        self.sites.append(site_for(self, original.value, state))
        if state == "pristine":
            return updated.with_changes(value=cst.parse_expression(self.wanted))
        return updated


class NotATransformer:
    def __init__(self, **params):
        pass


class Explodes(cst.CSTTransformer):
    def visit_Module(self, node):
        raise RuntimeError("boom")


def make(callable_=f"{__name__}:ForceValue", **overrides) -> Transformer:
    params = dict(file="engine/arg_utils.py", sites=1, params={"name": "EAGER", "wanted": "False"})
    params.update(overrides)
    return Transformer(callable=callable_, **params)


def test_runs_the_named_transformer():
    outcome = assert_rewrite(make(), before="import x\nEAGER = True  # vendor\n",
                             after="import x\nEAGER = False  # vendor\n")
    assert [(s.line, s.column, s.state, s.found) for s in outcome.sites] == [
        (2, 9, SiteState.PRISTINE, "True")]


def test_drift_leaves_module_untouched():
    outcome = run_op(make(sites=2), "EAGER = True\nEAGER = 3\n")
    assert outcome.states == (SiteState.PRISTINE, SiteState.DRIFT)
    assert outcome.module.code == "EAGER = True\nEAGER = 3\n"


def test_site_count_checked():
    outcome = run_op(make(), "OTHER = True\n")
    assert outcome.error == f"transformer {__name__}:ForceValue matched 0 sites, expected 1"


def test_failures_are_outcomes_not_exceptions():
    assert "is not a libcst.CSTTransformer" in run_op(make(f"{__name__}:NotATransformer", params={}), "x = 1\n").error
    assert "RuntimeError: boom" in run_op(make(f"{__name__}:Explodes", params={}), "x = 1\n").error
    assert "AttributeError" in run_op(make(f"{__name__}:Missing"), "x = 1\n").error
    assert "TypeError" in run_op(make(params={"nope": 1}), "x = 1\n").error


def test_module_must_exist_when_the_op_is_built():
    with pytest.raises(ValueError, match="cannot find module 'no_such_module_xyz'"):
        make("no_such_module_xyz:Thing")
    with pytest.raises(ValueError, match="is not a callable path"):
        make("just.a.module")
