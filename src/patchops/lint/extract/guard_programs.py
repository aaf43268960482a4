"""The checks vLLM's config classes run when they are built, read with `ast` as small programs.

This module finds the classes and methods and where EngineArgs builds each class; the
statements are read by lint/checks/reader.py under `_policy()` (expressions by expressions.py).

config_guards reads one shape (`if self.x > 1.0: raise` at the top of a method). Most
config-time refusals have other shapes: a guard under a switch (`if self.enable_eplb:` ...
`if not self.enable_expert_parallel: raise`), membership in a local tuple (`max_lora_rank
not in possible_max_ranks`), a chained range (`not (1 <= self.max_long_partial_prefills <=
self.max_num_partial_prefills)`), a field set earlier in the same method (`max_cpu_loras`
defaults to `max_loras`), an `assert`, or a check of another config passed in
(`verify_with_parallel_config(self, parallel_config)`). This module turns each config
class's checking methods into a flat program that lint can run on a config's values:

* `ir.Assign(cond, target, expr)`: `self.f = expr` (or a local) runs when `cond` holds;
* `ir.Guard(cond, test, message, exception)`: vLLM raises `message` when `cond` and `test`
  hold; an `assert t, msg` is a guard on `not t`.

The facts hold them as lint/checks/ir.py's JSON lists (`["field", "max_loras"]`, `["cmp",
"<", a, b]`, ...); whatever the reader cannot express is `ir.UNKNOWN`, and lint reports a guard only when its condition
is certainly true, so an unknown (a platform call, an environment read, a loop) can hide a
check but never invent one. `checked_classes` also reads where `EngineArgs` builds each class
(its keywords and the switch that builds it, e.g. `LoRAConfig(...) if self.enable_lora`), and
which EngineArgs fields `EngineArgs` rewrites itself (those are unknown to lint).
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Set, Tuple

from patchops.lint.checks import ir
from patchops.lint.checks.ir import UNKNOWN
from patchops.lint.checks.reader import Policy, Reader, calls_in_expr
from patchops.lint.extract import ARG_UTILS, CLI_ARGS_FILES
from patchops.lint.extract.config_fields import CONFIG_MODULES
from patchops.lint.extract import expressions
from patchops.lint.extract.expressions import Context, const, jsonable, one_line_properties
from patchops.lint.extract.source_tree import Module, Source
from patchops.lint.extract.source_tree import last_name
from patchops.lint.extract.static_eval import UNRESOLVED, Classes

# The config classes whose checks are read (ModelConfig and the speculative config depend on
# the checkpoint and are left to the rules that read config.json).
CHECKED_CLASSES = ("CacheConfig", "ParallelConfig", "SchedulerConfig", "LoRAConfig",
                   "DecodingConfig", "StructuredOutputsConfig", "CompilationConfig",
                   "KVTransferConfig", "ObservabilityConfig", "PromptAdapterConfig")
ENTRY_METHODS = ("__init__", "__post_init__", "model_post_init")
# ModelConfig: only its check of the parallel layout is read; what it asks of the checkpoint
# (`self.is_moe`, `self.get_total_num_kv_heads()`) is a ["model", path] that lint answers from
# config.json, and a field its other methods set is unknown.
MODEL_CLASS = "ModelConfig"
MODEL_ENTRIES = ("verify_with_parallel_config",)
MAX_INLINE = 3
# EngineArgs' own expressions where it builds a class: `self.x` is a flag, other names unknown.
ENGINE = Context(self_kind="dest", locals=frozenset())
# Where the serve command checks its parsed flags (validate_parsed_serve_args).
SERVE_CHECK_FILES = CLI_ARGS_FILES + ("vllm/entrypoints/launchers/cli_args.py",)


def checked_classes(src: Source, classes: Classes) -> Dict[str, Any]:
    """Return {"classes": {name: {"program", "defaults", "built"}}, "rewritten": [dests]}.

    Every check is read, those a rule words better too: which rule explains which message is
    the rules' to say (Rule.explains), not the reader's.
    """
    engine = _engine_args(src)
    if engine is None:
        return {}
    emod, ecls = engine
    builds = _constructions(ecls)
    nested = _nested_flags(src, classes, emod, ecls)
    out: Dict[str, Any] = {}
    for name in CHECKED_CLASSES:
        found = _find_class(src, name)
        if found is None:
            continue
        mod, cls = found
        flag = nested.get(name)
        # A class built from a JSON flag starts from the JSON as written, which pydantic checks
        # and converts first: what is inside a value (its items, methods) is read by
        # value_checks, whose program lint runs after it checks the value's type (nested_values).
        program = _class_program(src, classes, mod, cls, contents=flag is None)
        if not any(isinstance(item, ir.Guard) for item in program):
            continue
        built = builds.get(name)
        if flag is not None:
            built = {"flag": flag}
        elif built is None:
            continue
        out[name] = {"program": ir.program_json(program), "defaults": _literal_defaults(classes, mod, cls),
                     "built": built}
    model = _model_check(src, classes, builds)
    if model is not None:
        out[MODEL_CLASS] = model
    # EngineArgs' own checks (`__post_init__`, `create_engine_config`) and the serve command's
    # see the flags themselves: their `self.x` / `args.x` is the flag's value.
    engine_program = _class_program(src, classes, emod, ecls, entries=("__post_init__", "create_engine_config"),
                                    builds=True)
    if any(isinstance(item, ir.Guard) for item in engine_program):
        out["EngineArgs"] = {"program": ir.program_json(engine_program), "defaults": {}, "built": {"flags": True}}
    serve = _serve_check(src)
    if serve:
        # what it checks is `vllm serve`'s namespace: its subparser is "serve"
        out["the serve command"] = {"program": ir.program_json(serve),
                                    "defaults": {"subparser": ir.to_json(ir.Const("serve"))},
                                    "built": {"flags": True}}
    return {"classes": out, "rewritten": sorted(_rewritten(ecls)), "envs": _env_kinds(src)} if out else {}


def _model_check(src: Source, classes: Classes, builds) -> Optional[Dict[str, Any]]:
    """Return ModelConfig's parallel-layout check as a class entry, its fields set elsewhere unknown."""
    found = _find_class(src, MODEL_CLASS)
    if found is None or MODEL_CLASS not in builds:
        return None
    mod, cls = found
    program = _class_program(src, classes, mod, cls, entries=MODEL_ENTRIES)
    if not any(isinstance(item, ir.Guard) for item in program):
        return None
    checked = {m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name in MODEL_ENTRIES}
    forget = [ir.Assign(ir.Const(True), ir.Name("field", name), UNKNOWN)
              for name in sorted(_set_by_methods(cls, checked))]
    return {"program": ir.program_json(tuple(forget) + program), "defaults": _literal_defaults(classes, mod, cls),
            "built": builds[MODEL_CLASS]}


