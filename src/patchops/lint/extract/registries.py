"""Names a vLLM copy registers for its tool-call and reasoning parsers, read with `ast`.

vLLM fills these registries at import time, so argparse cannot list them: the serve front end
checks the name after parsing (`validate_parsed_serve_args`, `api_server.py`) or when the
parser is built. Two registration styles exist across releases, both read here:

* a decorator on the parser class, `@ToolParserManager.register_module("hermes")` (also a list
  of names, or `name=`/`module=` keywords), 0.6.3 - 0.2x;
* a table of lazily imported parsers, `_TOOL_PARSERS_TO_REGISTER = {"hermes": (file, cls)}`
  with `register_lazy_module("name", ...)` calls beside it (0.3x).

One more name list a config class checks after parsing is read here too: the quantization
methods (`QUANTIZATION_METHODS`, a dict 0.6.3, `list(get_args(QuantizationMethods))` 0.8+)
with the deprecated ones (`DEPRECATED_QUANTIZATION_METHODS`, 0.20+).
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Tuple

from patchops.lint.extract.source_tree import Source

# Where each registry's parsers live, across releases (site-relative package folders).
REGISTRY_PACKAGES: Dict[str, Tuple[str, ...]] = {
    "tool_call_parser": ("vllm/entrypoints/openai/tool_parsers", "vllm/tool_parsers"),
    "reasoning_parser": ("vllm/entrypoints/openai/reasoning_parsers", "vllm/reasoning"),
}
# The manager class whose registrations belong to each registry.
MANAGERS = {"tool_call_parser": "ToolParserManager", "reasoning_parser": "ReasoningParserManager"}
REGISTER_CALLS = ("register_module", "register_lazy_module")
QUANTIZATION_PACKAGE = "vllm/model_executor/layers/quantization/__init__.py"


def registry_facts(src: Source) -> Dict[str, Tuple[str, ...]]:
    """Return registry -> sorted registered names; a registry with no package is left out."""
    out: Dict[str, Tuple[str, ...]] = {}
    for registry, packages in REGISTRY_PACKAGES.items():
        names: List[str] = []
        found_package = False
        for package in packages:
            if src.stat(package) is None:
                continue
            found_package = True
            for name in src.names(package, "*.py"):
                mod = src.module_file(f"{package}/{name}")
                if mod is not None:
                    names.extend(_registered(mod.tree, MANAGERS[registry]))
        if found_package:
            out[registry] = tuple(sorted(set(names)))
    out.update(quantization_methods(src))
    return out


def quantization_methods(src: Source) -> Dict[str, Tuple[str, ...]]:
    """Return {"quantization": names, "quantization_deprecated": names} the copy accepts.

    ModelConfig._verify_quantization refuses a method outside QUANTIZATION_METHODS ("Unknown
    quantization method: x"), and one in DEPRECATED_QUANTIZATION_METHODS unless
    `--allow-deprecated-quantization`; a plugin's register_quantization_config adds names.
    """
    from patchops.lint.extract.static_eval import Classes, Hints

    mod = src.module_file(QUANTIZATION_PACKAGE)
    if mod is None:
        return {}
    out: Dict[str, Tuple[str, ...]] = {}
    methods = _symbol_value(mod, "QUANTIZATION_METHODS")
    names: List[str] = []
    if isinstance(methods, ast.Dict):
        names = [k.value for k in methods.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    elif isinstance(methods, ast.Call) and methods.args and isinstance(methods.args[0], ast.Call) \
            and methods.args[0].args:
        # list(get_args(QuantizationMethods)): the Literal's values, in order
        for atom in Hints(Classes(src)).atoms(methods.args[0].args[0], mod):
            if atom[0] == "literal":
                names = [v for v in atom[1] if isinstance(v, str)]
    if names:
        out["quantization"] = tuple(names)
    deprecated = _symbol_value(mod, "DEPRECATED_QUANTIZATION_METHODS")
    if isinstance(deprecated, (ast.List, ast.Tuple)):
        out["quantization_deprecated"] = tuple(
            e.value for e in deprecated.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return out


WEIGHT_UTILS = "vllm/model_executor/model_loader/weight_utils.py"


def quantization_checkpoint_needs(src: Source) -> Dict[str, Dict[str, Any]]:
    """Return method -> what `get_quant_config` needs of an unquantized model folder to go on.

    With `--quantization awq` and no `quantization_config` in config.json, vLLM globs the
    model folder for `*.json` ending in the class's `get_config_filenames()` and raises
    "Cannot find the config file for awq" when none is there ({"files": [...]}); a class
    that names no file is built with no arguments, `quant_cls()`, which fails when its
    `__init__` has required ones ({"class": name, "missing": [...]}: fbgemm_fp8). Online
    methods (fp8: no files, no required arguments), methods get_quant_config treats by name
    first (gguf, bitsandbytes, modelopt, online shorthands) and classes that do not resolve
    are left out.
    """
    from patchops.lint.extract.static_eval import Classes

    found_classes = _method_classes(src)
    if found_classes is None:
        return {}
    classes = Classes(src)
    by_name = _methods_named_in(src)
    out: Dict[str, Dict[str, Any]] = {}
    for name, found in found_classes.items():
        if name in by_name:
            continue
        names = _inherited(classes, *found, lambda c: _literal_return(c, "get_config_filenames"))
        if names is None or names == "?":
            continue
        if names:
            out[name] = {"files": list(names)}
        elif names == ():
            missing = _inherited(classes, *found, _required_init_args)
            if missing:
                out[name] = {"class": found[1].name, "missing": list(missing)}
    return out


def _method_classes(src: Source):
    """Return quantization name -> (module, class) from get_quantization_config's table, or None."""
    mod = src.module_file(QUANTIZATION_PACKAGE)
    fn = next((n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef)
               and n.name == "get_quantization_config"), None) if mod is not None else None
    if fn is None:
        return None
    imported: Dict[str, str] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{mod.name}.{node.module}"
    table = next((n.value for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign))
                  and isinstance(n.value, ast.Dict) and len(n.value.keys) > 3), None)
    if table is None:
        return None
    out = {}
    for key, value in zip(table.keys, table.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Name)
                and value.id in imported):
            continue
        cmod = src.module(imported[value.id])
        found = src.find_class(cmod, value.id) if cmod is not None else None
        if found:
            out[key.value] = found
    return out


