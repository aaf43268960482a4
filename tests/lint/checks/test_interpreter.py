"""The expression reader (lint/extract/expressions) and the interpreter of its records (lint/checks).

Each construct is read from Python source and evaluated three ways: to a true value, to a
false one, and to UNKNOWN when a name it needs is unknown. Where every name is known, the
answer is checked against Python's own `eval` of the same source.
"""

from __future__ import annotations

import ast

import pytest

from patchops.lint.checks import interpreter, ir
from patchops.lint.checks.interpreter import UNKNOWN, Scope, truth
from patchops.lint.extract.expressions import Context, expression, message

U = UNKNOWN
UNREAD = ["unknown"]


def read(src: str, ctx: Context = Context()) -> list:
    """Return the expression as the facts hold it."""
    return ir.to_json(expression(ast.parse(src, mode="eval").body, ctx))


def value(expr: list, scope: Scope):
    """Evaluate the JSON the reader wrote, parsed as lint loads it from the facts."""
    return interpreter.value(ir.parse(expr), scope)


def truth_of(expr: list, scope: Scope):
    return interpreter.truth_of(ir.parse(expr), scope)


def run(src: str, ctx: Context = Context(), **names):
    """Evaluate `src` with `names` as locals (U for an unknown one)."""
    return value(read(src, ctx), Scope({f"local:{k}": v for k, v in names.items()}))


# (source, names, expected): every name known, so Python's eval must agree.
KNOWN = [
    # and / or return the deciding operand, as Python does
    ("a and b", {"a": 3, "b": 0}, 0),
    ("a and b", {"a": 3, "b": "x"}, "x"),
    ("a and b", {"a": [], "b": 1}, []),
    ("a or b", {"a": 0, "b": ""}, ""),
    ("a or b", {"a": 0, "b": 7}, 7),
    ("a or b", {"a": "s", "b": 7}, "s"),
    ("not a", {"a": 0}, True),
    ("not a", {"a": [1]}, False),
    ("b if a else c", {"a": 1, "b": "yes", "c": "no"}, "yes"),
    ("b if a else c", {"a": 0, "b": "yes", "c": "no"}, "no"),
    # comparisons, chained as an `and` of their links
    ("a < b", {"a": 1, "b": 2}, True),
    ("a < b", {"a": 2, "b": 2}, False),
    ("a <= b", {"a": 2, "b": 2}, True),
    ("a > b", {"a": 2, "b": 2}, False),
    ("a >= b", {"a": 2, "b": 2}, True),
    ("a == b", {"a": "x", "b": "x"}, True),
    ("a != b", {"a": "x", "b": "x"}, False),
    ("a is None", {"a": None}, True),
    ("a is not None", {"a": None}, False),
    ("a in (1, 2)", {"a": 2}, True),
    ("a not in [1, 2]", {"a": 2}, False),
    ("a in {'x', 'y'}", {"a": "z"}, False),
    ("1 <= a <= b", {"a": 2, "b": 3}, True),
    ("1 <= a <= b", {"a": 4, "b": 3}, False),
    # arithmetic and bits
    ("a + b", {"a": 2, "b": 3}, 5),
    ("a + b", {"a": [1], "b": [2]}, [1, 2]),
    ("a - b", {"a": 2, "b": 3}, -1),
    ("a * b", {"a": 2, "b": 3}, 6),
    ("a // b", {"a": 7, "b": 2}, 3),
    ("a % b", {"a": 7, "b": 2}, 1),
    ("a & b", {"a": {1, 2}, "b": {2, 3}}, {2}),
    ("a | b", {"a": {1}, "b": {2}}, {1, 2}),
    ("a ^ b", {"a": 6, "b": 3}, 5),
    ("-a", {"a": 4}, -4),
    # subscripts, containers, a mapping's key
    ("a[0]", {"a": "+op"}, "+"),
    ("a[1:]", {"a": "+op"}, "op"),
    ("a[:2]", {"a": [1, 2, 3]}, [1, 2]),
    ("(a, 1)", {"a": 2}, (2, 1)),
    ("[a, 1]", {"a": 2}, [2, 1]),
    ("{a, 1}", {"a": 2}, {1, 2}),
    # builtins and methods the reader calls pure
    ("len(a)", {"a": [1, 2]}, 2),
    ("sorted(a)", {"a": [2, 1]}, [1, 2]),
    ("any(a)", {"a": [0, 1]}, True),
    ("all(a)", {"a": [0, 1]}, False),
    ("min(a, b)", {"a": 2, "b": 1}, 1),
    ("max(a, b)", {"a": 2, "b": 1}, 2),
    ("sum(a)", {"a": [2, 1]}, 3),
    ("set(a)", {"a": [1, 1]}, {1}),
    ("list(a)", {"a": (1,)}, [1]),
    ("tuple(a)", {"a": [1]}, (1,)),
    ("a.startswith('+')", {"a": "+op"}, True),
    ("a.startswith('+')", {"a": "op"}, False),
    ("a.count('none')", {"a": ["none", "all", "none"]}, 2),
    ("', '.join(a)", {"a": ["x", "y"]}, "x, y"),
    ("a.split(',')", {"a": "x,y"}, ["x", "y"]),
    ("isinstance(a, str)", {"a": "x"}, True),
    ("isinstance(a, (int, float))", {"a": "x"}, False),
    ("isinstance(a, type)", {"a": "x"}, False),
    # comprehensions
    ("[op for op in a if op in ('all', 'none')]", {"a": ["all", "+x", "none"]}, ["all", "none"]),
    ("[op for op in a if op in ('all', 'none')]", {"a": ["+x"]}, []),
    ("{op[1:] for op in a if op.startswith('-')}", {"a": ["-x", "+y", "-x"]}, {"x"}),
    ("any(s <= 0 for s in a)", {"a": [1, 0]}, True),
    ("any(s <= 0 for s in a)", {"a": [1, 2]}, False),
]


