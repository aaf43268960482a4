"""assert_rewrite and run_op for op tests: LibCST's assertCodemod habit.

A plain module rather than tests/patchset/ops/conftest.py: without __init__.py files a second conftest
would replace the root one in sys.modules and break `from conftest import ...`.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from patchops.patchset.ops import Op, OpOutcome, SiteState


def run_op(op: Op, source: str) -> OpOutcome:
    """Run `op` on `source` (dedented) and return its outcome."""
    return op.rewrite(cst.parse_module(textwrap.dedent(source)))


def assert_rewrite(op: Op, *, before: str, after: str) -> OpOutcome:
    """Assert `op` turns `before` into `after`, and that a second run changes nothing."""
    before, after = textwrap.dedent(before), textwrap.dedent(after)
    first = op.rewrite(cst.parse_module(before))
    assert first.error is None, first.error
    assert SiteState.DRIFT not in first.states
    assert first.module.code == after
    if before == after:
        assert SiteState.PRISTINE not in first.states
    again_input = cst.parse_module(after)
    again = op.rewrite(again_input)
    assert again.error is None, again.error
    assert again.module is again_input, "a second run must not rebuild the module"
    assert set(again.states) == {SiteState.SATISFIED}
    assert len(again.sites) == len(first.sites)
    return first

