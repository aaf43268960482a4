"""Read a vLLM copy's facts from its source with stdlib `ast`, never importing it.

The linter runs on boxes where importing vLLM needs the accelerator (and takes seconds), so
everything here is static: parse the few files that define the command line, follow imports
inside the `vllm` package only, and resolve what resolves to a literal. Anything that does
not resolve is left out rather than guessed.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from patchops.locate import read_version
from patchops.lint.facts import Facts, Flag

# Files whose add_argument calls make up `vllm serve`'s options (paths relative to the site
# directory). cli_args.py moved to entrypoints/common/ by 0.33.0; the serve subparser's own
# options (model_tag, --config, --headless) lived in scripts.py (0.6.3) and
# entrypoints/cli/serve.py (0.7.3-0.9.2) before moving into make_arg_parser (0.10.0).
ARG_UTILS = "vllm/engine/arg_utils.py"
CLI_ARGS_FILES = ("vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/common/cli_args.py")
SERVE_PARSER_FILES = ("vllm/scripts.py", "vllm/entrypoints/cli/serve.py")

# Where the attention-backend enum lives, newest first (reference §5).
BACKEND_ENUMS = (
    ("vllm/v1/attention/backends/registry.py", "AttentionBackendEnum"),  # 0.15+
    ("vllm/attention/backends/registry.py", "AttentionBackendEnum"),     # 0.12
    ("vllm/platforms/interface.py", "_Backend"),                         # 0.7.3-0.11
    ("vllm/attention/selector.py", "_Backend"),                          # 0.6.3
)
MULTI_STEP_RUNNER = "vllm/worker/multi_step_model_runner.py"  # removed in 0.10.1
ENVS = "vllm/envs.py"
# The flash-attn extension whose absence makes V0 fall back to XFORMERS (reference §5):
# 0.6.3 ships vllm_flash_attn_c.abi3.so, 0.7.3+ _vllm_fa2_C.abi3.so and _vllm_fa3_C.abi3.so.
FLASH_ATTN_SO = (
    "vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so",
    "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so",
    "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so",
)
HARDCODE_SITES = (("ModelConfig", "enforce_eager"), ("ParallelConfig", "disable_custom_all_reduce"))

_BUILTIN_TYPES = {"int", "float", "str", "bool", "dict", "list", "tuple", "set", "bytes"}
_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}
_MAX_DEPTH = 25


class _Unresolved:
    """Marker for a value that does not resolve to a literal."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNRESOLVED"


UNRESOLVED: Any = _Unresolved()


# --------------------------------------------------------------------------------------------
# Source tree: modules, symbols, import following


@dataclass
class Module:
    name: str
    rel: str
    tree: ast.Module
    symbols: Dict[str, tuple] = field(default_factory=dict)