@pytest.mark.parametrize("src, names, expected", KNOWN)
def test_a_known_expression_is_what_python_says(src, names, expected):
    assert eval(src, {}, dict(names)) == expected      # the table itself is Python's answer
    got = run(src, **names)
    assert got == expected and type(got) is type(expected)


# (source, names, expected) with an unknown name: unknown unless the rest decides.
UNSURE = [
    ("a and b", {"a": U, "b": 1}, U),
    ("a and b", {"a": 1, "b": U}, U),
    ("a and b", {"a": 0, "b": U}, 0),            # decided before the unknown: the operand
    ("a and b", {"a": U, "b": 0}, False),        # decided after it: the truth only
    ("a or b", {"a": U, "b": 0}, U),
    ("a or b", {"a": 5, "b": U}, 5),
    ("a or b", {"a": U, "b": 5}, True),
    ("not a", {"a": U}, U),
    ("b if a else c", {"a": U, "b": 1, "c": 1}, U),
    ("b if a else c", {"a": 1, "b": 2, "c": U}, 2),   # only the branch taken counts
    ("b if a else c", {"a": 0, "b": U, "c": 3}, 3),
    ("a < 1", {"a": U}, U),
    ("a in ()", {"a": U}, False),                 # nothing is in an empty container
    ("a not in []", {"a": U}, True),
    ("a in (1,)", {"a": U}, U),
    ("a + 1", {"a": U}, U),
    ("-a", {"a": U}, U),
    ("a[0]", {"a": U}, U),
    ("a[0:1]", {"a": U}, U),
    ("(a, 1)", {"a": U}, U),
    ("len(a)", {"a": U}, U),
    ("a.startswith('+')", {"a": U}, U),
    ("isinstance(a, str)", {"a": U}, U),
    ("[x for x in a]", {"a": U}, U),
    ("[x for x in a]", {"a": [1, U]}, U),
    ("[x for x in a if x > b]", {"a": [1], "b": U}, U),
    ("any(s <= 0 for s in a)", {"a": U}, U),
    ("[x for x in a] or b", {"a": U, "b": 1}, True),   # unknown there, not a raise
    ("[x for x in a]", {"a": "ab"}, U),                # a string may be a list to vLLM
    ("[x for x in a]", {"a": 3}, U),
]


@pytest.mark.parametrize("src, names, expected", UNSURE)
def test_an_unknown_stays_unknown_unless_the_rest_decides(src, names, expected):
    got = run(src, **names)
    assert got is expected if expected is U else (got == expected and type(got) is type(expected))


@pytest.mark.parametrize("src, names", [
    ("a < 1", {"a": None}),                       # TypeError
    ("(a < 1) or True", {"a": None}),             # raises before `or` decides, as in Python
    ("a[3]", {"a": [1]}),                          # IndexError
    ("a // b", {"a": 1, "b": 0}),                  # ZeroDivisionError
    ("a.get('k')", {"a": 3}),                      # no method of an int
    ("a * 3", {"a": "ab"}),                        # a user's string is never repeated
    ("a * 3", {"a": [1]}),
])
def test_what_python_would_raise_on_or_lint_will_not_compute_is_unknown(src, names):
    assert run(src, **names) is U


def test_only_a_method_the_reader_named_pure_runs():
    items = [1]
    assert value(["method", ["local", "a"], "append", [["const", 2]]], Scope({"local:a": items})) is U
    assert items == [1]
    assert value(["method", ["local", "a"], "index", [["const", 1]]], Scope({"local:a": items})) == 0


def test_and_stops_where_python_stops():
    # `a[0]` of an empty list would raise; `and` never evaluates it
    assert run("len(a) > 0 and a[0] == 'x'", a=[]) is False
    assert run("len(a) == 0 or a[0] == 'x'", a=[]) is True
    assert run("a[0] if a else None", a=[]) is None


