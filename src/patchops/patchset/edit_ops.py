"""Express the difference between a file's pristine and edited text as ops, for capture.

Keyword values and defaults become `set-keyword` / `set-default` ops when those alone
reproduce the edit byte for byte; otherwise each changed function becomes a
`replace-function` op. A change outside functions cannot be expressed and is refused with
its line. Both texts are compared as normalised ASTs (patchops.patchset.ops.replace_function), so a
Python version or layout difference is never taken for a change.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

from patchops.core.errors import PatchopsError
from patchops.patchset.ops import Op, ReplaceFunction, SetDefault, SetKeyword
from patchops.patchset.ops.replace_function import _canonical, fingerprint


def derive_ops(pristine: str, edited: str, rel: str, version: Optional[str], shown: str) -> List[Op]:
    """Return ops turning `pristine` into `edited`: value ops if they do it exactly, else functions."""
    try:
        old, new = ast.parse(pristine), ast.parse(edited)
    except SyntaxError as exc:
        raise PatchopsError(f"{shown}:{exc.lineno}: cannot parse it ({exc.msg}); fix the edit first") from None
    if _canonical(old) == _canonical(new):
        raise PatchopsError(f"{shown}: only comments or layout changed; capture writes ops that "
                            f"change code, so there is nothing to capture")
    values = _value_ops(old, new, pristine, edited, rel)
    if values and _reproduces(values, pristine, edited, rel, version):
        return values
    functions = _function_ops(old, new, pristine, edited, rel, shown)
    if _reproduces(functions, pristine, edited, rel, version):
        return functions
    line = first_difference(_run(functions, pristine, rel, version), edited)
    raise PatchopsError(f"{shown}:{line}: this change is outside the functions capture replaced "
                        f"(comments or layout between them); capture cannot reproduce the edit "
                        f"exactly, so nothing was written")


def _value_ops(old: ast.Module, new: ast.Module, old_src: str, new_src: str, rel: str) -> List[Op]:
    """Return set-keyword / set-default ops if every difference is a keyword value or default."""
    found: "OrderedDict[tuple, int]" = OrderedDict()

    def note(*key: str) -> None:
        found[key] = found.get(key, 0) + 1

    def text(src: str, node: ast.AST) -> str:
        return ast.get_source_segment(src, node) or ""

    def same(a: Any, b: Any) -> bool:
        return _canonical(a) == _canonical(b)

    def compare(a: Any, b: Any, chain: Tuple[str, ...]) -> bool:
        if type(a) is not type(b):
            return False
        if isinstance(a, list):
            return len(a) == len(b) and all(compare(x, y, chain) for x, y in zip(a, b))
        if not isinstance(a, ast.AST):
            return a == b
        if isinstance(a, ast.Call):
            return (compare(a.func, b.func, chain) and compare(a.args, b.args, chain)
                    and len(a.keywords) == len(b.keywords)
                    and all(keyword(ka, kb, a, chain) for ka, kb in zip(a.keywords, b.keywords)))
        if isinstance(a, ast.ClassDef):
            inner = chain + (a.name,)
            return (same(_header(a), _header(b)) and len(a.body) == len(b.body)
                    and all(field(sa, sb, inner) or compare(sa, sb, inner) for sa, sb in zip(a.body, b.body)))
        if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = chain + (a.name,)
            return all(_compare_arguments(va, getattr(b, name), inner, old_src, new_src, note, compare)
                       if name == "args" else compare(va, getattr(b, name, None), inner)
                       for name, va in ast.iter_fields(a))
        return all(compare(va, getattr(b, name, None), chain) for name, va in ast.iter_fields(a))

    def keyword(a: ast.keyword, b: ast.keyword, call: ast.Call, chain: Tuple[str, ...]) -> bool:
        if a.arg != b.arg:
            return False
        callee = _dotted(call.func)
        if a.arg and callee and not same(a.value, b.value):
            note("kw", callee, a.arg, ".".join(chain), text(old_src, a.value), text(new_src, b.value))
            return True
        return compare(a.value, b.value, chain)

    def field(a: ast.stmt, b: ast.stmt, chain: Tuple[str, ...]) -> bool:
        """Note a changed `name: T = value` field of a class body; False if it is not one."""
        if not (isinstance(a, ast.AnnAssign) and isinstance(b, ast.AnnAssign)
                and isinstance(a.target, ast.Name) and a.value is not None and b.value is not None
                and same(a.target, b.target) and same(a.annotation, b.annotation)
                and not same(a.value, b.value)):
            return False
        note("field", ".".join(chain), a.target.id, text(old_src, a.value), text(new_src, b.value))
        return True

    if not compare(old, new, ()) or not found:
        return []
    ops: List[Op] = []
    for key, hits in found.items():
        try:
            if key[0] == "kw":
                _, callee, name, scope, before, after = key
                ops.append(SetKeyword(file=rel, sites=hits, callee=callee, keyword=name,
                                      value=after, pristine=(before,), scope=scope))
            else:
                kind, scope, name, before, after = key
                target = {"field": name} if kind == "field" else {"param": name}
                ops.append(SetDefault(file=rel, sites=hits, scope=scope, value=after,
                                      pristine=(before,), **target))
        except ValueError:  # e.g. a default of a module-level lambda: no scope to name
            return []
    return ops


def _compare_arguments(a: ast.arguments, b: ast.arguments, chain, old_src, new_src, note, compare) -> bool:
    """Compare signatures; a changed default (not an added or removed one) is a value change."""
    for name in ("posonlyargs", "args", "vararg", "kwonlyargs", "kwarg"):
        if not compare(getattr(a, name), getattr(b, name), chain):
            return False
    if len(a.defaults) != len(b.defaults) or len(a.kw_defaults) != len(b.kw_defaults):
        return False
    positional = a.posonlyargs + a.args
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults, b.defaults))
    pairs += list(zip(a.kwonlyargs, a.kw_defaults, b.kw_defaults))
    for arg, old, new in pairs:
        if (old is None) != (new is None):
            return False
        if old is not None and _canonical(old) != _canonical(new):
            note("param", ".".join(chain), arg.arg, ast.get_source_segment(old_src, old) or "",
                 ast.get_source_segment(new_src, new) or "")
    return True


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id] + parts[::-1])


def _function_ops(old: ast.Module, new: ast.Module, old_src: str, new_src: str, rel: str,
                  shown: str) -> List[Op]:
    """Return a replace-function op per changed function; refuse changes outside functions."""
    import libcst as cst

    changed: List[Tuple[str, ...]] = []

    def compare(a_body: List[ast.stmt], b_body: List[ast.stmt], chain: Tuple[str, ...]) -> None:
        for a, b in zip(a_body, b_body):
            if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)) and type(a) is type(b) \
                    and a.name == b.name:
                if _canonical(a) != _canonical(b):
                    changed.append(chain + (a.name,))
            elif isinstance(a, ast.ClassDef) and isinstance(b, ast.ClassDef) and a.name == b.name \
                    and _canonical(_header(a)) == _canonical(_header(b)):
                compare(a.body, b.body, chain + (a.name,))
            elif _canonical(a) != _canonical(b):
                raise _outside(shown, b)
        if len(a_body) != len(b_body):
            raise _outside(shown, b_body[len(a_body)] if len(b_body) > len(a_body) else
                           (b_body[-1] if b_body else None))

    compare(old.body, new.body, ())
    old_mod, new_mod = cst.parse_module(old_src), cst.parse_module(new_src)
    ops: List[Op] = []
    for chain in dict.fromkeys(changed):
        before = _defs_text(old_mod, chain)
        after = _defs_text(new_mod, chain)
        for old_text, new_text in zip(before, after):
            if fingerprint(old_text) != fingerprint(new_text):
                ops.append(ReplaceFunction(file=rel, sites=1, scope=".".join(chain),
                                           original=fingerprint(old_text), code=new_text))
    return ops


def _header(cls: ast.ClassDef) -> ast.ClassDef:
    return ast.ClassDef(cls.name, cls.bases, cls.keywords, [], cls.decorator_list)


def _outside(shown: str, node: Optional[ast.stmt]) -> PatchopsError:
    line = getattr(node, "lineno", 1)
    return PatchopsError(
        f"{shown}:{line}: a change outside any function (a statement added, removed or changed at "
        f"module or class level); capture writes keyword values, defaults and whole functions, "
        f"so write an insert-code op for this by hand. Nothing was written")


def _defs_text(module, chain: Tuple[str, ...]) -> List[str]:
    """Return the text of each definition of `chain`, as replace-function reads it."""
    import libcst as cst

    from patchops.patchset.ops.tree import walk

    return [module.code_for_node(node.with_changes(leading_lines=()))
            for node, _ in walk(module, chain, exact=True) if isinstance(node, cst.FunctionDef)]


def _run(ops: Sequence[Op], source: str, rel: str, version: Optional[str]):
    from packaging.specifiers import SpecifierSet

    from patchops.patchset.model import Patchset
    from patchops.patchset.rewrite import rewrite_source

    patchset = Patchset("capture", "", "", SpecifierSet(""), tuple(ops), Path("capture.yaml"))
    return rewrite_source(source, rel, [patchset], version)


def _reproduces(ops: Sequence[Op], pristine: str, edited: str, rel: str, version: Optional[str]) -> bool:
    return bool(ops) and _run(ops, pristine, rel, version).new_source == edited


def first_difference(got, edited: str) -> int:
    """Return the first line where a rewrite's result differs from the edited text."""
    for number, (a, b) in enumerate(zip(got.new_source.splitlines(), edited.splitlines()), 1):
        if a != b:
            return number
    return min(len(got.new_source.splitlines()), len(edited.splitlines())) + 1