def _set_by_methods(cls: ast.ClassDef, skip) -> Set[str]:
    """Return the fields the class's methods (but `skip`) assign, bar `self.x = x` of `__init__`."""
    out: Set[str] = set()
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef) or method in skip:
            continue
        params = {a.arg for a in method.args.args} if method.name == "__init__" else set()
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self" and not (
                            isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
                            and node.value.id == target.attr and target.attr in params):
                    out.add(target.attr)
    return out


def _serve_check(src: Source) -> Tuple[ir.Statement, ...]:
    for rel in SERVE_CHECK_FILES:
        mod = src.module_file(rel)
        for fn in (mod.tree.body if mod is not None else ()):
            if isinstance(fn, ast.FunctionDef) and fn.name == "validate_parsed_serve_args" and fn.args.args:
                return tuple(Reader(_policy(), {}, fn, self_name=fn.args.args[0].arg).read(fn.body))
    return ()


def _env_kinds(src: Source) -> Dict[str, Any]:
    """Return env var -> how envs.py reads it: "bool_int" (`bool(int(getenv(...)))`), "int", "str".

    `["default", kind, text]` when envs.py's getenv names a default and no module lint reads
    (envs.py, arg_utils, the config modules) writes the variable itself (0.8.5's VLLM_USE_V1
    is written on a V0 fallback): unset, the variable is that default.
    """
    mod = src.module_file("vllm/envs.py")
    written = _written_envs(src)
    out: Dict[str, Any] = {}
    for node in ast.walk(mod.tree) if mod is not None else ():
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Lambda)):
                continue
            body = value.body
            chain = []
            while isinstance(body, ast.Call) and isinstance(body.func, ast.Name) and body.args:
                chain.append(body.func.id)
                body = body.args[0]
            if isinstance(body, ast.Call) and last_name(body.func) == "getenv":
                kind = {("bool", "int"): "bool_int", ("int",): "int", (): "str"}.get(tuple(chain))
                default = body.args[1] if len(body.args) > 1 else None
                if kind and isinstance(default, ast.Constant) and isinstance(default.value, str) \
                        and key.value not in written:
                    out[key.value] = ["default", kind, default.value]
                elif kind:
                    out[key.value] = kind
    return out


