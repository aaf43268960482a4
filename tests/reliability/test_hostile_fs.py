"""Links planted in the store or in a copy must never make patchops write outside the copy."""

from __future__ import annotations

import pytest

from devtools import reliability_harness as harness
from reliability_fixtures import source  # noqa: F401 (fixtures)


@pytest.mark.parametrize("case", harness.HOSTILE, ids=[c.name for c in harness.HOSTILE])
def test_link_is_refused_naming_it_and_nothing_outside_changes(case, source, tmp_path):
    done, link, problems = harness.hostile(case, tmp_path, source)
    assert problems == []
    assert not (tmp_path / "outside" / "created").exists()  # a dangling lock link stays dangling


def test_links_that_stay_inside_the_copy_are_followed(source, tmp_path):
    world = harness.build_world(tmp_path, source)
    package = world.sites[0] / "vllm"
    (package / "logger.py").rename(package / "real_logger.py")
    (package / "logger.py").symlink_to("real_logger.py")
    done = harness.run(world, harness.APPLY)
    assert done.returncode == 0, done.stderr
    assert (package / "logger.py").is_symlink()
    assert b"PATCHOPS_MARK_A" in (package / "real_logger.py").read_bytes()
