"""The checks vLLM's config classes run when they are built, read with `ast` as small programs.

Over 400 lines because the method reader and the reader of where EngineArgs builds each class
walk the same methods and must agree on what a condition is (a build inside EngineArgs' own
program sees the locals computed before it), and ModelConfig's check and the environment
defaults are read by the same walk; the expression translation itself lives in
expressions (shared with value_checks).

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
                reader = _Reader({}, {}, fn, self_name=fn.args.args[0].arg)
                reader.block(fn.body, [], 0)
                return tuple(reader.items)
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
            yield from _calls_in_expr(stmt.test, conds)
            yield from _calls_with_conditions(stmt.body, conds + [(stmt.test, True)])
            yield from _calls_with_conditions(stmt.orelse, conds + [(stmt.test, False)])
        elif isinstance(stmt, (ast.For, ast.While, ast.Try, ast.With)):
            unknown = conds + [(ast.Name(id="__unknown__"), True)]
            for field_name in ("body", "orelse", "finalbody"):
                yield from _calls_with_conditions(getattr(stmt, field_name, []), unknown)
            for handler in getattr(stmt, "handlers", []):
                yield from _calls_with_conditions(handler.body, unknown)
        elif not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            yield from _calls_in_expr(stmt, conds)


def _calls_in_expr(node, conds):
    if isinstance(node, ast.IfExp):
        yield from _calls_in_expr(node.test, conds)
        yield from _calls_in_expr(node.body, conds + [(node.test, True)])
        yield from _calls_in_expr(node.orelse, conds + [(node.test, False)])
        return
    if isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.DictComp, ast.SetComp)):
        return
    if isinstance(node, ast.Call):
        yield node, conds
    for child in ast.iter_child_nodes(node):
        yield from _calls_in_expr(child, conds)


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
    for method in entries:
        reader = _Reader(methods, _param_classes(method), method, properties=properties)
        reader.contents = contents
        reader.constants = _module_constants(classes, mod, method)
        reader.builds = builds
        if cls.name == MODEL_CLASS:
            reader.model_of.add("self")
        reader.block(method.body, [], 0)
        program += reader.items
    return tuple(program)


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


class _Reader:
    """Flatten one method (and the `self.m()` calls it makes) into assign/guard items."""

    def __init__(self, methods, params: Dict[str, str], method: ast.FunctionDef,
                 self_name: str = "self", properties: Optional[Dict[str, ast.AST]] = None):
        self.methods = methods
        self.method = method
        self.properties = properties or {}
        self.self_name = self_name
        self.params = params
        self.init_params = {a.arg for a in method.args.args[1:]} if method.name == "__init__" else set()
        self.items: List[ir.Statement] = []
        self.builds = False     # EngineArgs: also note where it builds a checked class
        # the names holding a ModelConfig: parameters so annotated, locals a method so annotated returns
        self.model_of = {p for p, c in params.items() if c == MODEL_CLASS}
        self.constants: Dict[str, Any] = {}
        self.contents = True    # read into values (Context.contents)

    def cond(self, conds: List[ir.Expr]) -> ir.Expr:
        return ir.Logic("and", tuple(conds))

    def block(self, body, conds: List[ir.Expr], depth: int) -> None:
        conds = list(conds)
        for stmt in body:
            if self.builds and isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)):
                self.build(stmt, conds)
            if isinstance(stmt, ast.If):
                if _calls_self(stmt.test):
                    self.forget(stmt.test, conds)
                # After `if c: raise`, what follows may assume `not c`: had c held, vLLM would
                # have refused already, so a later guard that fires means a refusal either way
                # (and an unknown `c` does not hide the checks after it).
                test = self.expr(stmt.test)
                raises = _raises(stmt.body)
                self.block(stmt.body, conds + [test], depth)
                self.block(stmt.orelse, conds if raises else conds + [ir.Not(test)], depth)
                if _leaves(stmt.body) and not raises and not stmt.orelse:
                    conds.append(ir.Not(test))      # `if c: return` guards what follows
                elif _leaves(stmt.body) and _leaves(stmt.orelse):
                    return
            elif isinstance(stmt, ast.Raise):
                if stmt.exc is not None:
                    self.guard(conds, ir.Const(True), stmt.exc)
                return
            elif isinstance(stmt, ast.Assert):
                self.items.append(ir.Guard(self.cond(conds), ir.Not(self.expr(stmt.test)),
                                           self.message(stmt.msg), "AssertionError"))
            elif isinstance(stmt, ast.Return):
                return
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                if stmt.value is not None and _calls_self(stmt.value):
                    self.forget(stmt.value, conds)
                self.assign(stmt, conds)
            elif isinstance(stmt, ast.With):
                self.block(stmt.body, conds, depth)
            elif isinstance(stmt, ast.For) and self.loop_of_guards(stmt, conds, depth):
                pass
            elif isinstance(stmt, (ast.For, ast.While, ast.Try)):
                self.forget(stmt, conds)      # a loop's or try's effect is not followed
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                callee = _self_method(stmt.value)
                if callee in self.methods and depth < MAX_INLINE and not self.methods[callee].args.args[1:]:
                    self.block(self.methods[callee].body, conds, depth + 1)
                elif callee is not None:
                    self.forget(stmt, conds)

    def loop_of_guards(self, stmt: ast.For, conds, depth: int) -> bool:
        """Read `for m in xs: if test(m): raise` as guards that fire when some item passes.

        Only a loop whose body is `if`s that do nothing but guard is read so: each guard becomes
        `ir.Some(m, xs, cond and test)`. Return False to forget the loop instead.
        """
        if not isinstance(stmt.target, ast.Name) or stmt.orelse \
                or not all(isinstance(s, ast.If) for s in stmt.body):
            return False
        inner = _Reader(self.methods, self.params, self.method, self_name=self.self_name,
                        properties=self.properties)
        inner.model_of, inner.constants, inner.contents = self.model_of, self.constants, self.contents
        inner.block(stmt.body, [], depth)
        if not inner.items or any(not isinstance(item, ir.Guard) for item in inner.items):
            return False
        name, items = stmt.target.id, self.expr(stmt.iter)
        for item in inner.items:
            self.items.append(ir.Guard(self.cond(conds), ir.Some(name, items, ir.Logic("and", (item.cond, item.test))),
                                       item.message, item.exception))
        return True

    def build(self, stmt, conds) -> None:
        """Note `ir.Build(cond, class, keywords)` for each checked class `stmt` builds.

        Run with EngineArgs' own program, a build sees the locals and rewritten flags at that
        point (0.10's `data_parallel_size_local`, computed before `ParallelConfig(...)`).
        """
        for call, inner in _calls_in_expr(stmt, []):
            if isinstance(call.func, ast.Name) and call.func.id in CHECKED_CLASSES:
                when = conds + [self.expr(c) if positive else ir.Not(self.expr(c)) for c, positive in inner]
                self.items.append(ir.Build(self.cond(when), call.func.id,
                                           tuple((kw.arg, self.expr(kw.value)) for kw in call.keywords if kw.arg)))

    def guard(self, conds, test, exc: ast.AST) -> None:
        if isinstance(exc, ast.Call):
            kind, message = last_name(exc.func), self.message(exc.args[0] if exc.args else None)
        else:
            kind, message = last_name(exc), ()
        if kind and kind[0].isupper():
            self.items.append(ir.Guard(self.cond(conds), test, message, kind))

    def assign(self, stmt, conds) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if isinstance(stmt.value, ast.Call) and _self_method(stmt.value) in self.methods:
            returns = self.methods[_self_method(stmt.value)].returns
            if returns is not None and last_name(returns) == MODEL_CLASS:
                self.model_of.update(t.id for t in targets if isinstance(t, ast.Name))
        value = self.expr(stmt.value) if not isinstance(stmt, ast.AugAssign) and stmt.value is not None \
            else UNKNOWN
        for target in targets:
            ref = self.ref(target)
            if ref is not None:
                self.items.append(ir.Assign(self.cond(conds), ref, value))
            else:
                for node in ast.walk(target):
                    ref = self.ref(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
                    if ref is not None:
                        self.items.append(ir.Assign(self.cond(conds), ref, UNKNOWN))

    def forget(self, stmt, conds, seen: Optional[Set[str]] = None) -> None:
        """Mark every field and local `stmt` may set as unknown, and what the methods it calls set."""
        seen = set() if seen is None else seen
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    for t in ast.walk(target):
                        ref = self.ref(t) if isinstance(t, (ast.Name, ast.Attribute)) else None
                        if ref is not None:
                            self.items.append(ir.Assign(ir.Const(True), ref, UNKNOWN))
            elif isinstance(node, ast.Call) and _self_method(node) is not None:
                name = _self_method(node)
                if name in seen:
                    continue
                seen.add(name)
                callee = self.methods.get(name)
                if callee is None:
                    self.items.append(ir.Assign(ir.Const(True), ir.ALL, UNKNOWN))
                    return
                self.forget(callee, conds, seen)

    def ref(self, node) -> Optional[ir.Name]:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.self_name:
            return ir.Name("field", node.attr)
        if isinstance(node, ast.Name):
            return ir.Name("local", node.id)
        return None

    def message(self, node) -> ir.Message:
        return expressions.message(node, self.context())

    def expr(self, node) -> ir.Expr:
        return expressions.expression(node, self.context())

    def context(self) -> Context:
        return Context(self_name=self.self_name, params=self.params, init_params=frozenset(self.init_params),
                       properties=self.properties, model_of=frozenset(self.model_of), constants=self.constants,
                       contents=self.contents)


def _leaves(body) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _raises(body) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _calls_self(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _self_method(n) is not None for n in ast.walk(node))


def _self_method(call: ast.Call) -> Optional[str]:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None
