"""add-decorator on small snippets."""

from __future__ import annotations

from patchops.patchset.ops import AddDecorator, SiteState
from rewrite_assert import assert_rewrite, run_op


def make(**overrides) -> AddDecorator:
    params = dict(file="worker/model_runner.py", sites=1, scope="ModelRunner.execute_model",
                  decorator='_patchops_step_timer("ModelRunner.execute_model")')
    params.update(overrides)
    return AddDecorator(**params)


def test_goes_outermost_below_comments():
    outcome = assert_rewrite(make(), before="""
        class ModelRunner(GPUModelRunnerBase):

            # Comment about the method.
            @torch.inference_mode()
            @dump_input_when_exception(exclude_args=[0])
            def execute_model(self, model_input):
                return model_input
        """, after="""
        class ModelRunner(GPUModelRunnerBase):

            # Comment about the method.
            @_patchops_step_timer("ModelRunner.execute_model")
            @torch.inference_mode()
            @dump_input_when_exception(exclude_args=[0])
            def execute_model(self, model_input):
                return model_input
        """)
    assert [(s.line, s.column, s.state, s.found) for s in outcome.sites] == [
        (7, 5, SiteState.PRISTINE, "")]


def test_undecorated_function():
    assert_rewrite(make(scope="run"), before="""
        def run():
            pass
        """, after="""
        @_patchops_step_timer("ModelRunner.execute_model")
        def run():
            pass
        """)


def test_present_anywhere_is_satisfied():
    outcome = run_op(make(), """
        class ModelRunner:
            @torch.inference_mode()
            @_patchops_step_timer( 'ModelRunner.execute_model' )
            def execute_model(self):
                pass
        """)
    assert outcome.states == (SiteState.SATISFIED,)
    assert outcome.sites[0].line == 4


def test_same_decorator_other_arguments_is_drift():
    outcome = run_op(make(), """
        class ModelRunner:
            @_patchops_step_timer("old label")
            def execute_model(self):
                pass
        """)
    assert outcome.states == (SiteState.DRIFT,)
    assert make().explain(outcome.sites[0]) == (
        'found @_patchops_step_timer("old label"), expected @_patchops_step_timer("ModelRunner.execute_model")')


def test_other_classes_and_nested_functions_ignored():
    outcome = run_op(make(sites=">=0"), """
        class GPUModelRunnerBase:
            def execute_model(self):
                pass

        class ModelRunner:
            def helper(self):
                def execute_model():
                    pass
        """)
    assert outcome.sites == ()


def test_site_count_mismatch():
    outcome = run_op(make(), """
        class ModelRunner:
            if X:
                def execute_model(self):
                    pass
            else:
                def execute_model(self):
                    pass
        """)
    assert outcome.error == ("add-decorator @_patchops_step_timer(...) on ModelRunner.execute_model "
                             "matched 2 sites, expected 1")
    assert "_patchops_step_timer" not in outcome.module.code
