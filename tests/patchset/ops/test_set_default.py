"""set-default on small snippets: dataclass fields and function parameters."""

from __future__ import annotations

import pytest

from patchops.patchset.ops import SetDefault, SiteState
from rewrite_assert import assert_rewrite, run_op


def field_op(**overrides) -> SetDefault:
    params = dict(file="engine/arg_utils.py", sites=1, scope="EngineArgs", field="enforce_eager",
                  value="False", pristine=("True",))
    params.update(overrides)
    return SetDefault(**params)


def param_op(**overrides) -> SetDefault:
    params = dict(file="engine/arg_utils.py", sites=1, scope="EngineArgs.__init__",
                  param="enforce_eager", value="False", pristine=("True",))
    params.update(overrides)
    return SetDefault(**params)


def test_field_default_rewritten_with_comment_kept():
    outcome = assert_rewrite(field_op(), before="""
        @dataclass
        class EngineArgs:
            model: str = "facebook/opt-125m"
            enforce_eager: Optional[bool] = True   # vendor: no graphs
            def enforce_eager_too(self):
                enforce_eager: bool = True
        """, after="""
        @dataclass
        class EngineArgs:
            model: str = "facebook/opt-125m"
            enforce_eager: Optional[bool] = False   # vendor: no graphs
            def enforce_eager_too(self):
                enforce_eager: bool = True
        """)
    assert [(s.line, s.column, s.found) for s in outcome.sites] == [(5, 5, "True")]


def test_param_default_in_each_parameter_kind():
    for signature in ("self, enforce_eager=True", "self, /, enforce_eager: bool = True",
                      "self, *, enforce_eager: bool=True"):
        before = f"class EngineArgs:\n    def __init__({signature}):\n        pass\n"
        after = before.replace("True", "False")
        assert_rewrite(param_op(), before=before, after=after)


def test_satisfied_and_drift():
    ok = run_op(field_op(), "class EngineArgs:\n    enforce_eager: bool = False\n")
    assert ok.states == (SiteState.SATISFIED,)
    drift = run_op(field_op(), "class EngineArgs:\n    enforce_eager: bool = ModelConfig.enforce_eager\n")
    assert drift.states == (SiteState.DRIFT,)
    assert field_op().explain(drift.sites[0]) == (
        "found enforce_eager=ModelConfig.enforce_eager, expected False or True")


def test_missing_default_is_drift():
    outcome = run_op(param_op(), "class EngineArgs:\n    def __init__(self, enforce_eager):\n        pass\n")
    assert outcome.states == (SiteState.DRIFT,)
    assert param_op().explain(outcome.sites[0]) == (
        "found enforce_eager without a default, expected False or True")
    outcome = run_op(field_op(), "class EngineArgs:\n    enforce_eager: bool\n")
    assert outcome.states == (SiteState.DRIFT,)


def test_scope_must_match_exactly():
    source = """
        class EngineArgs:
            def __init__(self, enforce_eager=True):
                def __init__(enforce_eager=True):
                    pass

        class AsyncEngineArgs(EngineArgs):
            def __init__(self, enforce_eager=True):
                pass
        """
    outcome = run_op(param_op(), source)
    assert [s.line for s in outcome.sites] == [3]
    assert run_op(param_op(scope="EngineArgs"), source).error == (
        "set-default EngineArgs(enforce_eager=...) matched 0 sites, expected 1")


def test_needs_exactly_one_of_param_and_field():
    with pytest.raises(ValueError, match="exactly one of `param`"):
        field_op(param="x")
    with pytest.raises(ValueError, match="exactly one of `param`"):
        SetDefault(file="a.py", sites=1, scope="A", value="1", pristine=("2",))


def test_describe():
    assert field_op().describe() == "set-default EngineArgs.enforce_eager"
    assert param_op().describe() == "set-default EngineArgs.__init__(enforce_eager=...)"
