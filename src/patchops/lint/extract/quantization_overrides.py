"""Which override claims a quantized checkpoint, and what it needs then, read with `ast`.

Without `--quantization`, `ModelConfig._verify_quantization` asks each method of its
`overrides` list in order (marlin, bitblas, gptq_marlin_24, gptq_marlin, gptq_bitblas, ...)
whether it claims the checkpoint; the first that does runs. A claim is one of two kinds:
a serialized format (`checkpoint_format == "marlin"`, `is_marlin_format`), or a conversion
a compatibility classmethod allows (`is_gptq_bitblas_compatible`: the checkpoint's keys, its
(bits, sym) in `TYPE_MAP`, its group size in the kernel's supported list). A class whose
`__init__` imports a package inside try/except and raises (GPTQBitBLASConfig: bitblas) then
fails when the package is missing, unless the claim path imported it first and said no
(0.9+ `_check_bitblas_supported`).
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Set, Tuple

from patchops.lint.extract.model_registry import MODEL_CONFIG_FILES  # where _verify_quantization lives too
from patchops.lint.extract.source_tree import Module, Source

WALK_DEPTH = 4  # calls followed from the compatibility check (check_x_supported -> _check_x_supported -> ...)


def override_order(src: Source) -> List[str]:
    """Return `_verify_quantization`'s `overrides` list, in order of preference ([] if unread)."""
    for rel in MODEL_CONFIG_FILES:
        mod = src.module_file(rel)
        for fn in ast.walk(mod.tree) if mod is not None else ():
            if isinstance(fn, ast.FunctionDef) and fn.name == "_verify_quantization":
                for node in ast.walk(fn):
                    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "overrides"
                                                            for t in node.targets) \
                            and isinstance(node.value, ast.List):
                        return [e.value for e in node.value.elts
                                if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def override_claim(src: Source, mod: Module, cls: ast.ClassDef) -> Dict[str, Any]:
    """Return what a class's own `override_quantization_method` claims and what it needs then.

    {"claims_format": {"checkpoint_format": "marlin", "is_marlin_format": True}} for a
    serialized format; {"converts": {"keys": [...], "bits_sym": [[4, True]], "group_sizes": [...],
    "quant_method": "gptq"}} for a conversion (keys absent where the check reads none);
    {"needs_package": {"name": "bitblas", "min_version": "0.1.0", "checked_first": False}} when
    `__init__` raises on a failed import; "checked_first" says whether the claim path imports
    that package before it claims (and so says no when it is missing).
    """
    fn = _method(cls, "override_quantization_method")
    if fn is None or len(fn.args.args) < 2:
        return {}
    out: Dict[str, Any] = {}
    formats = _format_markers(fn, fn.args.args[1].arg)
    if formats:
        out["claims_format"] = formats
    compat = next((_method(cls, n.func.attr) for n in ast.walk(fn) if isinstance(n, ast.Call)
                   and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                   and n.func.value.id == "cls" and _method(cls, n.func.attr) is not None), None)
    walked: Tuple[Set[str], List[Any]] = (set(), [])
    if compat is not None:
        converts = _conversion(src, mod, cls, compat, walked)
        if "keys" in converts:  # a check that reads no checkpoint key is not one this reader follows
            out["converts"] = converts
    package = _init_package(src, mod, cls)
    if package:
        out["needs_package"] = dict(package, checked_first=package["name"] in walked[0])
    return out


def _method(cls: ast.ClassDef, name: str) -> Optional[ast.FunctionDef]:
    return next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _gets(node: ast.AST, owner: Optional[str] = None) -> List[Tuple[ast.Call, str]]:
    """The `x.get("key", ...)` calls under `node` (on `owner` when given), with their key."""
    return [(n, n.args[0].value) for n in ast.walk(node) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args
            and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)
            and (owner is None or isinstance(n.func.value, ast.Name) and n.func.value.id == owner)]


