"""Two patchops at once, made deterministic: one is held (SIGSTOP) at a named point.

Whatever the interleaving, every patchset must end in the same state in both copies, and the
command that lost the race must say so (exit 4) rather than half-apply.
"""

from __future__ import annotations

import pytest

from devtools import reliability_harness as harness
from reliability_fixtures import source  # noqa: F401 (fixtures)


@pytest.mark.parametrize("spec", harness.RACES, ids=[r.name for r in harness.RACES])
def test_held_command_and_a_second_one_leave_both_copies_consistent(spec, source, tmp_path):
    first, second, problems = harness.race(spec, tmp_path, source)
    assert problems == []


def test_apply_overtaken_by_a_rollback_says_so_and_writes_nothing(source, tmp_path):
    [spec] = [r for r in harness.RACES if r.name == "apply-vs-rollback"]
    first, second, problems = harness.race(spec, tmp_path, source)
    assert problems == []
    assert first.returncode == 4 and "another patchops changed" in first.stderr
    assert "nothing was written" in first.stderr
    for site in (tmp_path / "lib" / "site-packages", tmp_path / "lib64" / "site-packages"):
        assert b"PATCHOPS_MARK_C" not in (site / "vllm" / "sampling_params.py").read_bytes()
        assert b"PATCHOPS_MARK_B" not in (site / "vllm" / "logger.py").read_bytes()


def test_status_beside_a_running_apply_notes_it(source, tmp_path):
    [spec] = [r for r in harness.RACES if r.name == "apply-holding-locks-vs-status"]
    first, second, problems = harness.race(spec, tmp_path, source)
    assert problems == []
    assert "another patchops is working on" in second.stdout