class Source:
    """Parse vLLM modules of one site directory on demand and remember every file consulted."""

    def __init__(self, site_dir: Path):
        self.site = Path(site_dir)
        self.consulted: Set[str] = set()  # files read or looked for: the facts cache hashes them
        self.notes: List[str] = []
        self._modules: Dict[str, Optional[Module]] = {}

    def stat(self, rel: str) -> Optional[os.stat_result]:
        """Stat `rel` under the site dir and record it as an input of the facts."""
        self.consulted.add(rel)
        try:
            return os.stat(self.site / rel)
        except OSError:
            return None

    def exists(self, rel: str) -> bool:
        return self.stat(rel) is not None

    def module_file(self, rel: str) -> Optional[Module]:
        """Return the parsed module at `rel`, or None if absent or unparsable (noted)."""
        name = rel[:-3].replace("/", ".")
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        if rel in self._modules:
            return self._modules[rel]
        mod = None
        if self.stat(rel) is not None:
            try:
                text = (self.site / rel).read_text(encoding="utf-8", errors="replace")
                tree = ast.parse(text, filename=rel)
            except (SyntaxError, ValueError, OSError) as exc:
                self.notes.append(f"{rel}: skipped, cannot parse ({exc.__class__.__name__}: {exc})")
            else:
                mod = Module(name=name, rel=rel, tree=tree)
                mod.symbols = _collect_symbols(tree, name, rel.endswith("__init__.py"))
        self._modules[rel] = mod
        return mod

    def module(self, dotted: str) -> Optional[Module]:
        """Return the parsed `vllm.*` module `dotted` (file or package), else None."""
        if not (dotted == "vllm" or dotted.startswith("vllm.")):
            return None  # never follow imports outside vLLM (torch, transformers, ...)
        key = "mod:" + dotted
        if key in self._modules:
            return self._modules[key]
        base = dotted.replace(".", "/")
        mod = None
        for rel in (base + ".py", base + "/__init__.py"):
            mod = self.module_file(rel)
            if mod is not None:
                break
        self._modules[key] = mod
        return mod

    # -- symbol resolution ----------------------------------------------------------------

    def resolve(self, mod: Module, name: str, depth: int = 0) -> Optional[tuple]:
        """Resolve `name` in `mod` to ("class", mod, ClassDef) | ("value", mod, expr) |
        ("module", mod) | ("func", mod, FunctionDef) | ("external", qualname) | None."""
        if depth > _MAX_DEPTH:
            return None
        entry = mod.symbols.get(name)
        if entry is None:
            return None
        kind = entry[0]
        if kind in ("class", "func"):
            return (kind, mod, entry[1])
        if kind == "value":
            return ("value", mod, entry[1])
        if kind == "module":
            target = self.module(entry[1])
            return ("module", target) if target else ("external", entry[1])
        if kind == "from":
            source_name, attr = entry[1], entry[2]
            target = self.module(source_name)
            if target is not None and attr in target.symbols:
                return self.resolve(target, attr, depth + 1)
            sub = self.module(source_name + "." + attr)
            if sub is not None:
                return ("module", sub)
            return ("external", source_name + "." + attr)
        return None

    def entity(self, expr: ast.AST, mod: Module, depth: int = 0) -> Optional[tuple]:
        """Resolve a Name or dotted Attribute expression to an entity (see `resolve`)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            return self.resolve(mod, expr.id, depth + 1)
        if isinstance(expr, ast.Attribute):
            owner = self.entity(expr.value, mod, depth + 1)
            if owner is None:
                return None
            if owner[0] == "module":
                if expr.attr in owner[1].symbols:
                    return self.resolve(owner[1], expr.attr, depth + 1)
                sub = self.module(owner[1].name + "." + expr.attr)
                return ("module", sub) if sub else None
            if owner[0] == "external":
                return ("external", owner[1] + "." + expr.attr)
            if owner[0] == "class":
                return ("attr", owner[1], owner[2], expr.attr)
        return None

    def find_class(self, mod: Module, name: str) -> Optional[Tuple[Module, ast.ClassDef]]:
        found = self.resolve(mod, name)
        if found and found[0] == "class":
            return found[1], found[2]
        return None


def _collect_symbols(tree: ast.Module, modname: str, is_package: bool) -> Dict[str, tuple]:
    """Map top-level names to their definitions; `if`/`try` bodies win over their fallbacks."""
    symbols: Dict[str, tuple] = {}
    package = modname if is_package else modname.rpartition(".")[0]

    def absolute(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = package.split(".")
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts)
        return f"{base}.{node.module}" if node.module else base

    def visit(body: Sequence[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                symbols[node.name] = ("class", node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                symbols[node.name] = ("func", node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        symbols[target.id] = ("value", node.value)
            elif isinstance(node, ast.AnnAssign):
                if isinstance(node.target, ast.Name) and node.value is not None:
                    symbols[node.target.id] = ("value", node.value)
            elif isinstance(node, ast.ImportFrom):
                source = absolute(node)
                for alias in node.names:
                    if alias.name != "*":
                        symbols[alias.asname or alias.name] = ("from", source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        symbols[alias.asname] = ("module", alias.name)
                    else:
                        head = alias.name.split(".")[0]
                        symbols.setdefault(head, ("module", head))
            elif isinstance(node, ast.If):
                visit(node.orelse)
                visit(node.body)
            elif isinstance(node, ast.Try):
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.body)
            elif type(node).__name__ == "TypeAlias":  # `type X = ...` (Python 3.12 syntax)
                name = getattr(node, "name", None)
                if isinstance(name, ast.Name):
                    symbols[name.id] = ("value", getattr(node, "value"))

    visit(tree.body)
    return symbols


def _last_name(expr: ast.AST) -> Optional[str]:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Call):
        return _last_name(expr.func)
    return None


def _field_kwargs(expr: ast.AST, env: Dict[str, Any]) -> Optional["FieldKwargs"]:
    """Return the FieldKwargs `expr` names: a variable holding one, or `kwargs_map["field"]`."""
    if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), FieldKwargs):
        return env[expr.id]
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) \
            and isinstance(env.get(expr.value.id), KwargsMap):
        fname = _str_const(_slice(expr))
        if fname:
            return FieldKwargs(env[expr.value.id], fname)
    return None


def _str_const(expr: Optional[ast.AST]) -> Optional[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    return None


# --------------------------------------------------------------------------------------------
# Classes: fields of (pydantic) dataclasses, enum members


@dataclass
class FieldInfo:
    name: str
    annotation: ast.AST
    value: Optional[ast.AST]
    mod: Module
    cls: ast.ClassDef


class Classes:
    """Dataclass fields, enum members and literal evaluation over a `Source`."""

    def __init__(self, src: Source):
        self.src = src
        self._fields: Dict[int, Dict[str, FieldInfo]] = {}

    def bases(self, mod: Module, cls: ast.ClassDef) -> Iterator[Tuple[Module, ast.ClassDef]]:
        for base in cls.bases:
            found = self.src.entity(base, mod)
            if found and found[0] == "class":
                yield found[1], found[2]

    def base_names(self, mod: Module, cls: ast.ClassDef, depth: int = 0) -> Set[str]:
        """Return the last names of all bases, transitively (resolvable ones followed)."""
        names = {n for n in (_last_name(b) for b in cls.bases) if n}
        if depth < 8:
            for bmod, bcls in self.bases(mod, cls):
                names |= self.base_names(bmod, bcls, depth + 1)
        return names

    def is_enum(self, mod: Module, cls: ast.ClassDef) -> bool:
        return bool(self.base_names(mod, cls) & _ENUM_BASES)

    def is_dataclass(self, mod: Module, cls: ast.ClassDef) -> bool:
        # vLLM decorates configs with @dataclass, @pydantic.dataclasses.dataclass or @config
        # (vllm/config/utils.py, which applies a pydantic dataclass from 0.12).
        for deco in cls.decorator_list:
            if _last_name(deco) in ("dataclass", "config"):
                return True
        return False

    def fields(self, mod: Module, cls: ast.ClassDef, depth: int = 0) -> Dict[str, FieldInfo]:
        """Return dataclass fields in definition order, inherited ones first."""
        key = id(cls)
        if key in self._fields:
            return self._fields[key]
        out: Dict[str, FieldInfo] = {}
        if depth < 8:
            for bmod, bcls in reversed(list(self.bases(mod, cls))):
                out.update(self.fields(bmod, bcls, depth + 1))
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            ann = stmt.annotation
            head = ann.value if isinstance(ann, ast.Subscript) else ann
            if _last_name(head) in ("ClassVar", "InitVar", "KW_ONLY"):
                continue
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str) and \
                    ann.value.split("[")[0].split(".")[-1] in ("ClassVar", "InitVar"):
                continue
            out[stmt.target.id] = FieldInfo(stmt.target.id, ann, stmt.value, mod, cls)
        self._fields[key] = out
        return out

    def class_constant(self, cls: ast.ClassDef, name: str) -> Optional[ast.AST]:
        """Return the value expression of a class-level assignment `name = ...`."""
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign):
                if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                    return stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and stmt.target.id == name and stmt.value is not None:
                return stmt.value
        return None

    def enum_members(self, mod: Module, cls: ast.ClassDef) -> List[Tuple[str, ast.AST]]:
        out = []
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if not name.startswith("_"):
                    out.append((name, stmt.value))
        return out

    # -- defaults -------------------------------------------------------------------------

    def field_default(self, mod: Module, cls: ast.ClassDef, name: str, depth: int = 0) -> Any:
        """Resolve the default of dataclass field `name` (unwrapping field()/Field())."""
        info = self.fields(mod, cls).get(name)
        if info is None:
            # Not a field: maybe a class constant (ClassVar) or an enum member.
            value = self.class_constant(cls, name)
            if value is None:
                for bmod, bcls in self.bases(mod, cls):
                    got = self.field_default(bmod, bcls, name, depth + 1)
                    if got is not UNRESOLVED:
                        return got
                return UNRESOLVED
            return self.evaluate(value, mod, cls, depth + 1)
        if info.value is None:
            return UNRESOLVED  # a required field
        return self.default_of(info.value, info.mod, info.cls, depth + 1)

    def default_of(self, value: ast.AST, mod: Module, cls: Optional[ast.ClassDef],
                   depth: int = 0) -> Any:
        """Evaluate a field's right-hand side, unwrapping dataclasses.field / pydantic Field."""
        if isinstance(value, ast.Call) and _last_name(value.func) in ("field", "Field"):
            kwargs = {k.arg: k.value for k in value.keywords if k.arg}
            if "default" in kwargs:
                return self.evaluate(kwargs["default"], mod, cls, depth + 1)
            if "default_factory" in kwargs:
                return self.factory(kwargs["default_factory"], mod, cls, depth + 1)
            if value.args and _last_name(value.func) == "Field":
                first = value.args[0]
                if isinstance(first, ast.Constant) and first.value is Ellipsis:
                    return UNRESOLVED
                return self.evaluate(first, mod, cls, depth + 1)
            return UNRESOLVED
        return self.evaluate(value, mod, cls, depth + 1)

    def factory(self, expr: ast.AST, mod: Module, cls: Optional[ast.ClassDef], depth: int) -> Any:
        """Evaluate `default_factory=` to the value it would produce, when literal."""
        if isinstance(expr, ast.Name) and expr.id in ("list", "dict", "set", "tuple"):
            return {"list": [], "dict": {}, "set": [], "tuple": []}[expr.id]
        if isinstance(expr, ast.Lambda) and not expr.args.args:
            return self.evaluate(expr.body, mod, cls, depth + 1)
        return UNRESOLVED  # a nested config class or a function

    def evaluate(self, expr: ast.AST, mod: Module, cls: Optional[ast.ClassDef] = None,
                 depth: int = 0, env: Optional[Dict[str, ast.AST]] = None) -> Any:
        """Evaluate `expr` to a literal, following names, `Cls.attr` and `get_field()`."""
        if depth > _MAX_DEPTH:
            return UNRESOLVED
        ev = lambda e: self.evaluate(e, mod, cls, depth + 1, env)  # noqa: E731
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, bytes) or expr.value is Ellipsis:
                return UNRESOLVED
            return expr.value
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            items: List[Any] = []
            for elt in expr.elts:
                if isinstance(elt, ast.Starred):
                    inner = ev(elt.value)
                    if inner is UNRESOLVED:
                        inner = self._dict_keys(elt.value, mod, depth + 1)
                    if isinstance(inner, (list, tuple, dict)):
                        items.extend(list(inner))
                        continue
                    return UNRESOLVED
                got = ev(elt)
                if got is UNRESOLVED:
                    return UNRESOLVED
                items.append(got)
            return tuple(items) if isinstance(expr, ast.Tuple) else items
        if isinstance(expr, ast.Dict):
            out = {}
            for k, v in zip(expr.keys, expr.values):
                if k is None:
                    inner = ev(v)
                    if not isinstance(inner, dict):
                        return UNRESOLVED
                    out.update(inner)
                    continue
                key, val = ev(k), ev(v)
                if key is UNRESOLVED or val is UNRESOLVED:
                    return UNRESOLVED
                out[key] = val
            return out
        if isinstance(expr, ast.UnaryOp):
            operand = ev(expr.operand)
            if operand is UNRESOLVED:
                return UNRESOLVED
            try:
                if isinstance(expr.op, ast.USub):
                    return -operand
                if isinstance(expr.op, ast.UAdd):
                    return +operand
                if isinstance(expr.op, ast.Not):
                    return not operand
            except TypeError:
                return UNRESOLVED
            return UNRESOLVED
        if isinstance(expr, ast.BinOp):
            left, right = ev(expr.left), ev(expr.right)
            if left is UNRESOLVED or right is UNRESOLVED:
                return UNRESOLVED
            ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                   ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
                   ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b,
                   ast.LShift: lambda a, b: a << b, ast.Mod: lambda a, b: a % b}
            op = ops.get(type(expr.op))
            if op is None:
                return UNRESOLVED
            try:
                if isinstance(expr.op, ast.Pow) and abs(right) > 256:
                    return UNRESOLVED
                return op(left, right)
            except Exception:
                return UNRESOLVED
        if isinstance(expr, ast.Name):
            if env and expr.id in env:
                return ev(env[expr.id])
            if cls is not None:
                value = self.class_constant(cls, expr.id)
                if value is not None:
                    return self.evaluate(value, mod, cls, depth + 1)
            found = self.src.resolve(mod, expr.id)
            return self._value_of(found, depth)
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("value", "name") and isinstance(expr.value, ast.Attribute):
                # LoadFormat.AUTO.value (0.8.5 LoadConfig.load_format)
                member = self.src.entity(expr.value, mod)
                if member and member[0] == "attr" and self.is_enum(member[1], member[2]):
                    if expr.attr == "name":
                        return member[3]
                    return self._value_of(member, depth)
            return self._value_of(self.src.entity(expr, mod), depth)
        if isinstance(expr, ast.Call):
            fname = _last_name(expr.func)
            if fname == "get_field" and len(expr.args) == 2:
                owner = self.src.entity(expr.args[0], mod)
                attr = _str_const(expr.args[1])
                if owner and owner[0] == "class" and attr:
                    return self.field_default(owner[1], owner[2], attr, depth + 1)
                return UNRESOLVED
            if fname in ("field", "Field"):
                return self.default_of(expr, mod, cls, depth + 1)
            if fname == "get_args" and len(expr.args) == 1:
                # get_args(QuantizationMethods): the values of a Literal alias (0.8.5+)
                lit = _get(Hints(self).atoms(expr.args[0], mod), "literal")
                return list(lit[1]) if lit else UNRESOLVED
            if isinstance(expr.func, ast.Name) and expr.func.id in ("int", "float", "str", "bool") \
                    and len(expr.args) == 1 and not expr.keywords:
                arg = ev(expr.args[0])
                if isinstance(arg, (int, float, str, bool)):
                    try:
                        return {"int": int, "float": float, "str": str, "bool": bool}[expr.func.id](arg)
                    except (ValueError, OverflowError):
                        return UNRESOLVED
                return UNRESOLVED
            if isinstance(expr.func, ast.Name) and expr.func.id in ("list", "dict", "set", "tuple") \
                    and not expr.keywords:
                if not expr.args:
                    return {} if expr.func.id == "dict" else []
                arg = ev(expr.args[0])
                if isinstance(arg, (list, tuple, dict)):
                    return dict(arg) if expr.func.id == "dict" else list(arg)
            return UNRESOLVED
        return UNRESOLVED

    def _dict_keys(self, expr: ast.AST, mod: Module, depth: int) -> Any:
        """Keys of a dict whose values are classes: `[*QUANTIZATION_METHODS, None]` (0.6.3)."""
        found = self.src.entity(expr, mod) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        if found and found[0] == "value" and isinstance(found[2], ast.Dict):
            keys = [self.evaluate(k, found[1], None, depth + 1) for k in found[2].keys if k is not None]
            if all(k is not UNRESOLVED for k in keys):
                return keys
        return UNRESOLVED

    def _value_of(self, found: Optional[tuple], depth: int) -> Any:
        if not found:
            return UNRESOLVED
        if found[0] == "value":
            return self.evaluate(found[2], found[1], None, depth + 1)
        if found[0] == "attr":
            _, mod, cls, attr = found
            if self.is_enum(mod, cls):
                for name, value in self.enum_members(mod, cls):
                    if name == attr:
                        return self.evaluate(value, mod, cls, depth + 1)
                return UNRESOLVED
            return self.field_default(mod, cls, attr, depth + 1)
        return UNRESOLVED


