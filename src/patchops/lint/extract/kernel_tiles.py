"""The shape checks quantized linear layers make when vLLM creates their weights, per GPU shard.

Read from the copy: Marlin's constants (`GPTQ_MARLIN_MIN_THREAD_N/K`, `GPTQ_MARLIN_TILE`) and
the messages of `verify_marlin_supports_shape`; whether AWQ's Marlin config hands a layer
Marlin cannot take to the plain AWQ kernels (`check_marlin_supports_layer` in its
`get_quant_method`, 0.7.3+) and the plain AWQ and GPTQ kernels' own alignment checks; and the
FP8 block checks (`Fp8LinearMethod.create_weights`, 0.7.3-0.10 inline, 0.11+
`validate_fp8_block_shape`; the MoE ones), with which merged layers they spare. These run in
the worker while the model is built, after the engine config: stage "later".
"""

from __future__ import annotations

import ast
from typing import Any, Dict, Iterator, List, Optional

from patchops.lint.extract.source_tree import Source

QUANT = "vllm/model_executor/layers/quantization/"
MARLIN_UTILS = QUANT + "utils/marlin_utils.py"
MARLIN_CONSTANTS = {"GPTQ_MARLIN_MIN_THREAD_N": "min_thread_n", "GPTQ_MARLIN_MIN_THREAD_K": "min_thread_k",
                    "GPTQ_MARLIN_TILE": "tile"}
# (file, class) of the plain kernels' create_weights, newest layout last (0.33: auto_*.py).
PLAIN = {"awq": ((QUANT + "awq.py", "AWQLinearMethod"), (QUANT + "auto_awq.py", "BaseAWQLinearMethod")),
         "gptq": ((QUANT + "gptq.py", "GPTQLinearMethod"),)}   # 0.25+ auto_gptq.py chooses kernels
AWQ_MARLIN = ((QUANT + "awq_marlin.py", "AWQMarlinConfig"), (QUANT + "auto_awq.py", "AutoAWQConfig"))
FP8, FP8_UTILS = QUANT + "fp8.py", QUANT + "utils/fp8_utils.py"
LINEAR = "vllm/model_executor/layers/linear.py"


def kernel_tile_facts(src: Source) -> Dict[str, Any]:
    """Return {"marlin": {...}, "awq": {...}, "gptq": {...}, "fp8_block": {...}}, each when found."""
    out: Dict[str, Any] = {}
    marlin = _marlin(src)
    if marlin:
        out["marlin"] = marlin
    for method, places in PLAIN.items():
        plain = _plain(src, places)
        if plain:
            out[method] = plain
    if "awq" in out and any(_calls(src, rel, cls, "get_quant_method", "check_marlin_supports_layer")
                            for rel, cls in AWQ_MARLIN):
        out["awq"]["marlin_falls_back"] = True
    fp8 = _fp8_block(src)
    if fp8:
        out["fp8_block"] = fp8
    return out


def _marlin(src: Source) -> Dict[str, Any]:
    mod = src.module_file(MARLIN_UTILS)
    if mod is None:
        return {}
    out: Dict[str, Any] = {}
    for node in mod.tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in MARLIN_CONSTANTS and isinstance(node.value, ast.Constant):
            out[MARLIN_CONSTANTS[node.targets[0].id]] = node.value.value
    verify = _function(mod.tree, "verify_marlin_supports_shape")
    if verify is not None:
        messages = list(_raised(verify))
        # 0.12+: the group check is verify_group_size_divides_partition's
        helper = _function(mod.tree, "verify_group_size_divides_partition")
        messages += list(_raised(helper)) if helper is not None else []
        for key, word in (("n_message", "min_thread_n"), ("k_message", "min_thread_k"),
                          ("group_message", "group_size")):
            found = next((m for m in messages if word in m), None)
            if found:
                out[key] = found
    return out


def _plain(src: Source, places) -> Dict[str, Any]:
    for rel, cls in places:
        method = _method(src, rel, cls, "create_weights")
        if method is None:
            continue
        messages = list(_raised(method))
        out = {key: next(m for m in messages if word in m)
               for key, word in (("input_message", "input size"), ("output_message", "output size"))
               if any(word in m for m in messages)}
        if out:
            return out
    return {}


def _fp8_block(src: Source) -> Dict[str, Any]:
    fp8, utils = src.module_file(FP8), src.module_file(FP8_UTILS)
    linear = _method(src, FP8, "Fp8LinearMethod", "create_weights")
    if fp8 is None or linear is None:
        return {}
    out: Dict[str, Any] = {}
    for key, cls, helper in (("linear", "Fp8LinearMethod", "validate_fp8_block_shape"),
                             ("moe", "Fp8MoEMethod", "validate_fp8_block_shape_moe")):
        method = _method(src, FP8, cls, "create_weights")
        if method is None:
            continue
        checker = _function(utils.tree, helper) if utils is not None and _calls_in(method, helper) else None
        body = checker if checker is not None else method
        messages = [m for m in _raised(body) if "block_k" in m or "block_n" in m]
        for word in ("block_k", "block_n"):
            found = next((m for m in messages if word in m), None)
            if found:
                out[f"{key}_{word[-1]}_message"] = found
        if key == "linear" and any(isinstance(n, ast.Slice) and _is_minus_one(n.upper) for n in ast.walk(body)):
            out["merged_last_exempt"] = True   # 0.11+: a merged layer's last part may break the block
    if not out:
        return {}
    layers = src.module_file(LINEAR)
    if layers is not None and _function(layers.tree, "_maybe_allow_fp8_block_shape_mismatch") is not None:
        out["merged_mismatch_allowed"] = True  # 0.15+: a merged layer with a misaligned part skips the check
    if any(isinstance(n, ast.Attribute) and n.attr == "weight_scale_refine" for n in ast.walk(fp8.tree)):
        out["moe_refined"] = True               # 0.30+: the MoE block grid may be fitted to the shard
    return out


def _is_minus_one(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
        isinstance(node.operand, ast.Constant) and node.operand.value == 1


def _function(tree: ast.AST, name: str) -> Optional[ast.FunctionDef]:
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _method(src: Source, rel: str, cls: str, name: str) -> Optional[ast.FunctionDef]:
    mod = src.module_file(rel)
    for node in ast.walk(mod.tree) if mod is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    return None


def _calls(src: Source, rel: str, cls: str, method: str, callee: str) -> bool:
    found = _method(src, rel, cls, method)
    return found is not None and _calls_in(found, callee)


def _calls_in(node: ast.AST, callee: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == callee
               for n in ast.walk(node))


def _raised(node: ast.AST) -> Iterator[str]:
    """Yield the text of each `raise ValueError(...)` under `node`, interpolations as `{}`."""
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call) and stmt.exc.args:
            text = _text(stmt.exc.args[0])
            if text is not None:
                yield text


def _text(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts: List[str] = [p.value if isinstance(p, ast.Constant) else "{}" for p in node.values]
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return left + right if left is not None and right is not None else None
    return None
