"""Config-time guards of a vLLM copy that rules encode, found by the message they raise.

Some checks are one `if ...: raise` whose condition changed across releases; a rule needs to
know whether the copy still has the guard and what its condition reads. Found by a fragment
of the raised message, so moved code is still found:

* `prefix_caching_sliding_window` (CacheConfig._verify_prefix_caching): "always" when the
  condition is only the sliding window (0.6.3-0.7.3), "v0" when it also tests VLLM_USE_V1
  (0.8.5-0.11);
* `expert_parallel_needs_experts` (ModelConfig._verify_with_expert_parallelism, 0.8.5+);
* `spec_decode_needs_v1` (CudaPlatform.check_and_update_config, 0.10-0.11: "v0");
* `draft_model_unsupported` (EngineArgs._is_v1_supported_oracle, 0.10.x);
* `draft_method_unsupported` (`method: draft_model` in EngineArgs._is_v1_supported_oracle, 0.11;
  in _check_feature_supported, 0.12-0.14; 0.15 runs draft models on V1);
* `partial_prefills_need_chunked` (SchedulerConfig._verify_args, 0.7.3-0.25);
* `prefix_hash_sha256_v0`, `pooling_without_chunked_prefill` (EngineArgs._set_default_args_v0,
  0.8.5-0.10.x: "v0"; the pooling one sits in create_engine_config in 0.7.3: "always").
* `float_kv_cache_matches_dtype` (VllmConfig._reject_mismatched_float_kv_cache, 0.33);
* `otlp_needs_opentelemetry` (ObservabilityConfig.__post_init__, 0.8.5+);
* `lora_spec_token_budget` (EngineArgs.create_engine_config, 0.12+: with LoRA and a
  speculative config, max_num_batched_tokens below max_num_seqs x (1 + num_speculative_tokens));
* `limit_mm_needs_multimodal` (ModelConfig._init_multimodal_config, 0.6.3-0.9: a
  `--limit-mm-per-prompt` on a text-only model);
* `chat_template_must_exist` (validate_chat_template): "always", or "builtin" where a bare
  name may also be one of the templates shipped in `CHAT_TEMPLATES_DIR` (0.2x+).

A guard is "v0" when its condition tests VLLM_USE_V1 or it sits in a `..._v0` function.

`model_option_guard` reads how `vllm serve` treats a `--model` option: refused whenever it
sets the model (0.6.3-0.7.3: "any"), refused as the exact token `--model` (0.8.5-0.11:
"token"), or only warned about (0.20+: no guard).

`async_speculative_methods` reads which speculative methods `--async-scheduling` allows
(VllmConfig.__post_init__, 0.12-0.32).

`front_end_bounds` reads the bounds the serve command puts on a value when a switch is on
(`--headless` with `--api-server-count`); `swap_space_limits` reads the fractions of host
RAM the swap-space guard refuses and warns at.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from patchops.lint.extract.source_tree import Module, Source, last_name
from patchops.lint.extract.static_eval import Classes

GUARD_FILES = ("vllm/config.py", "vllm/config/__init__.py", "vllm/config/cache.py",
               "vllm/config/model.py", "vllm/config/scheduler.py", "vllm/config/vllm.py",
               "vllm/engine/arg_utils.py", "vllm/platforms/cuda.py", "vllm/entrypoints/chat_utils.py",
               "vllm/renderers/chat_utils/chat_template.py", "vllm/renderers/chat_utils.py",
               "vllm/config/observability.py")
# The serve subcommand (0.7.3+), where `--headless` decides what runs.
SERVE_COMMAND = "vllm/entrypoints/cli/serve.py"
# Where validate_parsed_serve_args lives besides CLI_ARGS_FILES (0.30: entrypoints/launchers/).
FRONT_END_FILES = ("vllm/entrypoints/launchers/cli_args.py",)
MESSAGES = {
    "prefix_caching_sliding_window": "Prefix caching is not supported with sliding window",
    "expert_parallel_needs_experts": "Number of experts in the model must be greater than 0",
    "spec_decode_needs_v1": "Speculative decoding is not supported on vLLM V0",
    "draft_model_unsupported": "Speculative decoding with draft model is not supported yet",
    "draft_method_unsupported": "Draft model speculative decoding is not supported yet",
    "partial_prefills_need_chunked": "Chunked prefill must be enabled to set max_num_partial_prefills > 1",
    "prefix_hash_sha256_v0": "sha256 is not supported for prefix caching in V0",
    "pooling_without_chunked_prefill": "Chunked prefill is not supported for pooling models",
    "float_kv_cache_matches_dtype": "is incompatible with dtype=",
    "chat_template_must_exist": "appears path-like, but doesn't exist",
    "otlp_needs_opentelemetry": "OpenTelemetry is not available. Unable to configure",
    "lora_spec_token_budget": "Consider increasing max_num_batched_tokens or decreasing num_speculative_tokens",
    "limit_mm_needs_multimodal": "is only supported for multimodal models",
}


def guard_facts(src: Source) -> Dict[str, str]:
    """Return guard name -> "always" | "v0" for the guards the copy has (and "token" | "any"
    for `model_option_refused`)."""
    out: Dict[str, str] = {}
    for rel in GUARD_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        before = set(out)
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for name, fragment in MESSAGES.items():
                if name not in out and any(isinstance(stmt, ast.Raise) and fragment in _text(stmt.exc)
                                           for stmt in fn.body):
                    out[name] = "always"     # a method that only runs to raise (0.33's kv dtype check)
            for node in ast.walk(fn):
                if not isinstance(node, ast.If):
                    continue
                for name, fragment in MESSAGES.items():
                    if name not in out and _raises(node, fragment):
                        v0 = "VLLM_USE_V1" in ast.dump(node.test) or fn.name.endswith("_v0")
                        out[name] = "v0" if v0 else "always"
        if "chat_template_must_exist" in set(out) - before and out["chat_template_must_exist"] == "always" and \
                any(isinstance(n, ast.Name) and n.id == "CHAT_TEMPLATES_DIR" for n in ast.walk(mod.tree)):
            out["chat_template_must_exist"] = "builtin"
    model_option = model_option_guard(src)
    if model_option:
        out["model_option_refused"] = model_option
    return out


SWAP_MESSAGE = "Too large swap space"


def swap_space_limits(src: Source) -> Dict[str, object]:
    """Return how CacheConfig.verify_with_parallel_config weighs swap space against host RAM.

    0.6.3-0.15 read `cpu_memory_usage = swap_space_bytes * parallel_config.tensor_parallel_size`
    and `if cpu_memory_usage > 0.7 * total_cpu_memory: raise ValueError("Too large swap
    space. ...")`, `elif ... > 0.4 * ...: logger.warning(...)`. Returns {"refuse_above": 0.7,
    "warn_above": 0.4, "per_node": "tensor_parallel_size"}, or {} when the copy has no guard.
    """
    for rel in GUARD_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for fn in ast.walk(mod.tree):
            if isinstance(fn, ast.FunctionDef) and any(
                    isinstance(n, ast.If) and _raises(n, SWAP_MESSAGE) for n in ast.walk(fn)):
                return _swap_limits(fn)
    return {}


def _swap_limits(fn: ast.FunctionDef) -> Dict[str, object]:
    out: Dict[str, object] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "parallel_config":
            out["per_node"] = node.value.attr
        if not isinstance(node, ast.If):
            continue
        fraction = _fraction(node.test)
        if fraction is None:
            continue
        if _raises(node, SWAP_MESSAGE):
            out["refuse_above"] = fraction
        elif "warning" in ast.dump(node.body[0]):
            out["warn_above"] = fraction
    return out if "refuse_above" in out else {}


def _fraction(test: ast.expr) -> Optional[float]:
    """Read `usage > FRACTION * total`."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Gt):
        right = test.comparators[0]
        if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Mult) \
                and isinstance(right.left, ast.Constant) and isinstance(right.left.value, float):
            return right.left.value
    return None