# --------------------------------------------------------------------------------------------
# Type hints -> argparse kwargs, as vLLM's get_kwargs() does it (engine/arg_utils.py, 0.8.5+)

# An "atom" is one member of the flattened set of type hints get_type_hints() returns:
#   ("none",) ("bool",) ("int",) ("float",) ("str",) ("dict",) ("literal", values)
#   ("list"|"set", inner_atoms) ("tuple", inner_atoms, has_ellipsis, length)
#   ("dataclass", name) ("class", name)


class Hints:
    def __init__(self, classes: Classes):
        self.classes = classes
        self.src = classes.src

    def atoms(self, expr: Optional[ast.AST], mod: Module, depth: int = 0) -> Set[tuple]:
        if expr is None or depth > _MAX_DEPTH:
            return {("class", "?")}
        rec = lambda e: self.atoms(e, mod, depth + 1)  # noqa: E731
        if isinstance(expr, ast.Constant):
            if expr.value is None:
                return {("none",)}
            if isinstance(expr.value, str):  # a forward reference
                try:
                    return rec(ast.parse(expr.value, mode="eval").body)
                except SyntaxError:
                    return {("class", expr.value)}
            return {("class", "?")}
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return rec(expr.left) | rec(expr.right)
        if isinstance(expr, ast.Subscript):
            head = _last_name(expr.value)
            args = expr.slice
            if isinstance(args, ast.Index):  # Python 3.8 wraps the slice
                args = args.value  # type: ignore[attr-defined]
            elts = list(args.elts) if isinstance(args, ast.Tuple) else [args]
            if head == "Optional":
                return rec(elts[0]) | {("none",)}
            if head == "Union":
                out: Set[tuple] = set()
                for elt in elts:
                    out |= rec(elt)
                return out
            if head in ("Annotated", "SkipValidation", "Final", "Required", "NotRequired"):
                # pydantic's SkipValidation[X] is Annotated[X, SkipValidation()] (0.9.2+ configs)
                return rec(elts[0])
            if head == "Literal":
                values: List[Any] = []
                for elt in elts:
                    got = self.literal_values(elt, mod, depth + 1)
                    if got is None:
                        return {("class", "Literal")}
                    values.extend(got)
                return {("literal", tuple(values))}
            if head in ("list", "List"):
                return {("list", frozenset(rec(elts[0])))}
            if head in ("set", "Set"):
                return {("set", frozenset(rec(elts[0])))}
            if head in ("tuple", "Tuple"):
                ellipsis = any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts)
                inner: Set[tuple] = set()
                for elt in elts:
                    if not (isinstance(elt, ast.Constant) and elt.value is Ellipsis):
                        inner |= rec(elt)
                return {("tuple", frozenset(inner), ellipsis, len(elts))}
            if head in ("dict", "Dict"):
                return {("dict",)}
            return {("class", head or "?")}
        if isinstance(expr, (ast.Name, ast.Attribute)):
            name = _last_name(expr)
            if isinstance(expr, ast.Name) and name in _BUILTIN_TYPES:
                return {(name,)} if name in ("int", "float", "str", "bool", "dict") else \
                    {("list", frozenset({("class", "?")}))} if name == "list" else {("class", name)}
            found = self.src.entity(expr, mod)
            if found is None or found[0] == "external":
                return {("class", name or "?")}
            if found[0] == "value":
                return self.atoms(found[2], found[1], depth + 1)
            if found[0] == "class":
                fmod, fcls = found[1], found[2]
                if self.classes.is_dataclass(fmod, fcls):
                    return {("dataclass", fcls.name)}
                bases = self.classes.base_names(fmod, fcls)
                if "dict" in bases or "Dict" in bases:
                    return {("dictsub", fcls.name)}
                return {("class", fcls.name)}
            return {("class", name or "?")}
        return {("class", "?")}

    def literal_values(self, expr: ast.AST, mod: Module, depth: int) -> Optional[List[Any]]:
        """Values of one Literal[...] argument: a constant or a nested Literal alias."""
        if isinstance(expr, ast.Constant):
            return [expr.value]
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) \
                and isinstance(expr.operand, ast.Constant):
            return [-expr.operand.value]
        if isinstance(expr, (ast.Name, ast.Attribute)):
            atoms = self.atoms(expr, mod, depth + 1)
            if len(atoms) == 1:
                atom = next(iter(atoms))
                if atom[0] == "literal":
                    return list(atom[1])
        return None


