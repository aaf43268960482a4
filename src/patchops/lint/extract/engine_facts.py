"""The small facts of EngineArgs and its neighbours, and `vllm serve`'s flags (extract/readers.py
calls each): field defaults, attention backends, multi-step backends, hardcoded keywords, capture
sizes. The flags come from the layers below: source_tree (parse modules, resolve names through
imports), static_eval (evaluate to literals), hint_kwargs (vLLM's get_kwargs() on a type hint),
argparse_call (one add_argument call -> Flag), argparse_reader (walk the parser-building code).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.facts.model import Flag
from patchops.lint.extract import ARG_UTILS, CLI_ARGS_FILES, SERVE_PARSER_FILES
from patchops.lint.extract.argparse_call import jsonable
from patchops.lint.extract.argparse_reader import FlagReader
from patchops.lint.extract.hint_kwargs import kwargs_style
from patchops.lint.extract.source_tree import Source, last_name, str_const
from patchops.lint.extract.static_eval import UNRESOLVED, Classes

# Where the attention-backend enum lives, newest first.
BACKEND_ENUMS = (
    ("vllm/v1/attention/backends/registry.py", "AttentionBackendEnum"),  # 0.15+
    ("vllm/attention/backends/registry.py", "AttentionBackendEnum"),     # 0.12
    ("vllm/platforms/interface.py", "_Backend"),                         # 0.7.3-0.11
    ("vllm/attention/selector.py", "_Backend"),                          # 0.6.3
)
MULTI_STEP_RUNNER = "vllm/worker/multi_step_model_runner.py"  # removed in 0.10.1
ENVS = "vllm/envs.py"
HARDCODE_SITES = (("ModelConfig", "enforce_eager"), ("ParallelConfig", "disable_custom_all_reduce"))


def engine_args_defaults(src: Source, classes: Classes) -> Dict[str, Any]:
    """Resolve EngineArgs (+AsyncEngineArgs) field defaults to literals; skip the rest."""
    mod = src.module_file(ARG_UTILS)
    if mod is None:
        return {}
    out: Dict[str, Any] = {}
    for cls_name in ("EngineArgs", "AsyncEngineArgs"):
        found = src.find_class(mod, cls_name)
        if not found:
            continue
        for name, info in classes.fields(*found).items():
            if name in out or info.value is None:
                continue
            value = classes.default_of(info.value, info.mod, info.cls)
            if value is not UNRESOLVED:
                out[name] = jsonable(value)
    return out


def attention_facts(src: Source) -> Tuple[bool, Tuple[str, ...]]:
    """Return (envs.py reads VLLM_ATTENTION_BACKEND, backend enum member names)."""
    env_var = False
    envs = src.module_file(ENVS)
    if envs is not None:
        # the `environment_variables` dict in vllm/envs.py; gone in 0.15.0
        for node in ast.walk(envs.tree):
            if isinstance(node, ast.Dict) and any(
                    str_const(k) == "VLLM_ATTENTION_BACKEND" for k in node.keys if k is not None):
                env_var = True
                break
    backends: Tuple[str, ...] = ()
    for rel, cls_name in BACKEND_ENUMS:
        mod = src.module_file(rel)
        if mod is None:
            continue
        cls = next((n for n in mod.tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name), None)
        if cls is None:
            continue
        names = []
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name) and not stmt.targets[0].id.startswith("_"):
                names.append(stmt.targets[0].id)
        backends = tuple(names)
        break
    return env_var, backends


def multistep_facts(src: Source) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """Read MULTI_STEP_*ATTENTION_BACKENDS from worker/multi_step_model_runner.py (<=0.10.0)."""
    mod = src.module_file(MULTI_STEP_RUNNER)
    if mod is None:
        return (), ()
    values: Dict[str, Tuple[str, ...]] = {}
    for name in ("MULTI_STEP_ATTENTION_BACKENDS", "MULTI_STEP_CHUNKED_PREFILL_ATTENTION_BACKENDS"):
        entry = mod.symbols.get(name)
        if entry and entry[0] == "value":
            try:
                got = ast.literal_eval(entry[1])
                values[name] = tuple(str(x) for x in got)
            except (ValueError, TypeError, SyntaxError):
                pass
    return (values.get("MULTI_STEP_ATTENTION_BACKENDS", ()),
            values.get("MULTI_STEP_CHUNKED_PREFILL_ATTENTION_BACKENDS", ()))


def hardcoded_facts(src: Source) -> Dict[str, str]:
    """Find EngineArgs passing enforce_eager / disable_custom_all_reduce as anything but self.<kw>.

    This is how the CoreX fork hardcodes them (`enforce_eager=True`); the call sites
    (EngineArgs.create_engine_config in vllm/engine/arg_utils.py) have the same shape in every release from 0.6.3.post1 to 0.33.0.
    """
    mod = src.module_file(ARG_UTILS)
    if mod is None:
        return {}
    cls = next((n for n in mod.tree.body if isinstance(n, ast.ClassDef) and n.name == "EngineArgs"), None)
    if cls is None:
        return {}
    out: Dict[str, str] = {}
    for node in ast.walk(cls):
        if not isinstance(node, ast.Call):
            continue
        for callee, kwarg in HARDCODE_SITES:
            if last_name(node.func) != callee:
                continue
            for keyword in node.keywords:
                if keyword.arg != kwarg:
                    continue
                value = keyword.value
                if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
                        and value.value.id == "self" and value.attr == kwarg:
                    continue
                out.setdefault(kwarg, ast.unparse(value))
    return out


def capture_sizes_default(src: Source, classes: Classes) -> Optional[Tuple[int, ...]]:
    """Return CompilationConfig.cudagraph_capture_sizes's default when a fork hardcodes one.

    Upstream defaults it to None in every release that has it (0.7.3+: vllm/config.py, then
    vllm/config/compilation.py from 0.10.1).
    """
    for rel in ("vllm/config/compilation.py", "vllm/config.py"):
        mod = src.module_file(rel)
        if mod is None:
            continue
        found = src.find_class(mod, "CompilationConfig")
        if not found:
            continue
        info = classes.fields(*found).get("cudagraph_capture_sizes")
        if info is None or info.value is None:
            return None
        value = classes.default_of(info.value, info.mod, info.cls)
        if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
            return tuple(value)
        return None
    return None


def read_flags(src: Source, classes: Classes, notes: List[str], unresolved: List[str]) -> Dict[str, Flag]:
    """Read `vllm serve`'s options as Flags by dest, tracing the serve parser as vLLM builds it."""
    reader = FlagReader(src, classes, kwargs_style(src.module_file(ARG_UTILS)), unresolved)
    followed = False
    for rel in SERVE_PARSER_FILES:
        mod = src.module_file(rel)
        if mod is not None and reader.read_serve_entry(mod):
            followed = True
    if not followed:
        # A fork that rewired the serve subcommand: read the usual files whole instead.
        notes.append("serve parser not traced from scripts.py / entrypoints/cli/serve.py; "
                     "read engine/arg_utils.py and cli_args.py directly")
        for rel in (ARG_UTILS,) + CLI_ARGS_FILES:
            mod = src.module_file(rel)
            if mod is not None:
                reader.read_module(mod)
    if src.module_file(ARG_UTILS) is None:
        notes.append(f"{ARG_UTILS}: missing or unparsable; no engine flags read")
    flags: Dict[str, Flag] = {}
    for flag in reader.flags:
        if flag.dest in flags:
            # A second add_argument for the same dest (rare): keep the first and record
            # the other spelling as an alias so the key is still known.
            first = flags[flag.dest]
            extra = tuple(o for o in (f"--{flag.name}",) + flag.aliases
                          if o not in first.aliases and o != f"--{first.name}")
            flags[flag.dest] = replace(first, aliases=first.aliases + extra)
        else:
            flags[flag.dest] = flag
    return flags
