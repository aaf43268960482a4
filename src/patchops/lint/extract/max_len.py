"""How a vLLM copy derives a model's maximum length from config.json, read with `ast`.

`_get_and_verify_max_len` (config.py; config/model.py from 0.11) takes the smallest of a list
of config.json keys, scales it by the rope-scaling factor except for some rope types, and
refuses a larger `max_model_len` unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set. The key list,
the unscaled rope types and the YaRN base moved and changed across releases (0.33.0 reads the
keys in transformers_utils/model_arch_config_convertor.py and no longer scales YaRN), so they
are read from the copy rather than written down here.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from patchops.lint.extract.source_tree import Source

MAX_LEN_FILES = ("vllm/config.py", "vllm/config/__init__.py", "vllm/config/model.py",
                 "vllm/transformers_utils/model_arch_config_convertor.py")
FUNCTIONS = ("_get_and_verify_max_len", "derive_max_model_len_and_key")
# 0.6.3-0.10: a scaled rope with --disable-sliding-window raises NotImplementedError.
SLIDING_ROPE_MESSAGE = "Disabling sliding window is not supported for models with rope_scaling"


def max_len_facts(src: Source) -> Dict[str, Any]:
    """Return {"keys", "unscaled_rope_types", "yarn_base", "tokenizer_max_length",
    "per_layer_rope", "sliding_window_off_refused_with_rope"} or {}.

    `per_layer_rope` (0.33): rope parameters are iterated per layer type and the length is
    multiplied by the factor found (1.0 when every type is unscaled), so it turns float.
    `sliding_window_off_refused_with_rope`: the derivation raises when the sliding window is
    disabled on a model whose rope scaling it applies.
    """
    keys: Optional[List[str]] = None
    unscaled: Optional[List[str]] = None
    yarn_base = False
    tokenizer = False
    per_layer = False
    sliding_rope = False
    for rel in MAX_LEN_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name in FUNCTIONS):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "possible_keys" for t in node.targets):
                    keys = _strings(node.value) or keys
                elif isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                        isinstance(node.ops[0], ast.NotIn) and _is_name(node.left, "rope_type"):
                    unscaled = _strings(node.comparators[0]) or unscaled
                elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                        and node.slice.value == "original_max_position_embeddings":
                    yarn_base = True
                elif isinstance(node, ast.Name) and node.id == "tokenizer_config":
                    tokenizer = True
                elif isinstance(node, ast.Call) and _is_name(node.func, "iter_rope_parameters"):
                    per_layer = True
                elif isinstance(node, ast.Raise) and SLIDING_ROPE_MESSAGE in ast.dump(node):
                    sliding_rope = True
    if keys is None:
        return {}
    return {"keys": keys, "unscaled_rope_types": unscaled or [], "yarn_base": yarn_base,
            "tokenizer_max_length": tokenizer, "per_layer_rope": per_layer,
            "sliding_window_off_refused_with_rope": sliding_rope}


def _is_name(expr: ast.AST, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def _strings(expr: ast.AST) -> Optional[List[str]]:
    if isinstance(expr, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in expr.elts):
        return [e.value for e in expr.elts]
    return None
