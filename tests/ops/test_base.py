"""Shared op machinery: site counts, versions, positions, the scoped walk, node replacement."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider
from packaging.specifiers import SpecifierSet

from patchops.ops.base import (SiteCount, dotted_name, normalize_expr, positions, replace_nodes,
                               version_in, walk)
from tests.support import wheelcache


@pytest.mark.parametrize("text, low, high, shown", [
    (1, 1, 1, "1"), ("2", 2, 2, "2"), (">=1", 1, None, ">=1"), (">0", 1, None, ">=1"),
    ("<=3", 0, 3, "<=3"), ("<2", 0, 1, "<=1"), (0, 0, 0, "0"),
])
def test_site_count(text, low, high, shown):
    count = SiteCount.parse(text)
    assert (count.low, count.high, str(count)) == (low, high, shown)
    assert low in count and (high is None or high + 1 not in count)


@pytest.mark.parametrize("bad", [-1, True, "many", "<0", "1.5", None])
def test_site_count_rejects(bad):
    with pytest.raises(ValueError):
        SiteCount.parse(bad)


@pytest.mark.parametrize("version, spec, expected", [
    ("0.6.3.post1", ">=0.6.3", True),
    ("0.8.5+corex.4.2.0", ">=0.6.3,<0.9", True),
    ("0.11.0rc1", "<0.11", False),
    ("0.12.0rc1", ">=0.12", False),        # PEP 440: a release candidate comes before 0.12.0
    ("0.12.1rc1", ">=0.12", True),
    ("0.5.4", ">=0.6.3", False),
    (None, ">=99", True),
    ("0.8.5-corex-custom", "<0.9", True),  # not PEP 440: cut to 0.8.5
    ("corex", ">=99", True),               # unreadable: unknown
])
def test_version_in(version, spec, expected):
    assert version_in(version, SpecifierSet(spec)) is expected


def test_normalize_ignores_layout_and_comments():
    assert normalize_expr("self.x") == normalize_expr("(\n  self.x  # why\n)")
    assert normalize_expr("True") != normalize_expr("'True'")


def test_dotted_name():
    assert dotted_name(cst.parse_expression("a.b.C")) == "a.b.C"
    assert dotted_name(cst.parse_expression("f().C")) is None


def test_walk_scope():
    module = cst.parse_module(
        "def f():\n    x = 1\n"
        "class A:\n    y = 2\n    def g(self):\n        z = 3\n"
        "    if T:\n        def g(self):\n            w = 4\n")
    names = lambda scope, exact=False: sorted(
        n.value for n, _ in walk(module, scope, exact) if isinstance(n, cst.Name))
    assert names(()) == ["A", "T", "f", "g", "g", "self", "self", "w", "x", "y", "z"]
    # a scope's own header (name, parameters, bases) is inside it
    assert names(("A",)) == ["A", "T", "g", "g", "self", "self", "w", "y", "z"]
    assert names(("A", "g")) == ["g", "g", "self", "self", "w", "z"]
    found = [n for n, _ in walk(module, ("A", "g"), exact=True)]
    assert [type(n).__name__ for n in found] == ["FunctionDef", "FunctionDef"]
    assert names(("B",)) == []


def test_replace_nodes_rebuilds_only_ancestors():
    module = cst.parse_module("class A:\n    x = f(1)\n\nclass B:\n    y = 2\n")
    targets = [(list(path), node) for node, path in walk(module)
               if isinstance(node, cst.Integer) and node.value == "1"]
    (path, old), = targets
    new = replace_nodes(module, [(path, old, cst.Integer("9"))])
    assert new.code == "class A:\n    x = f(9)\n\nclass B:\n    y = 2\n"
    assert new.body[1] is module.body[1]


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
