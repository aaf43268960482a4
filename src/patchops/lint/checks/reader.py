"""The one reader of vLLM's check statements into the programs of ir.py.

Over 400 lines because both uses walk the same statements and must agree on what an assert,
a guard, an assignment and a loop of guards are; what differs is a `Policy`:

* a config class's checking methods (extract/guard_programs, facts `config_checks`):
  `conditional`, every `self.x` a field and every name a local, `self.m()` read in place up to
  `max_inline` calls deep, into `ir.Assign` / `ir.Guard` (and `ir.Build` where EngineArgs
  constructs a class of `builds`) under the `if`s around them;
* a nested config's post-init (extract/value_checks, facts `nested_configs[...]["checks"]`):
  top-level statements only, `self.x` a field only for the class's `fields` and only the names
  set here locals, into `ir.Let` / `ir.FieldGuard` / `ir.Each` / `ir.MaybeAdd` / `ir.Forget`;
  a guard on no field never sees the user's value and is dropped.

Expressions are extract/expressions.py's; whatever cannot be read is `ir.UNKNOWN` (it can hide
a check, never invent one), and what a statement not read may change is forgotten.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Any, Dict, FrozenSet, List, Optional, Set

from patchops.lint.checks import ir
from patchops.lint.checks.ir import UNKNOWN
from patchops.lint.extract import expressions
from patchops.lint.extract.expressions import PURE_BUILTINS, PURE_METHODS, Context
from patchops.lint.extract.source_tree import last_name

MUTATING_METHODS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort",
                              "reverse", "update", "add", "discard", "setdefault"})


@dataclass(frozen=True)
class Policy:
    """What differs between reading a config class's checks and a nested config's post-init.

    `conditional`: follow `if`s, each item under its conditions (else top-level statements
    only, the rest forgotten); `fields`: the only attributes of `self` that are fields (None:
    any); `max_inline`: how deep `self.m()` calls are read in place; `builds`: the classes
    whose construction is noted as `ir.Build`; `model_class`: the class whose instances'
    attributes are `["model", path]`; `contents`: Context.contents.
    """

    conditional: bool
    fields: Optional[FrozenSet[str]] = None
    max_inline: int = 0
    builds: FrozenSet[str] = frozenset()
    model_class: Optional[str] = None
    contents: bool = True


class Reader:
    """Flatten method bodies (and the `self.m()` calls they make) into one program's items."""

    def __init__(self, policy: Policy, methods: Dict[str, ast.FunctionDef],
                 method: Optional[ast.FunctionDef] = None, params: Optional[Dict[str, str]] = None,
                 self_name: str = "self", properties: Optional[Dict[str, ast.AST]] = None,
                 constants: Optional[Dict[str, Any]] = None):
        self.policy = policy
        self.methods = methods
        self.method = method
        self.params = params or {}
        self.self_name = self_name
        self.properties = properties or {}
        self.constants = constants or {}
        self.init_params = {a.arg for a in method.args.args[1:]} \
            if method is not None and method.name == "__init__" else set()
        self.items: List[Any] = []
        # the names holding the model class: parameters so annotated, locals a method so annotated returns
        self.model_of = {p for p, c in self.params.items() if c == policy.model_class}
        self.locals: Dict[str, Set[str]] = {}     # not conditional: local -> the fields its value was read from

    def read(self, body: List[ast.stmt]) -> List[Any]:
        self.block(body, [], 0)
        return self.items

    def block(self, body, conds: List[ir.Expr], depth: int) -> None:  # noqa: C901 - one branch per statement kind
        conds = list(conds)
        conditional = self.policy.conditional
        for stmt in body:
            if self.policy.builds and isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)):
                self.build(stmt, conds)
            if isinstance(stmt, ast.Return):
                return
            if isinstance(stmt, ast.Assert):
                self.guard(conds, ir.Not(self.expr(stmt.test)), stmt.test, stmt.msg, "AssertionError")
            elif isinstance(stmt, ast.If) and conditional:
                if self.branch(stmt, conds, depth):
                    return
            elif isinstance(stmt, ast.If) and _only_raises(stmt.body) and not stmt.orelse:
                exc = stmt.body[0].exc
                self.guard(conds, self.expr(stmt.test), stmt.test, _exception_message(exc), _exception_kind(exc))
                self.forget(stmt.test)
            elif isinstance(stmt, ast.If) and self.maybe_add(stmt):
                pass
            elif isinstance(stmt, ast.Raise) and conditional:
                if stmt.exc is not None and (last_name(_raised(stmt.exc)) or " ")[0].isupper():
                    self.guard(conds, ir.Const(True), None, _exception_message(stmt.exc), last_name(_raised(stmt.exc)))
                return
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and conditional:
                if stmt.value is not None and _calls_self(stmt.value):
                    self.forget(stmt.value)
                self.assign(stmt, conds)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self.let(stmt)
            elif isinstance(stmt, ast.With) and conditional:
                self.block(stmt.body, conds, depth)
            elif isinstance(stmt, ast.For) and self.loop_of_guards(stmt, conds, depth):
                pass
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and conditional:
                callee = _self_method(stmt.value)
                if callee in self.methods and depth < self.policy.max_inline \
                        and not self.methods[callee].args.args[1:]:
                    self.block(self.methods[callee].body, conds, depth + 1)
                elif callee is not None:
                    self.forget(stmt)
            elif not conditional or isinstance(stmt, (ast.For, ast.While, ast.Try)):
                self.forget(stmt)      # a loop's or try's effect is not followed

    def branch(self, stmt: ast.If, conds: List[ir.Expr], depth: int) -> bool:
        """Read both sides of an `if` under their conditions; return True when both leave.

        After `if c: raise`, what follows may assume `not c`: had c held, vLLM would have
        refused already, so a later guard that fires means a refusal either way (and an
        unknown `c` does not hide the checks after it).
        """
        if _calls_self(stmt.test):
            self.forget(stmt.test)
        test = self.expr(stmt.test)
        raises = _raises(stmt.body)
        self.block(stmt.body, conds + [test], depth)
        self.block(stmt.orelse, conds if raises else conds + [ir.Not(test)], depth)
        if _leaves(stmt.body) and not raises and not stmt.orelse:
            conds.append(ir.Not(test))      # `if c: return` guards what follows
        elif _leaves(stmt.body) and _leaves(stmt.orelse):
            return True
        return False

    def guard(self, conds, test: ir.Expr, node: Optional[ast.AST], msg: Optional[ast.AST], kind: str) -> None:
        if self.policy.conditional:
            self.items.append(ir.Guard(_all(conds), test, self.message(msg), kind))
            return
        fields = sorted(self.reads(node))
        if test is not UNKNOWN and fields:      # one on no field never sees the user's value
            self.items.append(ir.FieldGuard(test, self.message(msg), kind, tuple(fields)))

    def loop_of_guards(self, stmt: ast.For, conds, depth: int) -> bool:
        """Read `for m in xs: if test(m): raise` as guards that fire when some item passes.

        Conditional: a loop whose body is `if`s that do nothing but guard, each guard
        `ir.Some(m, xs, cond and test)`; else one `if test: raise`, an `ir.Each`. Return False
        to forget the loop instead.
        """
        if not isinstance(stmt.target, ast.Name) or stmt.orelse:
            return False
        if not self.policy.conditional:
            return self.each(stmt)
        if not all(isinstance(s, ast.If) for s in stmt.body):
            return False
        inner = Reader(replace(self.policy, builds=frozenset()), self.methods, self.method, self.params,
                       self_name=self.self_name, properties=self.properties, constants=self.constants)
        inner.model_of = self.model_of
        inner.block(stmt.body, [], depth)
        if not inner.items or any(not isinstance(item, ir.Guard) for item in inner.items):
            return False
        name, items = stmt.target.id, self.expr(stmt.iter)
        for item in inner.items:
            self.items.append(ir.Guard(_all(conds), ir.Some(name, items, ir.Logic("and", (item.cond, item.test))),
                                       item.message, item.exception))
        return True

    def each(self, stmt: ast.For) -> bool:
        if len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.If) \
                or not _only_raises(stmt.body[0].body) or stmt.body[0].orelse:
            return False
        var = stmt.target.id
        inner = stmt.body[0]
        exc = inner.body[0].exc
        saved = self.locals.get(var)
        self.locals[var] = self.reads(stmt.iter)
        iterable, test = self.expr(stmt.iter), self.expr(inner.test)
        fields = sorted(self.reads(stmt.iter) | self.reads(inner.test))
        if UNKNOWN not in (iterable, test) and fields:
            self.items.append(ir.Each(var, iterable, test, self.message(_exception_message(exc)),
                                      _exception_kind(exc), tuple(fields)))
        self.forget(stmt)
        if saved is None:
            self.locals.pop(var, None)
        else:
            self.locals[var] = saved
        return True

    def build(self, stmt, conds) -> None:
        """Note `ir.Build(cond, class, keywords)` for each class of `builds` that `stmt` builds.

        Run with EngineArgs' own program, a build sees the locals and rewritten flags at that
        point (0.10's `data_parallel_size_local`, computed before `ParallelConfig(...)`).
        """
        for call, inner in calls_in_expr(stmt, []):
            if isinstance(call.func, ast.Name) and call.func.id in self.policy.builds:
                when = conds + [self.expr(c) if positive else ir.Not(self.expr(c)) for c, positive in inner]
                self.items.append(ir.Build(_all(when), call.func.id,
                                           tuple((kw.arg, self.expr(kw.value)) for kw in call.keywords if kw.arg)))

    def assign(self, stmt, conds) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if isinstance(stmt.value, ast.Call) and _self_method(stmt.value) in self.methods:
            returns = self.methods[_self_method(stmt.value)].returns
            if returns is not None and last_name(returns) == self.policy.model_class:
                self.model_of.update(t.id for t in targets if isinstance(t, ast.Name))
        value = self.expr(stmt.value) if not isinstance(stmt, ast.AugAssign) and stmt.value is not None \
            else UNKNOWN
        for target in targets:
            ref = self.ref(target)
            if ref is not None:
                self.items.append(ir.Assign(_all(conds), ref, value))
            else:
                for node in ast.walk(target):
                    ref = self.ref(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
                    if ref is not None:
                        self.items.append(ir.Assign(_all(conds), ref, UNKNOWN))

    def let(self, stmt: ast.Assign) -> None:
        self.forget(stmt.value)
        name = stmt.targets[0].id
        value = self.expr(stmt.value)
        self.items.append(ir.Let(name, value))
        self.locals[name] = self.reads(stmt.value) if value is not UNKNOWN else set()

    def maybe_add(self, stmt: ast.If) -> bool:
        """Read `if ...: self.f.append(const)` (0.32 adds "+rotary_embedding" under pass flags)."""
        if stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Expr):
            return False
        call = stmt.body[0].value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append" and len(call.args) == 1
                and isinstance(call.args[0], ast.Constant) and self.field(call.func.value) is not None):
            return False
        self.forget(stmt.test)
        self.items.append(ir.MaybeAdd(self.field(call.func.value), call.args[0].value))
        return True

    def forget(self, node: ast.AST, seen: Optional[Set[str]] = None) -> None:
        """Mark what `node` may set or change as unknown, and what the methods it calls set."""
        seen = set() if seen is None else seen
        if self.policy.conditional:
            self.forget_assigned(node, seen)
        else:
            self.forget_changed(node, seen)

    def forget_assigned(self, node: ast.AST, seen: Set[str]) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                    for t in ast.walk(target):
                        ref = self.ref(t) if isinstance(t, (ast.Name, ast.Attribute)) else None
                        if ref is not None:
                            self.items.append(ir.Assign(ir.Const(True), ref, UNKNOWN))
            elif isinstance(sub, ast.Call) and _self_method(sub) is not None:
                name = _self_method(sub)
                if name in seen:
                    continue
                seen.add(name)
                callee = self.methods.get(name)
                if callee is None:
                    self.items.append(ir.Assign(ir.Const(True), ir.ALL, UNKNOWN))
                    return
                self.forget_assigned(callee, seen)

    def forget_changed(self, node: ast.AST, seen: Set[str]) -> None:
        """Also what a mutating method changes and a list handed to a call (it may change it)."""
        for sub in ast.walk(node):
            targets: List[ast.AST] = []
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = [sub.target]
            elif isinstance(sub, ast.With):
                targets = [i.optional_vars for i in sub.items if i.optional_vars is not None]
            elif isinstance(sub, ast.NamedExpr):
                targets = [sub.target]
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                owner = sub.func.value
                if _self_field(owner) is None and isinstance(owner, ast.Name) and owner.id == "self":
                    self.forget_method(sub.func.attr, seen)
                elif sub.func.attr in MUTATING_METHODS:
                    targets = [owner]
            if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Name) and sub.func.id in PURE_BUILTINS) \
                    and not (isinstance(sub.func, ast.Attribute) and sub.func.attr in PURE_METHODS) \
                    and last_name(getattr(sub.func, "value", None)) not in ("logger", "warnings"):
                targets = targets + list(sub.args)
            for target in targets:
                for t in ast.walk(target):
                    field = self.field(t)
                    if field is not None:
                        self.items.append(ir.Forget(ir.Name("field", field)))
                    elif isinstance(t, ast.Name) and t.id in self.locals:
                        self.items.append(ir.Forget(ir.Name("local", t.id)))
                        self.locals[t.id] = set()

    def forget_method(self, name: str, seen: Set[str]) -> None:
        if name in seen:
            return
        seen.add(name)
        method = self.methods.get(name)
        if method is None:       # inherited or dynamic: it may change any field
            for field in sorted(self.policy.fields or ()):
                self.items.append(ir.Forget(ir.Name("field", field)))
            return
        for sub in ast.walk(method):
            if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) \
                    and self.field(sub) is not None:
                self.items.append(ir.Forget(ir.Name("field", sub.attr)))
        self.forget_changed(method, seen)

    def field(self, node: ast.AST) -> Optional[str]:
        """Return x for `self.x` when x is a field of the policy."""
        name = _self_field(node, self.self_name)
        return name if name is not None and (self.policy.fields is None or name in self.policy.fields) else None

    def reads(self, node: ast.AST) -> Set[str]:
        """Return the fields `node` reads, through the locals it reads."""
        out: Set[str] = set()
        for sub in ast.walk(node):
            field = self.field(sub)
            if field is not None:
                out.add(field)
            elif isinstance(sub, ast.Name) and sub.id in self.locals:
                out |= self.locals[sub.id]
        return out

    def ref(self, node) -> Optional[ir.Name]:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.self_name:
            return ir.Name("field", node.attr)
        if isinstance(node, ast.Name):
            return ir.Name("local", node.id)
        return None

    def message(self, node: Optional[ast.AST]) -> ir.Message:
        return expressions.message(node, self.context())

    def expr(self, node: ast.AST) -> ir.Expr:
        return expressions.expression(node, self.context())

    def context(self) -> Context:
        return Context(self_name=self.self_name, fields=self.policy.fields,
                       locals=None if self.policy.conditional else frozenset(self.locals),
                       params=self.params, init_params=frozenset(self.init_params), properties=self.properties,
                       model_of=frozenset(self.model_of), constants=self.constants, contents=self.policy.contents)