def _raises(node: ast.If, fragment: str) -> bool:
    named: Dict[str, str] = {}   # `msg = "..."; raise ValueError(msg)` (0.7.3-0.10 arg_utils.py)
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            named[stmt.targets[0].id] = _text(stmt.value)
        if isinstance(stmt, ast.Raise):
            exc = stmt.exc
            if isinstance(exc, ast.Call) and len(exc.args) == 1 and isinstance(exc.args[0], ast.Name):
                if fragment in named.get(exc.args[0].id, ""):
                    return True
            if fragment in _text(exc):
                return True
    return False


def _text(expr: Optional[ast.AST]) -> str:
    """Return the literal text of a raise's message (string pieces joined)."""
    if isinstance(expr, ast.Call) and expr.args:
        expr = expr.args[0]
    return "".join(n.value for n in ast.walk(expr) if isinstance(n, ast.Constant)
                   and isinstance(n.value, str)) if expr is not None else ""


ASYNC_SPEC_FILE = "vllm/config/vllm.py"
ASYNC_SPEC_MESSAGE = "async scheduling is only supported"


def async_speculative_methods(src: Source, classes: Classes) -> Dict[str, Any]:
    """Return {"allowed": [method, ...], "message": text} for the copy's refusal of
    `--async-scheduling` with another kind of speculative decoding, or {} without one.

    0.12-0.32 read `if self.scheduler_config.async_scheduling: ... if self.speculative_config
    is not None: if (self.speculative_config.method not in get_args(EagleModelTypes) and ...
    != "draft_model"): raise ValueError("Currently, async scheduling is only supported with
    EAGLE/MTP ... kind of speculative decoding")`; the allowed list grew each release and 0.33
    moved the check behind its choice of model runner (other wording, not read here). A term
    that does not resolve to literals drops the fact: a partial list would invent refusals.
    """
    mod = src.module_file(ASYNC_SPEC_FILE)
    if mod is None:
        return {}
    for node in ast.walk(mod.tree):
        if not (isinstance(node, ast.If) and _raises(node, ASYNC_SPEC_MESSAGE)):
            continue
        allowed = _methods_outside(node.test, mod, classes)
        raised = next(stmt for stmt in node.body if isinstance(stmt, ast.Raise))
        return {"allowed": sorted(set(allowed)), "message": _text(raised.exc)} if allowed else {}
    return {}


