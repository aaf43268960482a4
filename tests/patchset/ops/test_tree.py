"""Tree helpers ops share: dotted names, the scoped walk, node replacement."""

from __future__ import annotations

import libcst as cst

from patchops.patchset.ops.tree import dotted_name, replace_nodes, walk


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
