"""insert-code on small snippets."""

from __future__ import annotations

import pytest

from patchops.patchset.ops import InsertCode, SiteState
from rewrite_assert import assert_rewrite, run_op

CODE = """\
# Explains the block.
import os as _os

if _os.environ.get("X"):
    def timer(label):
        return label
else:
    def timer(label):
        return None
"""


def make(**overrides) -> InsertCode:
    params = dict(file="worker/model_runner.py", sites=1, marker="step-timing", before="ModelRunner",
                  code=CODE)
    params.update(overrides)
    return InsertCode(**params)


def test_inserts_before_the_anchor_with_marker():
    outcome = assert_rewrite(make(), before='''
        """Docstring."""
        import torch

        logger = init_logger(__name__)


        # About ModelRunner.
        class ModelRunner:
            pass
        ''', after='''
        """Docstring."""
        import torch

        logger = init_logger(__name__)


        # patchops: step-timing
        # Explains the block.
        import os as _os

        if _os.environ.get("X"):
            def timer(label):
                return label
        else:
            def timer(label):
                return None


        # About ModelRunner.
        class ModelRunner:
            pass
        ''')
    assert [(s.line, s.state, s.found) for s in outcome.sites] == [(9, SiteState.PRISTINE, "")]


def test_anchor_after_an_indented_block():
    assert_rewrite(make(code="X = 1\n"), before="""
        if TYPE_CHECKING:
            import torch
            # trailing comment in the block

        class ModelRunner:
            pass
        """, after="""
        if TYPE_CHECKING:
            import torch
            # trailing comment in the block


        # patchops: step-timing
        X = 1

        class ModelRunner:
            pass
        """)


def test_changed_block_is_drift():
    outcome = run_op(make(code="X = 1\nY = 2\n"), """
        import os

        # patchops: step-timing
        X = 1
        Y = 3

        class ModelRunner:
            pass
        """)
    assert outcome.states == (SiteState.DRIFT,)
    assert outcome.sites[0].found == "# patchops: step-timing\nX = 1\nY = 3\n"
    outcome = run_op(make(code="X = 1\nY = 2\n"), "# patchops: step-timing\nX = 1\nY = 3\n")
    assert outcome.states == (SiteState.DRIFT,)
    assert outcome.sites[0].found == "X = 1\nY = 3\n"  # the opening comment is the file's header
    assert "differs from the patchset's code" in make().explain(outcome.sites[0])


def test_truncated_block_at_end_of_file_is_drift():
    outcome = run_op(make(code="X = 1\nY = 2\n"), "# patchops: step-timing\nX = 1\n")
    assert outcome.states == (SiteState.DRIFT,)


def test_block_found_wherever_it_is():
    outcome = run_op(make(code="X = 1\n"), """
        class ModelRunner:
            pass

        # patchops: step-timing
        X = 1
        """)
    assert outcome.states == (SiteState.SATISFIED,)


def test_other_markers_ignored_and_missing_anchor_is_mismatch():
    outcome = run_op(make(code="X = 1\n"), "# patchops: other\nX = 1\n")
    assert outcome.error == "insert-code step-timing before ModelRunner matched 0 sites, expected 1"


def test_code_must_parse():
    with pytest.raises(ValueError, match="is not valid Python: line 1"):
        make(code="def (:\n")