ONLINE_QUANTIZATION = "vllm/config/quantization.py"


def quantization_limits(src: Source) -> Dict[str, Dict[str, Any]]:
    """Return method -> {"min_capability": 75, "act_dtypes": ["float16"]} where literal.

    `VllmConfig._get_quantization_config` refuses a GPU below the class's
    `get_min_capability()` ("The quantization method awq is not supported for the current GPU.
    Minimum capability: 75. Current capability: 70.") and a dtype outside
    `get_supported_act_dtypes()` ("torch.bfloat16 is not supported for quantization method awq.
    Supported dtypes: [torch.float16]").

    Two more keys say when those limits are not the ones that apply: "takes_over" lists the
    checkpoint methods a class's `override_quantization_method` claims without reading the
    user's choice (0.32's GPT-OSS MXFP4 replaces any `--quantization` on a gpt-oss checkpoint),
    and "online" marks a `_ONLINE_SHORTHANDS` name (0.3x), which quantizes an unquantized
    checkpoint at load through other classes.

    The methods of `_verify_quantization`'s `overrides` list also get "override_rank" (their
    place in it) and what their override claims and needs (quantization_overrides.py):
    "claims_format", "converts" and "needs_package" (0.8.5 gptq_bitblas: bitblas, imported
    only by `__init__`, so a GPTQ checkpoint on a V100 fails when it is missing).
    """
    from patchops.lint.extract.quantization_overrides import override_claim, override_order
    from patchops.lint.extract.static_eval import Classes

    found_classes = _method_classes(src)
    if not found_classes:
        return {}
    classes = Classes(src)
    ranks = {name: rank for rank, name in enumerate(override_order(src))}
    out: Dict[str, Dict[str, Any]] = {}
    for name, found in found_classes.items():
        entry: Dict[str, Any] = {}
        capability = _inherited(classes, *found, _min_capability)
        if isinstance(capability, int):
            entry["min_capability"] = capability
        dtypes = _inherited(classes, *found, _act_dtypes)
        if isinstance(dtypes, tuple) and dtypes:
            entry["act_dtypes"] = list(dtypes)
        claimed = _takes_over(found[1])
        if claimed:
            entry["takes_over"] = claimed
        if name in ranks:
            entry["override_rank"] = ranks[name]
            entry.update(override_claim(src, *found))
        if entry:
            out[name] = entry
    for name in _online_shorthands(src):
        out.setdefault(name, {})["online"] = True
    return out


def _takes_over(cls: ast.ClassDef) -> List[str]:
    """The methods named in an `override_quantization_method` that never reads its user_quant.

    An override that asks the platform (IPEX: CPU and XPU only) is not one a CUDA GPU meets.
    """
    fn = next((s for s in cls.body if isinstance(s, ast.FunctionDef)
               and s.name == "override_quantization_method"), None)
    if fn is None or len(fn.args.args) < 3:
        return []
    user = fn.args.args[2].arg
    if any(isinstance(n, ast.Name) and n.id in (user, "current_platform") for n in ast.walk(fn)):
        return []
    return sorted({c.value for n in ast.walk(fn) if isinstance(n, ast.Compare)
                   for c in ast.walk(n) if isinstance(c, ast.Constant) and isinstance(c.value, str)})


