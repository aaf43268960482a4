"""Walk the functions that build `vllm serve`'s parser, as far as they add options.

A small interpreter over `ast`: it follows calls that are handed the parser, binds
`get_kwargs(Cls)` maps and the edits made to them, and unrolls loops over fields or literal
lists; each add_argument call it reaches goes to argparse_call.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from patchops.lint.facts.model import Flag
from patchops.lint.extract.argparse_call import (DELETE, ArgumentReader, FieldKwargs, KwargsMap,
                                                       kwargs_holder, subscript_index)
from patchops.lint.extract.hint_kwargs import KwargsStyle
from patchops.lint.extract.source_tree import Module, Source, last_name, str_const
from patchops.lint.extract.static_eval import Classes


class FlagReader:
    """Walk the functions that build `vllm serve`'s parser and turn add_argument into Flags."""

    def __init__(self, src: Source, classes: Classes, style: KwargsStyle, unresolved: List[str]):
        self.src = src
        self.classes = classes
        self.arguments = ArgumentReader(src, classes, style, unresolved)
        self.flags: List[Flag] = []
        self.unresolved = unresolved  # what did not resolve, in reading order, shared with arguments
        self._followed: Set[Tuple[int, int]] = set()

    # -- entry points ---------------------------------------------------------------------

    def read_serve_entry(self, mod: Module) -> bool:
        """Follow `vllm serve`'s parser from the functions of `mod` that build `serve_parser`.

        Only `serve_parser.add_argument(...)` counts there, and only calls that pass
        `serve_parser` are followed (make_arg_parser -> FrontendArgs/AsyncEngineArgs ->
        EngineArgs.add_cli_args); the chat/complete subparsers beside it are skipped.
        Return whether anything was followed.
        """
        before = len(self.flags)
        found = False
        for owner, fn in _functions(mod.tree):
            if any(isinstance(n, ast.Name) and n.id == "serve_parser" for n in ast.walk(fn)):
                found = True
                self._run(fn, mod, {"serve_parser"}, None)
        return found and len(self.flags) > before

    def read_module(self, mod: Module) -> None:
        """Fallback: interpret every function of `mod` that calls add_argument directly."""
        for owner, fn in _functions(mod.tree):
            if any(isinstance(n, ast.Call) and last_name(n.func) == "add_argument"
                   for n in ast.walk(fn)):
                binding = (mod, owner) if owner is not None and self._is_cls_method(fn) else None
                self._run(fn, mod, None, binding)

    @staticmethod
    def _is_cls_method(fn: ast.FunctionDef) -> bool:
        return bool(fn.args.args) and fn.args.args[0].arg == "cls"

    def _follow(self, call: ast.Call, mod: Module, receivers: Optional[Set[str]],
                env: Dict[str, Any]) -> None:
        """Interpret a called function or `Class.method` that is handed the parser."""
        parser_names = set(receivers) if receivers is not None else {"parser", "serve_parser"}
        if receivers is None and isinstance(env.get("<parser>"), str):
            parser_names.add(env["<parser>"])
        passed = [a for a in call.args if isinstance(a, ast.Name)] + \
            [k.value for k in call.keywords if isinstance(k.value, ast.Name)]
        if not any(a.id in parser_names for a in passed):
            return
        target = None
        if isinstance(call.func, ast.Name):
            found = self.src.resolve(mod, call.func.id)
            if found and found[0] == "func":
                target = (found[1], found[2], None)
        elif isinstance(call.func, ast.Attribute):
            owner = self.src.entity(call.func.value, mod)
            if owner and owner[0] == "class":
                method = self._method(owner[1], owner[2], call.func.attr)
                if method is not None:
                    target = (method[0], method[1], (owner[1], owner[2]))
        if target is None:
            return
        fmod, fn, binding = target
        key = (id(fn), id(binding[1]) if binding else 0)
        if key in self._followed:
            return
        self._followed.add(key)
        self._run(fn, fmod, None, binding)

    def _method(self, mod: Module, cls: ast.ClassDef, name: str, depth: int = 0):
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return mod, stmt
        if depth < 8:
            for bmod, bcls in self.classes.bases(mod, cls):
                got = self._method(bmod, bcls, name, depth + 1)
                if got is not None:
                    return got
        return None

    # -- statement interpreter ------------------------------------------------------------

    def _run(self, fn: ast.FunctionDef, mod: Module, receivers: Optional[Set[str]],
             cls_binding: Optional[Tuple[Module, ast.ClassDef]] = None) -> None:
        env: Dict[str, Any] = {}
        params = [a.arg for a in fn.args.args if a.arg not in ("self", "cls")]
        if params:
            env["<parser>"] = params[0]  # the parser is handed in first (parser, serve_parser)
        self._exec(fn.body, env, mod, receivers, cls_binding)

    def _exec(self, body: Sequence[ast.stmt], env: Dict[str, Any], mod: Module,
              receivers: Optional[Set[str]], cls_binding) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.Assign):
                self._assign(stmt, env, mod, cls_binding)
                self._calls(stmt, env, mod, receivers)
                continue
            elif isinstance(stmt, ast.Delete):
                for target in stmt.targets:
                    self._edit(target, DELETE, env, mod)
            elif isinstance(stmt, ast.For):
                self._for(stmt, env, mod, receivers, cls_binding)
                continue
            elif isinstance(stmt, (ast.If, ast.While)):
                self._exec(stmt.body, env, mod, receivers, cls_binding)
                self._exec(stmt.orelse, env, mod, receivers, cls_binding)
                continue
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                self._exec(stmt.body, env, mod, receivers, cls_binding)
                continue
            elif isinstance(stmt, ast.Try):
                self._exec(stmt.body, env, mod, receivers, cls_binding)
                for handler in stmt.handlers:
                    self._exec(handler.body, env, mod, receivers, cls_binding)
                self._exec(stmt.orelse, env, mod, receivers, cls_binding)
                self._exec(stmt.finalbody, env, mod, receivers, cls_binding)
                continue
            self._calls(stmt, env, mod, receivers)

    def _calls(self, stmt: ast.stmt, env: Dict[str, Any], mod: Module,
               receivers: Optional[Set[str]]) -> None:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                receiver = last_name(node.func.value)
                if receivers is None or receiver in receivers:
                    flag = self.arguments.read(node, env, mod)
                    if flag is not None:
                        self.flags.append(flag)
            else:
                self._follow(node, mod, receivers, env)

    def _assign(self, stmt: ast.Assign, env: Dict[str, Any], mod: Module, cls_binding) -> None:
        value = stmt.value
        for target in stmt.targets:
            if isinstance(target, ast.Subscript):
                self._edit(target, value, env, mod)
                continue
            if not isinstance(target, ast.Name):
                continue
            bound = self._kwargs_value(value, env, mod, cls_binding)
            if bound is not None:
                env[target.id] = bound
            elif isinstance(value, ast.Call) and last_name(value.func) == "_customize_cli_kwargs" \
                    and value.args and isinstance(value.args[0], ast.Name) \
                    and isinstance(env.get(value.args[0].id), KwargsMap):
                kmap = env[value.args[0].id]
                self._apply_customize(kmap, cls_binding)
                env[target.id] = kmap
            else:
                env.pop(target.id, None)

    def _kwargs_value(self, value: ast.AST, env: Dict[str, Any], mod: Module, cls_binding):
        """Return a KwargsMap/FieldKwargs for `get_kwargs(C)`, `get_kwargs(C)["f"]`, `X["f"]`."""
        if isinstance(value, ast.Call) and last_name(value.func) == "get_kwargs" and value.args:
            arg = value.args[0]
            if isinstance(arg, ast.Name) and arg.id == "cls" and cls_binding:
                return KwargsMap(cls_binding[0], cls_binding[1])
            found = self.src.entity(arg, mod)
            if found and found[0] == "class":
                return KwargsMap(found[1], found[2])
            return KwargsMap(mod, None)
        if isinstance(value, ast.Subscript):
            base = self._kwargs_value(value.value, env, mod, cls_binding) \
                if not isinstance(value.value, ast.Name) else env.get(value.value.id)
            key = str_const(subscript_index(value))
            if isinstance(base, KwargsMap) and key:
                return FieldKwargs(base, key)
        if isinstance(value, ast.Name) and isinstance(env.get(value.id), (KwargsMap, FieldKwargs)):
            return env[value.id]
        return None

    def _edit(self, target: ast.AST, value: Any, env: Dict[str, Any], mod: Module) -> None:
        """Record `X["f"]["k"] = v`, `Y["k"] = v` and `del X["f"]["k"]` on a kwargs map."""
        if not isinstance(target, ast.Subscript):
            return
        key = str_const(subscript_index(target))
        holder = kwargs_holder(target.value, env)
        if holder is None or key is None:
            return
        holder.kmap.edits.setdefault(holder.name, {})[key] = \
            DELETE if value is DELETE else (value, mod, dict(env))

    def _apply_customize(self, kmap: KwargsMap, cls_binding) -> None:
        """Replay `_customize_cli_kwargs` edits of the class and its bases (0.33 frontend)."""
        if cls_binding is None:
            return
        chain: List[Tuple[Module, ast.ClassDef]] = []

        def walk(m, c, depth=0):
            if depth > 8:
                return
            for bm, bc in self.classes.bases(m, c):
                walk(bm, bc, depth + 1)
            chain.append((m, c))

        walk(*cls_binding)
        for cmod, cls in chain:
            for stmt in cls.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == "_customize_cli_kwargs":
                    params = [a.arg for a in stmt.args.args]
                    if len(params) >= 2:
                        env = {params[1]: kmap}
                        self._exec([s for s in stmt.body if not isinstance(s, ast.Return)],
                                   env, cmod, set(), None)

    def _for(self, stmt: ast.For, env: Dict[str, Any], mod: Module,
             receivers: Optional[Set[str]], cls_binding) -> None:
        it = stmt.iter
        # for key, value in X.items(): add_argument(f"--{key.replace('_', '-')}", **value)
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items" \
                and isinstance(it.func.value, ast.Name) and isinstance(env.get(it.func.value.id), KwargsMap) \
                and isinstance(stmt.target, ast.Tuple) and len(stmt.target.elts) == 2:
            kmap: KwargsMap = env[it.func.value.id]
            kname, vname = (last_name(e) for e in stmt.target.elts)
            if kmap.cls is None:
                return
            for fname in self.classes.fields(kmap.mod, kmap.cls):
                loop_env = dict(env)
                loop_env[kname] = ast.Constant(fname)
                loop_env[vname] = FieldKwargs(kmap, fname)
                self._exec(stmt.body, loop_env, mod, receivers, cls_binding)
            return
        # for arg, type in [("--x", str), ...]: (0.11.0's deprecated --guided-decoding-*)
        if isinstance(it, (ast.List, ast.Tuple)):
            names = [stmt.target] if isinstance(stmt.target, ast.Name) else \
                list(stmt.target.elts) if isinstance(stmt.target, ast.Tuple) else []
            for item in it.elts:
                loop_env = dict(env)
                values = item.elts if isinstance(item, ast.Tuple) and len(names) > 1 else [item]
                for target, value in zip(names, values):
                    if isinstance(target, ast.Name):
                        loop_env[target.id] = value
                self._exec(stmt.body, loop_env, mod, receivers, cls_binding)
            return
        if any(isinstance(n, ast.Call) and last_name(n.func) == "add_argument" for n in ast.walk(stmt)):
            self.unresolved.append(f"{mod.rel}:{stmt.lineno}: options added in a loop over "
                                   f"{ast.unparse(it)[:60]}")


def _functions(tree: ast.Module) -> Iterator[Tuple[Optional[ast.ClassDef], ast.FunctionDef]]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield node, sub
