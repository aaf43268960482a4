"""A write refused in the middle of apply's swap (immutable, read-only folder or mount) is
rolled back by the same process: right after the failure every file is as it was, or the
error names the files still changed; the next command finishes the rest."""

from __future__ import annotations

import pytest

from devtools import reliability_harness as harness
from reliability_fixtures import expected, source  # noqa: F401 (fixtures)


@pytest.mark.parametrize("case", harness.MIDWAY, ids=[c.name for c in harness.MIDWAY])
def test_refused_write_mid_swap_leaves_every_copy_as_it_was(case, expected, tmp_path):
    reason = harness.can(case.needs, tmp_path)
    if reason:
        pytest.skip(reason)
    done, problems = harness.midway(case, tmp_path / "world", expected("apply"))
    assert problems == []