def _written_envs(src: Source) -> Set[str]:
    """Return the variables `os.environ["X"] = ...` sets in envs.py, arg_utils or a config module."""
    out: Set[str] = set()
    mods = [src.module_file("vllm/envs.py"), src.module_file(ARG_UTILS)] + [src.module(d) for d in CONFIG_MODULES]
    for mod in mods:
        for node in ast.walk(mod.tree) if mod is not None else ():
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                    and last_name(node.value) == "environ" and isinstance(node.slice, ast.Constant):
                out.add(node.slice.value)
    return out


# -- where EngineArgs builds each class --------------------------------------------------------


def _engine_args(src: Source) -> Optional[Tuple[Module, ast.ClassDef]]:
    mod = src.module_file(ARG_UTILS)
    return src.find_class(mod, "EngineArgs") if mod is not None else None


def _find_class(src: Source, name: str) -> Optional[Tuple[Module, ast.ClassDef]]:
    for dotted in CONFIG_MODULES + ("vllm.config.lora", "vllm.config.structured_outputs",
                                    "vllm.config.kv_transfer", "vllm.config.observability"):
        mod = src.module(dotted)
        found = src.find_class(mod, name) if mod is not None else None
        if found is not None:
            return found
    return None


def constructions(src: Source) -> Dict[str, Dict[str, Any]]:
    """Return class -> {"when", "args"}: where EngineArgs builds each checked class once."""
    engine = _engine_args(src)
    return _constructions(engine[1]) if engine is not None else {}


def _constructions(ecls: ast.ClassDef) -> Dict[str, Dict[str, Any]]:
    """Return class -> {"when": expr, "args": {keyword: expr}} for classes built once."""
    seen: Dict[str, List[Dict[str, Any]]] = {}
    read = lambda n: expressions.expression(n, ENGINE)  # noqa: E731
    for method in ecls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        for call, conds in _calls_with_conditions(method.body, []):
            name = last_name(call.func)
            if name not in CHECKED_CLASSES + (MODEL_CLASS,) or not isinstance(call.func, ast.Name):
                continue
            args = {kw.arg: read(kw.value) for kw in call.keywords if kw.arg}
            when = ir.Logic("and", tuple(read(c) if positive else ir.Not(read(c)) for c, positive in conds))
            seen.setdefault(name, []).append({"when": ir.to_json(when),
                                              "args": {k: ir.to_json(v) for k, v in args.items()}})
    return {name: found[0] for name, found in seen.items() if len(found) == 1}


def _calls_with_conditions(body, conds):
    """Yield (Call, [(test, positive)]) for calls in `body`, with the `if`s around them."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from calls_in_expr(stmt.test, conds)
            yield from _calls_with_conditions(stmt.body, conds + [(stmt.test, True)])
            yield from _calls_with_conditions(stmt.orelse, conds + [(stmt.test, False)])
        elif isinstance(stmt, (ast.For, ast.While, ast.Try, ast.With)):
            unknown = conds + [(ast.Name(id="__unknown__"), True)]
            for field_name in ("body", "orelse", "finalbody"):
                yield from _calls_with_conditions(getattr(stmt, field_name, []), unknown)
            for handler in getattr(stmt, "handlers", []):
                yield from _calls_with_conditions(handler.body, unknown)
        elif not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            yield from calls_in_expr(stmt, conds)


def _rewritten(ecls: ast.ClassDef) -> Set[str]:
    """Return the EngineArgs fields its own methods assign: their value is not the user's."""
    out = set()
    for node in ast.walk(ecls):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    out.add(t.attr)
    return out