def test_names_come_from_the_scope_by_kind():
    ctx = Context(params={"parallel_config": "ParallelConfig"}, init_params=frozenset({"p"}),
                  model_of=frozenset({"model_config"}))
    src = "(self.x, parallel_config.tp, envs.VLLM_X, p, model_config.is_moe, current_platform.is_cuda())"
    expr = read(src, ctx)
    assert expr == ["tuple", [["field", "x"], ["other", "ParallelConfig", "tp"], ["env", "VLLM_X"], ["param", "p"],
                              ["model", "is_moe"], ["host", "is_cuda"]]]
    keys = {"field:x": 1, "other:ParallelConfig:tp": 2, "env:VLLM_X": 3, "param:p": 4, "model:is_moe": 5,
            "host:is_cuda": 6}
    assert value(expr, Scope(keys)) == (1, 2, 3, 4, 5, 6)
    for key in keys:
        assert value(expr, Scope(dict(keys, **{key: U}))) is U


def test_a_key_of_a_mapping_and_hasattr():
    ctx = Context()
    assert value(read("self.c.backend", ctx), Scope({"field:c": {"backend": "x"}})) == "x"
    assert value(read("self.c.backend", ctx), Scope({"field:c": {}})) is U       # the class's default
    assert value(read("self.c.backend", ctx), Scope({"field:c": "x"})) is U
    assert value(read("hasattr(self, 'x')", ctx), Scope({"field:x": 0})) is True
    assert value(read("hasattr(self, 'x')", ctx), Scope()) is U
    assert value(read("getattr(self, 'x', 1)", ctx), Scope({"field:x": 0})) == 0


def test_a_loop_of_guards_binds_the_item_that_decides():
    expr = ["any", "m", ["local", "ms"], ["cmp", "not in", ["local", "m"], ["tuple", [["const", "a"]]]]]
    scope = Scope({"local:ms": ["a", "b", "c"]})
    assert value(expr, scope) is True and scope.get("local:m") == "b"
    scope = Scope({"local:ms": ["a"], "local:m": "b"})
    assert value(expr, scope) is False and scope.get("local:m") is U
    assert value(expr, Scope({"local:ms": ["a", U]})) is U
    assert value(expr, Scope({"local:ms": U})) is U
    assert value(expr, Scope({"local:ms": "abc"})) is U


def test_the_context_says_which_names_are_read():
    nested = Context(fields=frozenset({"custom_ops"}), locals=frozenset({"count"}))
    assert read("self.custom_ops", nested) == ["field", "custom_ops"]
    assert read("self.other", nested) == UNREAD
    assert read("getattr(self, 'other', 1)", nested) == UNREAD
    assert read("count", nested) == ["local", "count"]
    assert read("something", nested) == UNREAD
    assert read("[op for op in self.custom_ops]", nested)[-1] == ["local", "op"]   # its own variable
    engine = Context(self_kind="dest", locals=frozenset())
    assert read("self.enable_lora", engine) == ["dest", "enable_lora"]
    assert read("x.y", engine) == UNREAD        # over an unknown owner: unknown
    assert read("f(1)", Context()) == UNREAD    # no call that is not pure
    outside = Context(contents=False)          # a JSON value pydantic has not checked yet
    for src in ("a[0]", "a[1:]", "[x for x in a]", "len(a)", "a.count('x')"):
        assert read(src, Context()) != UNREAD and read(src, outside) == UNREAD, src
    assert read("isinstance(a, str) and a == 'x'", outside) == read("isinstance(a, str) and a == 'x'", Context())
    assert read("a.append(1)", Context()) == UNREAD


def test_a_one_line_property_is_read_in_place_and_a_module_constant_as_its_literal():
    prop = ast.parse("self.a > 1", mode="eval").body
    ctx = Context(properties={"big": prop}, constants={"ALLOWED": ("x", "y")})
    assert read("self.big", ctx) == ["cmp", ">", ["field", "a"], ["const", 1]]
    assert read("ALLOWED", ctx) == ["tuple", [["const", "x"], ["const", "y"]]]


def test_truth_is_three_valued():
    assert truth(0) is False and truth([1]) is True and truth(U) is U
    assert truth_of(["const", ""], Scope()) is False and truth_of(["unknown"], Scope()) is U


def test_a_message_renders_as_vllm_prints_it():
    node = ast.parse("f'{self.x!r} and {self.y} ({self.z:>4})'", mode="eval").body
    pieces = message(node, Context())
    assert interpreter.render(pieces, Scope({"field:x": "a", "field:y": "b", "field:z": 1})) == "'a' and b (…)"
    assert interpreter.render(pieces, Scope({"field:y": "b"})) == "… and b (…)"
    assert ir.parse_message(ir.message_json(pieces)) == pieces