def _methods_outside(test: ast.expr, mod: Module, classes: Classes) -> Optional[List[str]]:
    """The methods a conjunction of `method not in X` / `method != "m"` lets through."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    allowed: List[str] = []
    for term in terms:
        if not (isinstance(term, ast.Compare) and len(term.ops) == 1 and last_name(term.left) == "method"):
            return None
        value = classes.evaluate(term.comparators[0], mod)
        if isinstance(term.ops[0], ast.NotEq) and isinstance(value, str):
            allowed.append(value)
        elif isinstance(term.ops[0], ast.NotIn) and isinstance(value, (list, tuple)) \
                and all(isinstance(v, str) for v in value):
            allowed.extend(value)
        else:
            return None
    return allowed


MODEL_OPTION_FILES = ("vllm/scripts.py", "vllm/entrypoints/cli/serve.py", "vllm/utils.py",
                      "vllm/utils/__init__.py")
MODEL_OPTION_MESSAGE = "you should provide the model as a"


def model_option_guard(src: Source) -> Optional[str]:
    """Return "token" | "any" for the copy's refusal of `vllm serve --model X`, None if none."""
    for rel in MODEL_OPTION_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, ast.FunctionDef) or not any(
                    isinstance(n, ast.If) and _raises(n, MODEL_OPTION_MESSAGE) for n in ast.walk(fn)):
                continue
            exact = any(isinstance(n, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value == "--model" for c in n.comparators)
                for n in ast.walk(fn))
            return "token" if exact else "any"
    return None


def companion_flags(src: Source) -> Dict[str, list]:
    """Return switch -> [needed flag, message] from `validate_parsed_serve_args`.

    The front end's quick checks read `if args.enable_auto_tool_choice and not
    args.tool_call_parser: raise TypeError("Error: ... requires ...")`; which pairs exist
    changes by release (`--enable-log-outputs` needs `--enable-log-requests` from 0.11).
    """
    from patchops.lint.extract import CLI_ARGS_FILES

    out: Dict[str, list] = {}
    for rel in CLI_ARGS_FILES + FRONT_END_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "validate_parsed_serve_args"):
                continue
            for node in ast.walk(fn):
                pair = _companion(node)
                if pair is not None:
                    out[pair[0]] = [pair[1], pair[2]]
    adapter = _prompt_adapter_token_guard(src)
    if adapter:
        out["enable_prompt_adapter"] = ["max_prompt_adapter_token", adapter]
    return out


