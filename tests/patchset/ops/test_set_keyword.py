"""set-keyword on small snippets: states, scope, callee forms, layout kept."""

from __future__ import annotations

import pytest

from patchops.patchset.ops import SetKeyword, SiteState
from rewrite_assert import assert_rewrite, run_op


def make(**overrides) -> SetKeyword:
    params = dict(file="engine/arg_utils.py", sites=1, scope="EngineArgs", callee="ModelConfig",
                  keyword="enforce_eager", value="self.enforce_eager", pristine=("True",))
    params.update(overrides)
    return SetKeyword(**params)


def test_rewrites_pristine_value_drops_its_stale_comment_and_keeps_the_rest():
    # The vendor's comment explained `True`; next to the restored value it would be false.
    outcome = assert_rewrite(make(), before="""
        class EngineArgs:
            def create_model_config(self):
                return ModelConfig(
                    model=self.model,  # the checkpoint
                    enforce_eager=True,  # CoreX: no graphs
                    # capture up to this length
                    max_seq_len_to_capture=self.max_seq_len_to_capture,
                )
        """, after="""
        class EngineArgs:
            def create_model_config(self):
                return ModelConfig(
                    model=self.model,  # the checkpoint
                    enforce_eager=self.enforce_eager,
                    # capture up to this length
                    max_seq_len_to_capture=self.max_seq_len_to_capture,
                )
        """)
    (site,) = outcome.sites
    assert (site.line, site.column, site.state, site.found) == (6, 13, SiteState.PRISTINE, "True")


def test_keeps_odd_spacing_and_last_argument_without_comma():
    assert_rewrite(make(), before="""
        class EngineArgs:
            def f(self):
                return ModelConfig(model=m, enforce_eager = True)
        """, after="""
        class EngineArgs:
            def f(self):
                return ModelConfig(model=m, enforce_eager = self.enforce_eager)
        """)


def test_value_compared_as_code():
    outcome = run_op(make(), """
        class EngineArgs:
            def f(self):
                return ModelConfig(enforce_eager=(  self.enforce_eager  # same thing
                ))
        """)
    assert outcome.states == (SiteState.SATISFIED,)
    assert outcome.error is None


def test_several_pristine_values():
    op = make(pristine=("True", "not self.enforce_eager or True"))
    assert_rewrite(op, before="""
        class EngineArgs:
            def f(self):
                return ModelConfig(enforce_eager=not self.enforce_eager or True)
        """, after="""
        class EngineArgs:
            def f(self):
                return ModelConfig(enforce_eager=self.enforce_eager)
        """)


def test_unknown_value_is_drift_and_changes_nothing():
    source = """
        class EngineArgs:
            def f(self):
                return ModelConfig(enforce_eager=False)
        """
    outcome = run_op(make(), source)
    assert outcome.states == (SiteState.DRIFT,)
    assert outcome.sites[0].found == "False"
    assert outcome.sites[0].line == 4
    assert outcome.error is None
    assert "found enforce_eager=False, expected self.enforce_eager or True" == make().explain(outcome.sites[0])


def test_drift_on_one_site_blocks_pristine_other():
    op = make(sites=">=1")
    outcome = run_op(op, """
        class EngineArgs:
            def f(self):
                a = ModelConfig(enforce_eager=True)
                b = ModelConfig(enforce_eager=False)
        """)
    assert outcome.states == (SiteState.PRISTINE, SiteState.DRIFT)
    assert "enforce_eager=True" in outcome.module.code  # untouched


def test_site_count_mismatch():
    outcome = run_op(make(), """
        class EngineArgs:
            def f(self):
                a = ModelConfig(enforce_eager=True)
                b = ModelConfig(enforce_eager=True)
        """)
    assert outcome.error == "set-keyword ModelConfig(enforce_eager=...) matched 2 sites, expected 1"
    assert "self.enforce_eager" not in outcome.module.code
    outcome = run_op(make(), "class EngineArgs:\n    pass\n")
    assert outcome.error == "set-keyword ModelConfig(enforce_eager=...) matched 0 sites, expected 1"


def test_scope_limits_matches():
    source = """
        def build():
            return ModelConfig(enforce_eager=True)

        class SpeculativeConfig:
            def draft(self):
                return ModelConfig(enforce_eager=True)

        class EngineArgs:
            def create_model_config(self):
                return ModelConfig(enforce_eager=True)

            def other(self):
                return ModelConfig(enforce_eager=True)
        """
    assert len(run_op(make(sites=">=1"), source).sites) == 2
    assert len(run_op(make(sites=">=1", scope=""), source).sites) == 4
    outcome = run_op(make(scope="EngineArgs.create_model_config"), source)
    assert [s.line for s in outcome.sites] == [11]
    assert outcome.module.code.count("self.enforce_eager") == 1


def test_scope_sees_through_if_blocks():
    outcome = run_op(make(), """
        if True:
            class EngineArgs:
                def f(self):
                    return ModelConfig(enforce_eager=True)
        """)
    assert outcome.states == (SiteState.PRISTINE,)


def test_callee_forms():
    source = """
        class EngineArgs:
            def f(self):
                a = config.ModelConfig(enforce_eager=True)
                b = vllm.config.ModelConfig(enforce_eager=True)
                c = MyModelConfig(enforce_eager=True)
                d = ModelConfigs(enforce_eager=True)
                e = get()(enforce_eager=True)
        """
    assert len(run_op(make(sites=">=1"), source).sites) == 2
    assert len(run_op(make(sites=">=1", callee="config.ModelConfig"), source).sites) == 2
    assert len(run_op(make(sites=">=1", callee="vllm.config.ModelConfig"), source).sites) == 1


def test_call_without_the_keyword_is_not_a_site():
    outcome = run_op(make(sites="<=1"), """
        class EngineArgs:
            def f(self):
                return ModelConfig(model=self.model, **kwargs)
        """)
    assert outcome.sites == () and outcome.error is None


def test_nested_calls_are_each_sites():
    outcome = run_op(make(sites=2), """
        class EngineArgs:
            def f(self):
                return ModelConfig(enforce_eager=True, draft=ModelConfig(enforce_eager=True))
        """)
    assert outcome.error is None
    assert outcome.module.code.count("enforce_eager=self.enforce_eager") == 2


def test_crlf_file_keeps_line_endings():
    source = "class EngineArgs:\r\n    def f(self):\r\n        return ModelConfig(\r\n            enforce_eager=True,\r\n        )\r\n"
    outcome = run_op(make(), source)
    assert outcome.module.code == source.replace("=True", "=self.enforce_eager")
    assert outcome.sites[0].line == 4


@pytest.mark.parametrize("field, value, message", [
    ("value", "self.", "is not a Python expression"),
    ("pristine", (), "non-empty list"),
    ("keyword", "enforce-eager", "is not a Python identifier"),
    ("scope", "EngineArgs.", "is not a dotted name"),
    ("callee", "ModelConfig()", "is not a dotted name"),
    ("file", "vllm/engine/arg_utils.py", "relative to the vllm package already"),
    ("sites", "most", "is not a number or a bound"),
])
def test_parameters_checked_on_construction(field, value, message):
    with pytest.raises(ValueError, match=message):
        make(**{field: value})


def test_describe():
    assert make().describe() == "set-keyword ModelConfig(enforce_eager=...)"