@dataclass
class KwargsStyle:
    """How this copy's get_kwargs() turns type hints into argparse kwargs (varies by version)."""

    present: bool = False
    contains: Set[str] = field(default_factory=set)   # types get_kwargs branches on
    dataclass_json: bool = False     # 0.9.2+: dataclass fields take JSON
    optional_str_flag: bool = False  # 0.33: {bool, str, None} -> nargs="?" const=True
    dict_or_str: bool = False        # 0.9.2+: union_dict_and_str
    dict_subclass: bool = False      # 0.33: subclasses of dict are dicts
    literal_metavar: bool = False    # 0.33: Literal + str -> metavar instead of choices
    none_choice: Any = "None"        # what is appended to choices for Optional[Literal]
    human: Dict[str, str] = field(default_factory=dict)  # field name -> human-int type name


def kwargs_style(src: Source) -> KwargsStyle:
    """Read get_kwargs()/_compute_kwargs() of engine/arg_utils.py (0.8.5+) into a KwargsStyle."""
    style = KwargsStyle()
    mod = src.module_file(ARG_UTILS)
    if mod is None:
        return style
    funcs = {n.name: n for n in mod.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    body = None
    for name in ("_compute_kwargs", "get_kwargs"):
        fn = funcs.get(name)
        if fn is not None and any(isinstance(c, ast.Call) and _last_name(c.func) == "fields"
                                  for c in ast.walk(fn)):
            body = fn
            break
    if body is None:
        return style
    style.present = True
    helpers = [body] + [funcs[n] for n in ("literal_to_kwargs", "collection_to_kwargs") if n in funcs]
    for fn in helpers:
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and _last_name(node.func) == "contains_type" \
                    and len(node.args) == 2:
                arg = _last_name(node.args[1])
                if arg:
                    style.contains.add(arg)
    for node in ast.walk(body):
        if isinstance(node, ast.Call):
            fname = _last_name(node.func)
            if fname == "is_dataclass":
                style.dataclass_json = True
            elif fname == "is_dict_subclass":
                style.dict_subclass = True
            elif fname == "append" and node.args and isinstance(node.args[0], ast.Constant):
                style.none_choice = node.args[0].value
        elif isinstance(node, ast.Name) and node.id == "union_dict_and_str":
            style.dict_or_str = True
        elif isinstance(node, ast.Compare) and isinstance(node.comparators[0], ast.Set):
            names = {_last_name(e) for e in node.comparators[0].elts}
            if {"bool", "str", "type"} <= names:
                style.optional_str_flag = True
    lit = funcs.get("literal_to_kwargs")
    if lit is not None and any(_str_const(n) == "metavar" for n in ast.walk(lit)):
        style.literal_metavar = True
    style.human = _human_int_fields(body)
    return style


def _human_int_fields(fn: ast.AST) -> Dict[str, str]:
    """Find `if name in {...}: kwargs[name]["type"] = human_readable_int` (0.9.2+)."""
    sets: Dict[str, List[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Set, ast.List, ast.Tuple)) \
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            strs = [_str_const(e) for e in node.value.elts]
            if strs and all(strs):
                sets[node.targets[0].id] = strs  # type: ignore[assignment]
    out: Dict[str, str] = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.If):
            continue
        assigned = None
        for stmt in node.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and sub.id.startswith("human_readable_int"):
                    assigned = sub.id
        if assigned is None:
            continue
        names: List[str] = []
        test = node.test
        if isinstance(test, ast.Compare) and len(test.comparators) == 1:
            comp = test.comparators[0]
            if isinstance(test.ops[0], ast.Eq) and _str_const(comp):
                names = [_str_const(comp)]  # type: ignore[list-item]
            elif isinstance(test.ops[0], ast.In):
                if isinstance(comp, (ast.Set, ast.List, ast.Tuple)):
                    names = [s for s in (_str_const(e) for e in comp.elts) if s]
                elif isinstance(comp, ast.Name):
                    names = sets.get(comp.id, [])
        for name in names:
            out.setdefault(name, _TYPE_NAMES.get(assigned, assigned))
    return out


