"""lint/checks/reader.py: one statement reader, two policies (config-class checks, nested post-inits)."""

from __future__ import annotations

import ast
import textwrap

from patchops.lint.checks import ir
from patchops.lint.checks.reader import Policy, Reader

CONFIG = Policy(conditional=True, max_inline=3)


def methods(code: str):
    tree = ast.parse(textwrap.dedent(code))
    return {fn.name: fn for fn in tree.body if isinstance(fn, ast.FunctionDef)}


def read(policy: Policy, code: str, entry: str = "__post_init__"):
    found = methods(code)
    return Reader(policy, found, found[entry]).read(found[entry].body)


SWITCHED = """
def __post_init__(self):
    if self.enable:
        if self.size > 4:
            raise ValueError("too big")
"""


def test_a_conditional_policy_reads_a_guard_under_its_switch():
    items = read(CONFIG, SWITCHED)
    assert [type(i) for i in items] == [ir.Guard]
    assert ir.to_json(items[0].cond) == ir.to_json(ir.Logic("and", (ir.Name("field", "enable"),
                                                                     ir.parse(["cmp", ">", ["field", "size"], ["const", 4]]))))


def test_a_top_level_policy_forgets_what_sits_under_a_switch():
    items = read(Policy(conditional=False, fields=frozenset({"enable", "size"})), SWITCHED)
    assert not any(isinstance(i, (ir.Guard, ir.FieldGuard)) for i in items)


INLINED = """
def __post_init__(self):
    self._check()

def _check(self):
    if self.size < 0:
        raise ValueError("negative")
"""


def test_self_method_calls_are_read_in_place_only_within_max_inline():
    assert [type(i) for i in read(CONFIG, INLINED)] == [ir.Guard]
    assert not any(isinstance(i, ir.Guard) for i in read(Policy(conditional=True, max_inline=0), INLINED))


def test_a_top_level_guard_on_no_field_of_the_policy_is_dropped():
    code = """
    def __post_init__(self):
        if len(self.ops) > 1:
            raise ValueError("one op")
    """
    items = read(Policy(conditional=False, fields=frozenset({"ops"})), code)
    assert [(type(i), i.fields) for i in items] == [(ir.FieldGuard, ("ops",))]
    assert read(Policy(conditional=False, fields=frozenset({"other"})), code) == []


def test_builds_are_noted_only_for_the_policy_classes():
    code = """
    def __post_init__(self):
        lora = LoRAConfig(max_loras=self.max_loras)
    """
    built = read(Policy(conditional=True, builds=frozenset({"LoRAConfig"})), code)
    assert [(type(i), getattr(i, "config_class", None)) for i in built] == [(ir.Build, "LoRAConfig"), (ir.Assign, None)]
    assert [type(i) for i in read(CONFIG, code)] == [ir.Assign]