def _prompt_adapter_token_guard(src: Source) -> Optional[str]:
    """Return the message of PromptAdapterConfig's refusal of max_prompt_adapter_token 0.

    The config exists only with `--enable-prompt-adapter` (0.6.3-0.9), and 0 is the flag's
    default, so the switch needs the companion as surely as the front end's pairs do.
    """
    for rel in GUARD_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for cls in ast.walk(mod.tree):
            if not (isinstance(cls, ast.ClassDef) and cls.name == "PromptAdapterConfig"):
                continue
            for node in ast.walk(cls):
                if isinstance(node, ast.If) and _raises(node, "max_prompt_adapter_token must be set"):
                    return _text(node.body[0].exc)
    return None


def _companion(node: ast.AST) -> Optional[tuple]:
    if not (isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp)
            and isinstance(node.test.op, ast.And) and len(node.test.values) == 2
            and node.body and isinstance(node.body[0], ast.Raise)):
        return None
    first, second = node.test.values
    if not (isinstance(first, ast.Attribute) and isinstance(second, ast.UnaryOp)
            and isinstance(second.op, ast.Not) and isinstance(second.operand, ast.Attribute)):
        return None
    return first.attr, second.operand.attr, _text(node.body[0].exc)


def front_end_bounds(src: Source) -> Dict[str, dict]:
    """Return dest -> {"le": bound, "when": switch, "message"} from the serve command.

    `if args.headless: if args.api_server_count > 0: raise` (0.33) and `run_headless()`'s
    `if args.api_server_count > 1: raise` (0.10, entered when `args.headless`): a value the
    command refuses only while a switch is on.
    """
    mod = src.module_file(SERVE_COMMAND)
    if mod is None:
        return {}
    out: Dict[str, dict] = {}
    switches = _functions_run_under(mod.tree)
    for fn in ast.walk(mod.tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for outer in ast.walk(fn):
            if isinstance(outer, ast.If) and _arg_name(outer.test):
                body = outer.body
                switch = _arg_name(outer.test)
            elif outer is fn and fn.name in switches:
                body, switch = fn.body, switches[fn.name]
            else:
                continue
            for node in body:
                bound = _upper_bound(node)
                if bound is not None and bound[0] != switch:
                    dest, limit, message = bound
                    out.setdefault(dest, {"le": limit, "when": switch, "how": "guard",
                                          "class": "its API servers", "message": message})
    return out


def _arg_name(test: ast.AST) -> Optional[str]:
    """Return `x` for a test that is exactly `args.x`."""
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "args":
        return test.attr
    return None


def _functions_run_under(tree: ast.AST) -> Dict[str, str]:
    """Return function -> switch for `if args.x or ...: fn(args)` (0.10's run_headless)."""
    out: Dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = node.test.values[0] if isinstance(node.test, ast.BoolOp) and \
            isinstance(node.test.op, ast.Or) else node.test
        switch = _arg_name(test)
        if switch is None:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                    isinstance(stmt.value.func, ast.Name):
                out.setdefault(stmt.value.func.id, switch)
    return out


def _upper_bound(node: ast.AST) -> Optional[tuple]:
    """Return (dest, largest allowed, message) for `if [args.x is not None and] args.x > N: raise`."""
    if not (isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Raise)):
        return None
    test = node.test
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    compare = parts[-1]
    if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1
            and isinstance(compare.ops[0], ast.Gt) and isinstance(compare.comparators[0], ast.Constant)
            and isinstance(compare.comparators[0].value, int)):
        return None
    dest = _arg_name(compare.left)
    if dest is None:
        return None
    return dest, compare.comparators[0].value, _message_text(node.body[0], dest)


def _message_text(raise_stmt: ast.Raise, dest: str) -> Optional[str]:
    """Return the raised message with `{value}` where `args.<dest>` is interpolated."""
    exc = raise_stmt.exc
    if not (isinstance(exc, ast.Call) and exc.args):
        return None
    parts = []
    for piece in ast.walk(exc.args[0]):
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            parts.append(piece.value)
        elif isinstance(piece, ast.FormattedValue):
            if _arg_name(piece.value) != dest:
                return None
            parts.append("{value}")
    return "".join(parts)