def _contains(atoms: Set[tuple], kind: str) -> bool:
    return any(a[0] == kind for a in atoms)


def _get(atoms: Set[tuple], kind: str) -> Optional[tuple]:
    return next((a for a in atoms if a[0] == kind), None)


def _literal_values(atoms: Iterable[tuple]) -> Optional[Tuple[Any, ...]]:
    """Merge every Literal in a union into one sorted tuple, or None if there is none.

    vLLM picks *one* Literal out of a set (get_type), so for Union[LiteralA, LiteralB] its
    choices depend on hash order (0.8.5 guided_decoding_backend); the union of both never
    rejects a value vLLM might accept.
    """
    values: List[Any] = []
    found = False
    for atom in atoms:
        if atom[0] == "literal":
            found = True
            values.extend(v for v in atom[1] if v not in values)
    return _sorted(values) if found else None


def _simple_type(atoms: Iterable[tuple]) -> Optional[str]:
    """Name the element type of a collection the way argparse will call it."""
    atoms = set(atoms)
    lit = _literal_values(atoms)
    if lit is not None:
        return type(lit[0]).__name__ if lit else None
    for kind in ("int", "float", "str", "bool"):
        if _contains(atoms, kind):
            return kind
    if _contains(atoms, "dataclass") or _contains(atoms, "dict"):
        return "json"
    return "str"


def kwargs_from_hints(atoms: Set[tuple], name: str, style: KwargsStyle) -> Dict[str, Any]:
    """Emulate vLLM's get_kwargs() for one field: action/type/nargs/choices/optional."""
    kw: Dict[str, Any] = {}
    if style.dict_subclass:
        atoms = {("dict",) if a[0] == "dictsub" else a for a in atoms}
    atoms = {("class", a[1]) if a[0] == "dictsub" else a for a in atoms}

    def has(kind: str) -> bool:
        # a branch exists only if this version's get_kwargs tests contains_type(..., kind)
        return _contains(atoms, kind) and kind in style.contains

    if style.dataclass_json and _contains(atoms, "dataclass"):
        kw["type"] = "json"
    elif style.optional_str_flag and {a[0] for a in atoms} == {"bool", "str", "none"}:
        kw["type"], kw["nargs"] = "str", "?"
    elif has("bool"):
        kw["action"] = "boolean_optional"
    elif _contains(atoms, "literal") and "Literal" in style.contains:  # Literal[...] atoms
        values = _literal_values(atoms) or ()
        kw["type"] = type(values[0]).__name__ if values else None
        if style.literal_metavar and _contains(atoms, "str"):
            # 0.15+: Literal | str shows the values as metavar; argparse accepts any string
            kw["known_values"] = _sorted(values)
        else:
            kw["choices"] = _sorted(values)
    elif has("tuple"):
        tup = _get(atoms, "tuple")
        kw["type"] = _simple_type(tup[1])  # type: ignore[index]
        kw["nargs"] = "+" if tup[2] else str(tup[3] if tup else "+")  # type: ignore[index]
        _collection_choices(kw, tup[1])  # type: ignore[index]
    elif has("list"):
        inner = _get(atoms, "list")[1]  # type: ignore[index]
        kw["type"], kw["nargs"] = _simple_type(inner), "+"
        _collection_choices(kw, inner)
    elif has("set"):
        inner = _get(atoms, "set")[1]  # type: ignore[index]
        kw["type"], kw["nargs"] = _simple_type(inner), "+"
        _collection_choices(kw, inner)
    elif has("int"):
        kw["type"] = style.human.get(name, "int")
    elif has("float"):
        kw["type"] = "float"
    elif _contains(atoms, "dict") and style.dict_or_str and (
            _contains(atoms, "str") or _contains(atoms, "class") or _contains(atoms, "dataclass")):
        kw["type"] = "json_or_str"
    elif _contains(atoms, "dict"):
        kw["type"] = "json"
    elif _contains(atoms, "str") or _contains(atoms, "class") or _contains(atoms, "dataclass") \
            or _contains(atoms, "literal"):
        kw["type"] = "str"
    if _contains(atoms, "none") and not _contains(atoms, "bool"):
        kw["optional"] = True
        if kw.get("choices") is not None:
            kw["choices"] = tuple(kw["choices"]) + (style.none_choice,)
    return kw


