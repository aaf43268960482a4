"""The op registry: names, files, docs, and every op's own examples."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import patchops.patchset.ops as ops_pkg
from patchops.patchset.ops import ALL_OPS, OPS
from rewrite_assert import assert_rewrite

EXAMPLES = [(op, i, ex) for op in ALL_OPS for i, ex in enumerate(op.EXAMPLES)]


def test_names_unique_sorted_kebab_and_matching_their_file():
    names = [op.name for op in ALL_OPS]
    assert names == sorted(set(names))
    assert list(OPS) == names
    folder = Path(ops_pkg.__file__).parent
    for op in ALL_OPS:
        assert re.match(r"^[a-z]+(-[a-z]+)*$", op.name)
        module = op.__module__.rsplit(".", 1)[1]
        assert module == op.name.replace("-", "_"), op
        assert (folder / f"{module}.py").is_file()
        assert op.__name__ == "".join(part.title() for part in op.name.split("-"))
    listed = {p.stem for p in folder.glob("*.py")} - {"__init__", "base", "positions", "tree"}  # not ops
    assert listed == {op.name.replace("-", "_") for op in ALL_OPS}, "an op module is not registered"


def test_every_op_documents_itself_and_its_parameters():
    for op in ALL_OPS:
        assert op.__doc__ and op.__doc__.strip().splitlines()[0].endswith(".")
        fields = [f.name for f in op.param_fields()]
        assert fields[:2] == ["file", "sites"] and fields[-1] == "vllm", op
        for f in op.param_fields():
            assert f.metadata["doc"], (op, f.name)


def test_every_op_but_the_escape_hatch_has_examples():
    assert {op for op, _, _ in EXAMPLES} == set(ALL_OPS) - {OPS["transformer"]}


@pytest.mark.parametrize("op_cls, index, example", EXAMPLES,
                         ids=[f"{op.name}-{i}" for op, i, _ in EXAMPLES])
def test_examples(op_cls, index, example):
    op = op_cls(**example.params)
    assert_rewrite(op, before=example.before, after=example.after)


def test_importing_ops_and_patchsets_does_not_import_libcst():
    code = textwrap.dedent("""
        import sys
        import patchops.patchset.ops, patchops.patchset.model
        patchops.patchset.model.find_patchsets()
        bad = sorted(m for m in sys.modules if m == "libcst" or m.startswith("libcst."))
        print(bad)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ops_are_hashable_values():
    op = OPS["set-keyword"](file="a.py", sites=1, callee="C", keyword="k", value="1", pristine=["2"])
    same = OPS["set-keyword"](file="a.py", sites="1", callee="C", keyword="k", value="1", pristine=("2",))
    assert op == same and hash(op) == hash(same)
    assert op.pristine == ("2",)
