"""positions() agrees with libcst's PositionProvider on real vLLM files; positions_off() skips it."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from patchops.patchset.ops.positions import positions, positions_off, site_positions
from tests.support import wheelcache


@pytest.mark.vllm
@pytest.mark.parametrize("version, rel", [("0.6.3.post1", "engine/arg_utils.py"),
                                          ("0.8.5", "v1/worker/gpu_model_runner.py")])
def test_positions_match_position_provider(version, rel):
    module = cst.parse_module((wheelcache.site_packages(version) / "vllm" / rel).read_text())
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = list(expected)
    rng = random.Random(0)
    sample = rng.sample(nodes, 2000) + [n for n in nodes if isinstance(
        n, (cst.Arg, cst.Param, cst.FunctionDef, cst.ClassDef, cst.Decorator, cst.AnnAssign,
            cst.SimpleStatementLine, cst.SimpleStatementSuite))]
    got = positions(module, sample)
    assert all(got[id(n)] == (expected[n].start.line, expected[n].start.column + 1) for n in sample)
    for node in rng.sample(nodes, 15):  # alone, which stops code generation early
        assert positions(module, [node])[id(node)] == (expected[node].start.line,
                                                      expected[node].start.column + 1)


def test_site_positions_are_zero_only_inside_positions_off():
    module = cst.parse_module("x = 1\n\ny = 2\n")
    second = module.body[1]
    assert site_positions(module, [second]) == {id(second): (3, 1)}
    with positions_off():
        assert site_positions(module, [second]) == {id(second): (0, 0)}
    assert site_positions(module, [second]) == {id(second): (3, 1)}