def _collection_choices(kw: Dict[str, Any], inner: Iterable[tuple]) -> None:
    lit = _literal_values(inner)
    if lit is not None:
        kw["choices"] = lit


def _sorted(values: Sequence[Any]) -> Tuple[Any, ...]:
    try:
        return tuple(sorted(values))
    except TypeError:
        return tuple(values)


# --------------------------------------------------------------------------------------------
# add_argument interpretation


# Callables passed as `type=` and what the Flag calls them.
_TYPE_NAMES = {
    "int": "int", "float": "float", "str": "str", "bool": "bool",
    "nullable_str": "str", "loads": "json", "human_readable_int": "human_int",
    "human_readable_int_or_auto": "human_int_or_auto", "union_dict_and_str": "json_or_str",
    "nullable_kvs": "kvs", "from_cli": "json", "from_json": "json", "parse_dataclass": "json",
}


@dataclass
class KwargsMap:
    """`X = get_kwargs(Cls)`: per-field kwargs, plus edits made to it before add_argument."""

    mod: Module
    cls: Optional[ast.ClassDef]
    edits: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # field -> key -> (expr,ctx) | DELETE


@dataclass
class FieldKwargs:
    """`X["name"]` of a KwargsMap (or a copy bound to its own variable)."""

    kmap: KwargsMap
    name: str


_DELETE = object()


