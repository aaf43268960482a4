"""The checks a nested config class runs on its own fields' values, read with `ast`.

`--compilation-config '{"custom_ops": ["all", "none"]}'` is refused at parse time by the
class's own post-init, in a different shape per release: `assert count_none + count_all <= 1`
over `self.custom_ops.count("none")` (0.8.5 `model_post_init`, 0.10 `__post_init__`); a loop
`for op in self.custom_ops: if op not in {"all", "none"} and (len(op) < 2 or op[0] not in
{"+", "-"}): raise` (0.11+), a comprehension `len([op for op in ... if op in {...}]) > 1` and
a set intersection of `op[1:]` (0.32 has all of them but the assert). Those are expressions over the JSON value the user wrote, so
this module reads the post-init of each nested config that EngineArgs builds at parse time
(its field is annotated with the class) into a flat program lint runs on that value:

* `ir.Let(name, expr)`: a local set at the method's top level;
* `ir.FieldGuard(test, message, exception, fields)`: `if test: raise E(message)`, or `assert
  t, m` (a guard on `not t`); `fields` are the class's fields it reads (through the lets);
* `ir.Each(var, iterable, test, message, exception, fields)`: `for var in it: if test: raise`;
* `ir.MaybeAdd(field, value)`: `if ...: self.f.append(const)` (the condition is not read: lint
  runs the checks with and without it, and counts a refusal only when both refuse);
* `ir.Forget(name)`: anything else that changes a field or local.

The statements are read by lint/checks/reader.py (shared with guard_programs) under a policy
where `self.x` is a field only for the class's own fields and only the names set here are locals. What cannot be
read is `ir.UNKNOWN`: it can hide a check, never invent one. Cross-field checks against other
configs stay with guard_programs.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Set, Tuple

from patchops.lint.checks import ir
from patchops.lint.checks.reader import Policy, Reader
from patchops.lint.extract.source_tree import Module, last_name
from patchops.lint.extract.static_eval import UNRESOLVED, Classes

ENTRY_METHODS = ("model_post_init", "__post_init__")


def parse_time_classes(classes: Classes, engine: Optional[Tuple[Module, ast.ClassDef]],
                       names: Set[str]) -> Set[str]:
    """Return the classes among `names` an EngineArgs field is annotated with (built at parse)."""
    out: Set[str] = set()
    if engine is None:
        return out
    for info in classes.fields(*engine).values():
        for node in ast.walk(info.annotation):
            if isinstance(node, (ast.Name, ast.Attribute)) and last_name(node) in names:
                out.add(last_name(node))
    return out


def value_checks(classes: Classes, mod: Module, cls: ast.ClassDef) -> Dict[str, Any]:
    """Return {"program": [...], "defaults": {field: literal}} of one class, or {} without checks."""
    fields = set(classes.fields(mod, cls))
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    reader = Reader(Policy(conditional=False, fields=frozenset(fields)), methods)
    for name in ENTRY_METHODS:
        if name in methods:
            reader.read(methods[name].body)
    checks = [i for i, item in enumerate(reader.items) if isinstance(item, (ir.FieldGuard, ir.Each))]
    if not checks:
        return {}
    program: List[ir.NestedStatement] = []
    for item in reader.items[:checks[-1] + 1]:      # what follows the last check changes nothing
        if item not in program or not isinstance(item, (ir.Forget, ir.MaybeAdd)):
            program.append(item)
    read = {f for item in program if isinstance(item, (ir.FieldGuard, ir.Each)) for f in item.fields}
    defaults = {}
    for name in sorted(read):
        value = classes.field_default(mod, cls, name)
        if value is not UNRESOLVED and _plain(value):
            defaults[name] = value
    return {"program": ir.nested_json(tuple(program)), "defaults": defaults, "validated": sorted(read & _validated(cls))}


def _validated(cls: ast.ClassDef) -> Set[str]:
    """Return the fields a `field_validator` converts first: their post-init value is not the JSON."""
    return {a.value for stmt in cls.body if isinstance(stmt, ast.FunctionDef)
            for deco in stmt.decorator_list
            if isinstance(deco, ast.Call) and last_name(deco.func) == "field_validator"
            for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}


def _plain(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, float, str))