def _online_shorthands(src: Source) -> List[str]:
    mod = src.module_file(ONLINE_QUANTIZATION)
    for node in mod.tree.body if mod is not None else ():
        target = node.target if isinstance(node, ast.AnnAssign) else \
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id == "_ONLINE_SHORTHANDS" and isinstance(node.value, ast.Dict):
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return []


def _only_return(cls, method: str):
    """Return the value of the lone `return` of `method` in `cls`, "?" when not one, None if absent."""
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == method:
            body = [s for s in stmt.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else "?"
    return None


def _min_capability(cls):
    value = _only_return(cls, "get_min_capability")
    if isinstance(value, ast.Constant) and isinstance(value.value, int):
        return value.value
    return None if value is None else "?"


# torch's names for the dtypes vLLM quotes (torch.half prints as torch.float16).
TORCH_DTYPES = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32",
                "float32": "float32"}


def _act_dtypes(cls):
    value = _only_return(cls, "get_supported_act_dtypes")
    if isinstance(value, ast.List) and all(isinstance(e, ast.Attribute) and e.attr in TORCH_DTYPES
                                           for e in value.elts):
        return tuple(TORCH_DTYPES[e.attr] for e in value.elts)
    return None if value is None else "?"


def _inherited(classes, mod, cls, read, depth: int = 0):
    """Return `read(cls)` from the class or its nearest base that defines it; None if unknown."""
    found = read(cls)
    if found is not None:
        return found
    if depth < 6:
        for bmod, bcls in classes.bases(mod, cls):
            found = _inherited(classes, bmod, bcls, read, depth + 1)
            if found is not None:
                return found
    return None


def _literal_return(cls, method: str):
    """Return the literal string list `method` returns, () for `[]`; None if absent or dynamic.

    A method defined but not literal yields "?" so bases are not consulted.
    """
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == method:
            body = [s for s in stmt.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.List) \
                    and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in body[0].value.elts):
                return tuple(e.value for e in body[0].value.elts)
            return "?"
    return None


def _required_init_args(cls):
    """Return the `__init__` parameters without defaults (self left out); None when not defined here."""
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return None
    positional = init.args.posonlyargs + init.args.args
    required = positional[1:len(positional) - len(init.args.defaults)]
    return tuple(a.arg for a in required)


def _methods_named_in(src: Source) -> set:
    """Return the methods get_quant_config compares `model_config.quantization` with (own paths)."""
    mod = src.module_file(WEIGHT_UTILS)
    fn = next((n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef)
               and n.name == "get_quant_config"), None) if mod is not None else None
    out = set()
    for node in ast.walk(fn) if fn is not None else ():
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) \
                and node.left.attr == "quantization":
            for right in node.comparators:
                for const in ast.walk(right):
                    if isinstance(const, ast.Constant) and isinstance(const.value, str):
                        out.add(const.value)
                if isinstance(right, ast.Name):   # `in _ONLINE_SHORTHANDS`: not a file-backed method
                    out.add("*" + right.id)
    return out


def _symbol_value(mod, name: str):
    """Return the expression a module-level `name = ...` (or `name: T = ...`) assigns."""
    for node in mod.tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.target.id == name:
            return node.value
    return None


def _registered(tree: ast.Module, manager: str) -> List[str]:
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_register_call(node, manager):
            names.extend(_call_names(node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id.endswith("_PARSERS_TO_REGISTER") for t in targets) \
                    and isinstance(node.value, ast.Dict):
                names.extend(k.value for k in node.value.keys
                             if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return names


def _is_register_call(call: ast.Call, manager: str) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in REGISTER_CALLS and \
        isinstance(func.value, ast.Name) and func.value.id == manager


def _call_names(call: ast.Call) -> List[str]:
    """Return the literal names a register call gives (first argument or `name=`)."""
    candidates = list(call.args[:1]) + [k.value for k in call.keywords if k.arg == "name"]
    names: List[str] = []
    for expr in candidates:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            names.append(expr.value)
        elif isinstance(expr, (ast.List, ast.Tuple)):
            names.extend(e.value for e in expr.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return names


def registry_choice_flags(src: Source, files) -> Dict[str, str]:
    """Return option -> registry for add_argument calls whose `choices=` list a registry.

    0.8.x builds `--reasoning-parser`'s choices from `ReasoningParserManager.reasoning_parsers`
    at import time (engine/arg_utils.py), so argparse refuses other names at parse time.
    """
    by_manager = {manager: registry for registry, manager in MANAGERS.items()}
    out: Dict[str, str] = {}
    for rel in files:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for node in ast.walk(mod.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                continue
            for kw in node.keywords:
                if kw.arg != "choices":
                    continue
                names = {n.id for n in ast.walk(kw.value) if isinstance(n, ast.Name)}
                for manager, registry in by_manager.items():
                    if manager in names:
                        out[node.args[0].value] = registry
    return out