class FlagReader:
    """Walk the functions that build `vllm serve`'s parser and turn add_argument into Flags."""

    def __init__(self, src: Source, classes: Classes, style: KwargsStyle):
        self.src = src
        self.classes = classes
        self.hints = Hints(classes)
        self.style = style
        self.flags: List[Flag] = []
        self.unresolved: List[str] = []
        self._field_kw_cache: Dict[Tuple[int, str], Dict[str, Any]] = {}
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
            if any(isinstance(n, ast.Call) and _last_name(n.func) == "add_argument"
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
                    self._edit(target, _DELETE, env, mod)
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
                receiver = _last_name(node.func.value)
                if receivers is None or receiver in receivers:
                    self._add_argument(node, env, mod)
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
            elif isinstance(value, ast.Call) and _last_name(value.func) == "_customize_cli_kwargs" \
                    and value.args and isinstance(value.args[0], ast.Name) \
                    and isinstance(env.get(value.args[0].id), KwargsMap):
                kmap = env[value.args[0].id]
                self._apply_customize(kmap, cls_binding)
                env[target.id] = kmap
            else:
                env.pop(target.id, None)

    def _kwargs_value(self, value: ast.AST, env: Dict[str, Any], mod: Module, cls_binding):
        """Return a KwargsMap/FieldKwargs for `get_kwargs(C)`, `get_kwargs(C)["f"]`, `X["f"]`."""
        if isinstance(value, ast.Call) and _last_name(value.func) == "get_kwargs" and value.args:
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
            key = _str_const(_slice(value))
            if isinstance(base, KwargsMap) and key:
                return FieldKwargs(base, key)
        if isinstance(value, ast.Name) and isinstance(env.get(value.id), (KwargsMap, FieldKwargs)):
            return env[value.id]
        return None

    def _edit(self, target: ast.AST, value: Any, env: Dict[str, Any], mod: Module) -> None:
        """Record `X["f"]["k"] = v`, `Y["k"] = v` and `del X["f"]["k"]` on a kwargs map."""
        if not isinstance(target, ast.Subscript):
            return
        key = _str_const(_slice(target))
        holder = _field_kwargs(target.value, env)
        if holder is None or key is None:
            return
        holder.kmap.edits.setdefault(holder.name, {})[key] = \
            _DELETE if value is _DELETE else (value, mod, dict(env))

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
            kname, vname = (_last_name(e) for e in stmt.target.elts)
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
        if any(isinstance(n, ast.Call) and _last_name(n.func) == "add_argument" for n in ast.walk(stmt)):
            self.unresolved.append(f"{mod.rel}:{stmt.lineno}: options added in a loop over "
                                   f"{ast.unparse(it)[:60]}")

    # -- one add_argument call ------------------------------------------------------------

    def _add_argument(self, call: ast.Call, env: Dict[str, Any], mod: Module) -> None:
        options: List[str] = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                continue  # extra flags from a kwargs "flags" entry: none in released vLLM
            text = self._string(arg, env, mod)
            if text is None:
                self.unresolved.append(f"{mod.rel}:{call.lineno}: option name {ast.unparse(arg)[:60]}")
                return
            options.append(text)
        if not options or not options[0].startswith("-"):
            return  # a positional (model_tag)
        kw: Dict[str, Any] = {}
        explicit: Dict[str, Tuple[ast.AST, Module, Dict[str, Any]]] = {}
        for keyword in call.keywords:
            if keyword.arg is None:
                self._spread(keyword.value, env, mod, kw, explicit)
            else:
                explicit[keyword.arg] = (keyword.value, mod, env)
        for key, (expr, emod, eenv) in explicit.items():
            self._explicit(key, expr, emod, eenv, kw)
        self.flags.append(self._make_flag(options, kw))

    def _spread(self, expr: ast.AST, env, mod, kw: Dict[str, Any], explicit) -> None:
        """Merge `**X["f"]`, `**Y` or `**{**X["f"], "k": v}` into the kwargs."""
        if isinstance(expr, ast.Dict):
            for k, v in zip(expr.keys, expr.values):
                if k is None:
                    self._spread(v, env, mod, kw, explicit)
                else:
                    key = _str_const(k)
                    if key:
                        explicit.pop(key, None)
                        self._explicit(key, v, mod, env, kw)
            return
        holder = _field_kwargs(expr, env)
        if holder is None:
            self.unresolved.append(f"{mod.rel}: **{ast.unparse(expr)[:60]}")
            return
        kw.update(self._field_kwargs(holder))

    def _field_kwargs(self, holder: FieldKwargs) -> Dict[str, Any]:
        kmap = holder.kmap
        key = (id(kmap.cls), holder.name)
        if key not in self._field_kw_cache:
            base: Dict[str, Any] = {}
            info = self.classes.fields(kmap.mod, kmap.cls).get(holder.name) if kmap.cls else None
            if info is not None:
                atoms = self.hints.atoms(info.annotation, info.mod)
                base = kwargs_from_hints(atoms, holder.name, self.style)
                base["default"] = self.classes.default_of(info.value, info.mod, info.cls) \
                    if info.value is not None else UNRESOLVED
            self._field_kw_cache[key] = base
        out = dict(self._field_kw_cache[key])
        for k, edit in kmap.edits.get(holder.name, {}).items():
            if edit is _DELETE:
                out.pop(k, None)
            else:
                expr, emod, eenv = edit
                self._explicit(k, expr, emod, eenv, out)
        return out

    def _explicit(self, key: str, expr: ast.AST, mod: Module, env: Dict[str, Any],
                  kw: Dict[str, Any]) -> None:
        """Convert one `key=expr` argparse keyword into the Flag vocabulary."""
        if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), ast.AST):
            expr = env[expr.id]  # a loop variable
        if key == "action":
            kw["action"] = _action_name(expr)
        elif key == "type":
            name, optional = _type_name(expr)
            kw["type"] = name
            if optional:
                kw["optional"] = True
        elif key == "nargs":
            value = self.classes.evaluate(expr, mod)
            kw["nargs"] = None if value is UNRESOLVED or value is None else str(value)
        elif key == "choices":
            kw["choices"] = self._choices(expr, mod)
        elif key == "default":
            kw["default"] = self._default(expr, mod, env)
        elif key == "dest":
            kw["dest"] = _str_const(expr)
        elif key == "deprecated":
            kw["deprecated"] = self.classes.evaluate(expr, mod) is True
        elif key == "const":
            kw["const"] = self.classes.evaluate(expr, mod)

    def _default(self, expr: ast.AST, mod: Module, env: Dict[str, Any]) -> Any:
        # model_kwargs["hf_token"]["default"] (0.9.2) reads a field's kwargs
        if isinstance(expr, ast.Subscript) and _str_const(_slice(expr)) == "default":
            inner = expr.value
            if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name) \
                    and isinstance(env.get(inner.value.id), KwargsMap):
                fname = _str_const(_slice(inner))
                if fname:
                    return self._field_kwargs(FieldKwargs(env[inner.value.id], fname)).get(
                        "default", UNRESOLVED)
        return self.classes.evaluate(expr, mod)

    def _choices(self, expr: ast.AST, mod: Module) -> Optional[Tuple[Any, ...]]:
        # get_args(TaskOption): a Literal alias
        if isinstance(expr, ast.Call) and _last_name(expr.func) == "get_args" and expr.args:
            atoms = self.hints.atoms(expr.args[0], mod)
            lit = _get(atoms, "literal")
            return tuple(lit[1]) if lit else None
        # [f.value for f in LoadFormat]: an enum's values
        if isinstance(expr, ast.ListComp) and len(expr.generators) == 1 \
                and isinstance(expr.elt, ast.Attribute) and expr.elt.attr in ("value", "name"):
            found = self.src.entity(expr.generators[0].iter, mod)
            if found and found[0] == "class":
                members = self.classes.enum_members(found[1], found[2])
                if expr.elt.attr == "name":
                    return tuple(name for name, _ in members)
                values = [self.classes.evaluate(v, found[1], found[2]) for _, v in members]
                if members and all(v is not UNRESOLVED for v in values):
                    return tuple(values)
            return None
        value = self.classes.evaluate(expr, mod)
        if isinstance(value, dict):
            value = list(value)
        if isinstance(value, (list, tuple)) and value:
            return tuple(value)
        # Empty means a registry filled at import time, e.g.
        # list(ReasoningParserManager.reasoning_parsers) (0.8.5): unknown, not "nothing".
        return None

    def _string(self, expr: ast.AST, env: Dict[str, Any], mod: Module) -> Optional[str]:
        if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), ast.AST):
            return self._string(env[expr.id], env, mod)
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value
        if isinstance(expr, ast.JoinedStr):
            parts = []
            for value in expr.values:
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    got = self._fstring_part(value.value, env, mod)
                    if got is None:
                        return None
                    parts.append(got)
            return "".join(parts)
        return None

    def _fstring_part(self, expr: ast.AST, env, mod) -> Optional[str]:
        # f"--{key.replace('_', '-')}" in the FrontendArgs loop (0.10+)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and expr.func.attr == "replace" and len(expr.args) == 2:
            base = self._string(expr.func.value, env, mod)
            old, new = _str_const(expr.args[0]), _str_const(expr.args[1])
            if base is not None and old is not None and new is not None:
                return base.replace(old, new)
            return None
        return self._string(expr, env, mod)

    def _make_flag(self, options: List[str], kw: Dict[str, Any]) -> Flag:
        longs = [o for o in options if o.startswith("--")]
        main = longs[0] if longs else options[0]
        dest = kw.get("dest") or main.lstrip("-").replace("-", "_")
        action = kw.get("action") or "store"
        default = kw.get("default", UNRESOLVED)
        if default is UNRESOLVED:
            default = {"store_true": False, "store_false": True}.get(action)
        choices = kw.get("choices")
        known = kw.get("known_values")
        type_name = kw.get("type")
        if action in ("store", "append") and type_name is None:
            type_name = "str"  # argparse hands the raw string over
        return Flag(
            name=main.lstrip("-"),
            dest=dest,
            action=action,
            nargs=kw.get("nargs"),
            type=None if action in ("store_true", "store_false", "boolean_optional",
                                    "store_const", "count") else type_name,
            default=_jsonable(default),
            choices=tuple(_jsonable(list(choices))) if choices is not None else None,
            aliases=tuple(o for o in options if o != main),
            optional=bool(kw.get("optional")),
            deprecated=bool(kw.get("deprecated")),
            known_values=tuple(_jsonable(list(known))) if known is not None else None,
        )