def _format_markers(fn: ast.FunctionDef, hf_cfg: str) -> Dict[str, Any]:
    """`cfg.get("checkpoint_format") == "marlin"` -> "marlin"; `... or cfg.get("is_marlin_format", False)` -> True.

    A key read any other way (`cfg.get("quant_method", "").lower()`, then compared with what the
    platform allows: IPEX) is no format marker.
    """
    marked = {id(n.left): n.comparators[0].value for n in ast.walk(fn) if isinstance(n, ast.Compare)
              and isinstance(n.ops[0], ast.Eq) and isinstance(n.comparators[0], ast.Constant)}
    marked.update({id(v): True for n in ast.walk(fn) if isinstance(n, ast.BoolOp) for v in n.values})
    return {key: marked[id(call)] for call, key in _gets(fn, hf_cfg) if id(call) in marked}


def _conversion(src: Source, mod: Module, cls: ast.ClassDef, compat: ast.FunctionDef,
                walked: Tuple[Set[str], List[Any]]) -> Dict[str, Any]:
    """Read a compatibility classmethod: the keys it needs, TYPE_MAP's keys, the group sizes."""
    out: Dict[str, Any] = {}
    keys = [key for _, key in _gets(compat) if key != "quant_method"]
    if keys:
        out["keys"] = keys
    method = next((n.comparators[0].value for n in ast.walk(compat) if isinstance(n, ast.Compare)
                   and isinstance(n.ops[0], ast.NotEq) and isinstance(n.left, ast.Name)
                   and n.left.id == "quant_method" and isinstance(n.comparators[0], ast.Constant)), None)
    if isinstance(method, str):
        out["quant_method"] = method
    table = next((s.value for s in cls.body if isinstance(s, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "TYPE_MAP" for t in s.targets)), None)
    if isinstance(table, ast.Dict) and all(isinstance(k, ast.Tuple) for k in table.keys):
        out["bits_sym"] = [[e.value for e in k.elts] for k in table.keys]
    _walk(src, mod, compat, 0, walked)
    if walked[1]:
        out["group_sizes"] = walked[1]
    return out


def _walk(src: Source, mod: Module, fn: ast.FunctionDef, depth: int, walked: Tuple[Set[str], List[Any]]) -> None:
    """Follow calls into vLLM functions: note each `import x` and a `group_size not in LIST`."""
    imported, group_sizes = walked
    for node in ast.walk(fn):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.NotIn) and not group_sizes \
                and isinstance(node.left, ast.Name) and node.left.id == "group_size":
            found = src.entity(node.comparators[0], mod)
            if found and found[0] == "value":
                try:
                    group_sizes.extend(ast.literal_eval(found[2]))  # [-1, 32, 64, 128]
                except (ValueError, TypeError, SyntaxError):
                    pass
        elif isinstance(node, ast.Call) and depth < WALK_DEPTH and isinstance(node.func, ast.Name):
            found = src.resolve(mod, node.func.id)
            if found and found[0] == "func" and found[2] is not fn:
                _walk(src, found[1], found[2], depth + 1, walked)


def _init_package(src: Source, mod: Module, cls: ast.ClassDef) -> Dict[str, Any]:
    """The package `__init__` imports in a `try` whose ImportError handler raises (bitblas).

    Also the least version the raise asks for, where it names a string constant
    (`pip install bitblas>={MINIMUM_BITBLAS_VERSION}`: "0.1.0").
    """
    init = _method(cls, "__init__")
    for node in ast.walk(init) if init is not None else ():
        if not isinstance(node, ast.Try):
            continue
        raising = [h for h in node.handlers if "ImportError" in ast.dump(h.type or ast.Name(""))
                   and any(isinstance(s, ast.Raise) for s in ast.walk(h))]
        name = next((stmt.names[0].name.split(".")[0] for stmt in node.body if isinstance(stmt, ast.Import)), None)
        if not raising or name is None:
            continue
        out: Dict[str, Any] = {"name": name}
        for value in (n.value for h in raising for n in ast.walk(h) if isinstance(n, ast.FormattedValue)):
            found = src.entity(value, mod) if isinstance(value, ast.Name) else None
            if found and found[0] == "value" and isinstance(found[2], ast.Constant) and isinstance(found[2].value, str):
                out["min_version"] = found[2].value
        return out
    return {}