def calls_in_expr(node, conds):
    """Yield (Call, [(test, positive)]) for the calls in `node`, with the `x if c else y` around them."""
    if isinstance(node, ast.IfExp):
        yield from calls_in_expr(node.test, conds)
        yield from calls_in_expr(node.body, conds + [(node.test, True)])
        yield from calls_in_expr(node.orelse, conds + [(node.test, False)])
        return
    if isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.DictComp, ast.SetComp)):
        return
    if isinstance(node, ast.Call):
        yield node, conds
    for child in ast.iter_child_nodes(node):
        yield from calls_in_expr(child, conds)


def _all(conds: List[ir.Expr]) -> ir.Expr:
    return ir.Logic("and", tuple(conds))


def _raised(exc: ast.AST) -> ast.AST:
    return exc.func if isinstance(exc, ast.Call) else exc


def _exception_kind(exc: ast.AST) -> str:
    return last_name(_raised(exc)) or "Exception"


def _exception_message(exc: ast.AST) -> Optional[ast.AST]:
    return exc.args[0] if isinstance(exc, ast.Call) and exc.args else None


def _leaves(body) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _raises(body) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _only_raises(body: List[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None


def _calls_self(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _self_method(n) is not None for n in ast.walk(node))


def _self_method(call: ast.Call) -> Optional[str]:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None


def _self_field(node: ast.AST, self_name: str = "self") -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
        return node.attr
    return None