def _slice(sub: ast.Subscript) -> ast.AST:
    s = sub.slice
    if isinstance(s, ast.Index):  # Python 3.8
        s = s.value  # type: ignore[attr-defined]
    return s


def _functions(tree: ast.Module) -> Iterator[Tuple[Optional[ast.ClassDef], ast.FunctionDef]]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield node, sub


def _action_name(expr: ast.AST) -> str:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    name = _last_name(expr) or "other"
    # argparse.BooleanOptionalAction adds --no-X (0.8.5+); StoreBoolean takes "true"/"false"
    # (engine/arg_utils.py, 0.6.3-0.7.3)
    return {"BooleanOptionalAction": "boolean_optional", "StoreBoolean": "store_boolean"}.get(name, name)


def _type_name(expr: ast.AST) -> Tuple[Optional[str], bool]:
    """Name a `type=` callable; the bool says whether it maps "None" to None."""
    if isinstance(expr, ast.Call):
        fname = _last_name(expr.func)
        if fname == "optional_type" and expr.args:
            return _type_name(expr.args[0])[0], True
        if fname == "parse_type" and expr.args:
            return _type_name(expr.args[0])
        return fname, False
    if isinstance(expr, ast.Lambda):
        # lambda s: s.lower().replace("-", "_") normalises before the choices check (0.33
        # --moe-backend, --linear-backend)
        lowers = any(isinstance(n, ast.Attribute) and n.attr == "lower" for n in ast.walk(expr.body))
        return ("lowercase_str" if lowers else "lambda"), False
    name = _last_name(expr)
    if name is None:
        return None, False
    return _TYPE_NAMES.get(name, name), name in ("nullable_str", "nullable_kvs")


def _jsonable(value: Any) -> Any:
    """Make a resolved literal survive a JSON round trip unchanged (tuples become lists)."""
    if value is UNRESOLVED:
        return None
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, set):
        return [_jsonable(v) for v in _sorted(list(value))]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _jsonable(v) for k, v in value.items()}
        return None
    if isinstance(value, float) and value != value:
        return None
    return value


# --------------------------------------------------------------------------------------------
# The other facts


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
                out[name] = _jsonable(value)
    return out


def attention_facts(src: Source) -> Tuple[bool, Tuple[str, ...]]:
    """Return (envs.py reads VLLM_ATTENTION_BACKEND, backend enum member names)."""
    env_var = False
    envs = src.module_file(ENVS)
    if envs is not None:
        # the `environment_variables` dict in vllm/envs.py; gone in 0.15.0
        for node in ast.walk(envs.tree):
            if isinstance(node, ast.Dict) and any(
                    _str_const(k) == "VLLM_ATTENTION_BACKEND" for k in node.keys if k is not None):
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

    This is how the CoreX fork hardcodes them (`enforce_eager=True`); reference §1 gives the
    call sites, which have the same shape in every release from 0.6.3.post1 to 0.33.0.
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
            if _last_name(node.func) != callee:
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


def library_present(site: Path, name: str, extra_paths: Sequence[Path]) -> bool:
    """Whether package `name` sits in the site dir or an extra path (folder or dist-info).

    The distribution is `flashinfer-python` (dist-info `flashinfer_python-*`); the separate
    `flashinfer-cubin` / `flashinfer-jit-cache` wheels alone do not make it importable.
    """
    for root in [site, *extra_paths]:
        root = Path(root)
        if (root / name / "__init__.py").is_file():
            return True
        try:
            if any(root.glob(f"{name}-*.dist-info")) or any(root.glob(f"{name}_python-*.dist-info")):
                return True
        except OSError:
            continue
    return False


def extract(site_dir: Path, extra_paths: Sequence[Path] = ()) -> Tuple[Facts, List[str]]:
    """Extract Facts from a vLLM copy; also return the files it consulted (the cache hashes them)."""
    site = Path(site_dir)
    src = Source(site)
    classes = Classes(src)
    notes: List[str] = []
    version = read_version(site)[0] or "unknown"
    src.stat("vllm/_version.py")

    def guarded(what: str, func, fallback):
        # A fork can shape its files in ways no release did: a failure in one reader must
        # cost that fact only, never the lint run.
        try:
            return func()
        except Exception as exc:  # noqa: BLE001
            notes.append(f"{what}: extraction failed ({exc.__class__.__name__}: {exc})")
            return fallback

    reader = FlagReader(src, classes, KwargsStyle())

    def read_flags() -> Dict[str, Flag]:
        reader.style = kwargs_style(src)
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
                flags[flag.dest] = _replace(first, aliases=first.aliases + extra)
            else:
                flags[flag.dest] = flag
        return flags

    flags = guarded("flags", read_flags, {})
    field_defaults = guarded("field_defaults", lambda: engine_args_defaults(src, classes), {})
    env_var, backends = guarded("attention backends", lambda: attention_facts(src), (False, ()))
    ms, ms_chunked = guarded("multi-step backends", lambda: multistep_facts(src), ((), ()))
    hardcoded = guarded("hardcoded keywords", lambda: hardcoded_facts(src), {})
    capture = guarded("capture sizes", lambda: capture_sizes_default(src, classes), None)
    has_fa = any(src.exists(rel) for rel in FLASH_ATTN_SO)
    has_fi = library_present(site, "flashinfer", extra_paths)
    from patchops.lint.facts_knowledge import read_knowledge
    knowledge = read_knowledge(src, classes, site, extra_paths, guarded)
    src.stat(".")  # the site dir's listing says whether a package (flashinfer) came or went

    notes.extend(src.notes)
    notes.extend(f"unresolved: {u}" for u in reader.unresolved)
    facts = Facts(
        version=version,
        origin=str(site),
        flags=flags,
        field_defaults=field_defaults,
        attention_env_var=env_var,
        attention_backends=backends,
        multistep_backends=ms,
        multistep_chunked_backends=ms_chunked,
        has_flash_attn=has_fa,
        has_flashinfer=has_fi,
        hardcoded=hardcoded,
        capture_sizes_default=capture,
        notes=tuple(notes),
        **knowledge,
    )
    return facts, sorted(src.consulted)


def _replace(flag: Flag, **changes: Any) -> Flag:
    from dataclasses import replace
    return replace(flag, **changes)
