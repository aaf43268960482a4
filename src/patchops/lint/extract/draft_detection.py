"""How `SpeculativeConfig.__post_init__` names the method of a draft model, read with `ast`.

0.10-0.12 decide the method from the draft model whenever the user's method is not one the
chain keeps (eagle, eagle3): a name fragment (`"eagle-" in model.lower()`), else the draft's
`hf_config.model_type` (medusa, mlp_speculator, the MTP types); any other draft is a plain
draft model, which these releases refuse ("Speculative decoding with draft model is not
supported yet"), so `method: medusa` with a Llama draft is refused. 0.8.5-0.9.2 end the chain
by choosing "draft_model" without raising: no fact.

`draft_detection` returns {"branches": [[kind, values, method], ...], "rewritten": [...]}, the
chain in order (kind "keep": methods left as given; "name": fragments of the lower-cased model
name; "model_type": draft model types), and the model types and architectures
`hf_config_override` rewrites before the chain sees them (a DeepSeek-V3 draft becomes
deepseek_mtp). None when the copy has no such chain or a test in it does not read as one of
these kinds: a rule then cannot tell, and says nothing.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from patchops.lint.extract.source_tree import Module
from patchops.lint.extract.static_eval import UNRESOLVED, Classes

DRAFT_UNSUPPORTED = "Speculative decoding with draft model is not supported yet"


def draft_detection(classes: Classes, mod: Module, cls: ast.ClassDef) -> Optional[Dict[str, Any]]:
    methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
    post = methods.get("__post_init__")
    if post is None:
        return None
    for node in ast.walk(post):
        if isinstance(node, ast.If) and _ends_in_refusal(node):
            branches = _branches(node, classes, mod, cls)
            if branches is None:
                return None
            override = methods.get("hf_config_override")
            return {"branches": branches, "rewritten": sorted(_compared_strings(override)) if override else []}
    return None


def _chain(head: ast.If) -> List[ast.If]:
    links = [head]
    while len(links[-1].orelse) == 1 and isinstance(links[-1].orelse[0], ast.If):
        links.append(links[-1].orelse[0])
    return links


def _ends_in_refusal(head: ast.If) -> bool:
    last = _chain(head)[-1].orelse
    return any(isinstance(stmt, ast.Raise) and DRAFT_UNSUPPORTED in _joined(stmt.exc) for stmt in last)


def _joined(expr: Optional[ast.AST]) -> str:
    return "".join(n.value for n in ast.walk(expr) if isinstance(n, ast.Constant)
                   and isinstance(n.value, str)) if expr is not None else ""


def _branches(head: ast.If, classes: Classes, mod: Module, cls: ast.ClassDef) -> Optional[List[list]]:
    out = []
    for link in _chain(head):
        kind_values = _test(link.test, classes, mod, cls)
        if kind_values is None:
            return None
        kind, values = kind_values
        method = next((stmt.value.value for stmt in link.body if isinstance(stmt, ast.Assign)
                       and _is_self_attr(stmt.targets[0], "method") and isinstance(stmt.value, ast.Constant)), None)
        out.append([kind, values, method])
    return out


def _test(test: ast.AST, classes: Classes, mod: Module, cls: ast.ClassDef) -> Optional[tuple]:
    """Return (kind, values) for one test of the chain, None when it reads as none of them."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        parts = [_test(v, classes, mod, cls) for v in test.values]
        if any(p is None for p in parts) or len({p[0] for p in parts}) != 1:
            return None
        return parts[0][0], [v for p in parts for v in p[1]]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, ast.In) and isinstance(left, ast.Constant) and isinstance(left.value, str) \
            and _mentions(right, "model") and "lower" in ast.dump(right):
        return "name", [left.value]
    values = _strings(classes.evaluate(right, mod, cls)) if isinstance(op, (ast.In, ast.Eq)) else None
    if values is None:
        return None
    if isinstance(op, ast.Eq) and len(values) != 1:
        return None
    if _is_self_attr(left, "method"):
        return "keep", values
    if isinstance(left, ast.Attribute) and left.attr == "model_type" and _mentions(left, "draft_model_config"):
        return "model_type", values
    return None


def _strings(value: Any) -> Optional[List[str]]:
    """A str (`in ("longcat_flash_mtp")` is a substring test: read as that one name) or a collection."""
    if value is UNRESOLVED:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    return None


def _is_self_attr(expr: ast.AST, attr: str) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == attr and isinstance(expr.value, ast.Name) \
        and expr.value.id == "self"


def _mentions(expr: ast.AST, attr: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attr for n in ast.walk(expr))


def _compared_strings(fn: ast.FunctionDef) -> set:
    """The strings hf_config_override compares anything with (the model types it rewrites)."""
    return {c.value for node in ast.walk(fn) if isinstance(node, ast.Compare)
            for side in [node.left, *node.comparators] for c in ast.walk(side)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)}