def _nested_flags(src: Source, classes: Classes, emod: Module, ecls: ast.ClassDef) -> Dict[str, str]:
    """Return class -> EngineArgs field whose JSON value builds it at parse time.

    A field annotated with the config class itself (`kv_transfer_config:
    Optional[KVTransferConfig]`, `compilation_config: CompilationConfig`).
    """
    out: Dict[str, str] = {}
    for name, info in classes.fields(emod, ecls).items():
        for node in ast.walk(info.annotation):
            if isinstance(node, (ast.Name, ast.Attribute)) and last_name(node) in CHECKED_CLASSES:
                out.setdefault(last_name(node), name)
    return out


def _literal_defaults(classes: Classes, mod: Module, cls: ast.ClassDef) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name in classes.fields(mod, cls):
        value = classes.field_default(mod, cls, name)
        if value is not UNRESOLVED and jsonable(value):
            out[name] = ir.to_json(const(value))
    return out


# -- a class's checking methods as a program ---------------------------------------------------


def _class_program(src: Source, classes: Classes, mod: Module, cls: ast.ClassDef,
                   entries: Optional[Tuple[str, ...]] = None, builds: bool = False,
                   contents: bool = True) -> Tuple[ir.Statement, ...]:
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    program: List[ir.Statement] = []
    if entries is not None:
        entries = [methods[n] for n in entries if n in methods]
    else:
        entries = [methods[n] for n in ENTRY_METHODS if n in methods]
        entries += [m for m in methods.values() if m.name not in ENTRY_METHODS and _after_validator(m)]
        entries += [m for name, m in sorted(methods.items()) if name.startswith("verify_with_")]
    properties = one_line_properties(cls)
    policy = _policy(builds=builds, contents=contents)
    for method in entries:
        reader = Reader(policy, methods, method, _param_classes(method), properties=properties,
                        constants=_module_constants(classes, mod, method))
        if cls.name == MODEL_CLASS:
            reader.model_of.add("self")
        program += reader.read(method.body)
    return tuple(program)


def _policy(builds: bool = False, contents: bool = True) -> Policy:
    """A config class's checks: under their conditions, `self.m()` read in place, any `self.x` a field."""
    return Policy(conditional=True, max_inline=MAX_INLINE, builds=frozenset(CHECKED_CLASSES) if builds else frozenset(),
                  model_class=MODEL_CLASS, contents=contents)


def _module_constants(classes: Classes, mod: Module, method: ast.FunctionDef) -> Dict[str, Any]:
    """Return the UPPER_CASE names `method` reads but never binds, that evaluate to literals."""
    bound = {a.arg for a in method.args.args + method.args.kwonlyargs}
    bound |= {n.id for n in ast.walk(method) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    out: Dict[str, Any] = {}
    for node in ast.walk(method):
        if isinstance(node, ast.Name) and node.id.isupper() and node.id not in bound and node.id not in out:
            value = classes.evaluate(node, mod)
            if value is not UNRESOLVED and jsonable(value):
                out[node.id] = value
    return out


def _after_validator(method: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and last_name(d.func) == "model_validator"
               and any(k.arg == "mode" and isinstance(k.value, ast.Constant) and k.value.value == "after"
                       for k in d.keywords) for d in method.decorator_list)


def _param_classes(method: ast.FunctionDef) -> Dict[str, str]:
    """Return parameter -> config class for `verify_with_x(self, x_config: XConfig)`."""
    out = {}
    for arg in method.args.args[1:]:
        if isinstance(arg.annotation, ast.Constant) and isinstance(arg.annotation.value, str) \
                and arg.annotation.value.endswith("Config"):     # `parallel_config: "ParallelConfig"`
            out[arg.arg] = arg.annotation.value.rsplit(".", 1)[-1]
        elif arg.annotation is not None:
            for node in ast.walk(arg.annotation):
                if isinstance(node, (ast.Name, ast.Attribute)) and (last_name(node) or "").endswith("Config"):
                    out[arg.arg] = last_name(node)
                    break
    return out
