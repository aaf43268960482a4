"""Turn a field's type hints into argparse kwargs the way this copy's get_kwargs() does.

vLLM builds most `vllm serve` options from config dataclass fields (engine/arg_utils.py,
0.8.5+), and how it maps a hint to `type`/`nargs`/`choices` changed between releases, so the
copy's own get_kwargs() is read first (KwargsStyle) and then emulated per field.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from patchops.lint.extract.source_tree import Module, last_name, str_const
from patchops.lint.extract.static_eval import first_atom

# Callables passed as `type=` and what the Flag calls them.
TYPE_NAMES = {
    "int": "int", "float": "float", "str": "str", "bool": "bool",
    "nullable_str": "str", "loads": "json", "human_readable_int": "human_int",
    "human_readable_int_or_auto": "human_int_or_auto", "union_dict_and_str": "json_or_str",
    "nullable_kvs": "kvs", "from_cli": "json", "from_json": "json", "parse_dataclass": "json",
}
# optional_type(json.loads) of 0.8.x: JSON when the value looks like {...}, else key=value pairs.
JSON_OR_KVS = "json_or_kvs"


@dataclass
class KwargsStyle:
    """How this copy's get_kwargs() turns type hints into argparse kwargs (varies by version)."""

    present: bool = False
    contains: Set[str] = field(default_factory=set)   # types get_kwargs branches on
    dataclass_json: bool = False     # 0.9.2+: dataclass fields take JSON
    optional_str_flag: bool = False  # 0.33: {bool, str, None} -> nargs="?" const=True
    dict_or_str: bool = False        # 0.9.2+: union_dict_and_str
    dict_subclass: bool = False      # 0.33: subclasses of dict are dicts
    dict_type: str = "json"          # what a dict field's `type` is: JSON_OR_KVS in 0.8.x
    dict_optional: bool = False      # 0.8.x: dict fields always take "" / "None" (optional_type)
    literal_metavar: bool = False    # 0.33: Literal + str -> metavar instead of choices
    none_choice: Any = "None"        # what is appended to choices for Optional[Literal]
    human: Dict[str, str] = field(default_factory=dict)  # field name -> human-int type name


def kwargs_style(mod: Optional[Module]) -> KwargsStyle:
    """Read get_kwargs()/_compute_kwargs() of engine/arg_utils.py (0.8.5+) into a KwargsStyle."""
    style = KwargsStyle()
    if mod is None:
        return style
    funcs = {n.name: n for n in mod.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    body = None
    for name in ("_compute_kwargs", "get_kwargs"):
        fn = funcs.get(name)
        if fn is not None and any(isinstance(c, ast.Call) and last_name(c.func) == "fields"
                                  for c in ast.walk(fn)):
            body = fn
            break
    if body is None:
        return style
    style.present = True
    helpers = [body] + [funcs[n] for n in ("literal_to_kwargs", "collection_to_kwargs") if n in funcs]
    for fn in helpers:
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and last_name(node.func) == "contains_type" \
                    and len(node.args) == 2:
                arg = last_name(node.args[1])
                if arg:
                    style.contains.add(arg)
    for node in ast.walk(body):
        if isinstance(node, ast.Call):
            fname = last_name(node.func)
            if fname == "is_dataclass":
                style.dataclass_json = True
            elif fname == "is_dict_subclass":
                style.dict_subclass = True
            elif fname == "append" and node.args and isinstance(node.args[0], ast.Constant):
                style.none_choice = node.args[0].value
        elif isinstance(node, ast.Name) and node.id == "union_dict_and_str":
            style.dict_or_str = True
        elif isinstance(node, ast.Compare) and isinstance(node.comparators[0], ast.Set):
            names = {last_name(e) for e in node.comparators[0].elts}
            if {"bool", "str", "type"} <= names:
                style.optional_str_flag = True
    lit = funcs.get("literal_to_kwargs")
    if lit is not None and any(str_const(n) == "metavar" for n in ast.walk(lit)):
        style.literal_metavar = True
    _read_dict_type(style, body, funcs.get("optional_type"))
    style.human = _human_int_fields(body)
    return style


def _read_dict_type(style: KwargsStyle, body: ast.AST, optional_type: Optional[ast.AST]) -> None:
    """Read what get_kwargs gives a dict field: `optional_type(json.loads)` (0.8.x) or JSON.

    0.8.x's optional_type() reads a value that is not `{...}` as key=value pairs
    (`nullable_kvs`, so `--limit-mm-per-prompt image=2` parses); from 0.10 it is plain JSON
    (`parse_type(json.loads)`), and `image=2` cannot be converted.
    """
    for node in ast.walk(body):
        if isinstance(node, ast.Call) and last_name(node.func) == "optional_type" and node.args \
                and last_name(node.args[0]) == "loads":
            style.dict_optional = True
            if optional_type is not None and any(
                    isinstance(n, ast.Call) and last_name(n.func) == "nullable_kvs" for n in ast.walk(optional_type)):
                style.dict_type = JSON_OR_KVS
            return


def _human_int_fields(fn: ast.AST) -> Dict[str, str]:
    """Find `if name in {...}: kwargs[name]["type"] = human_readable_int` (0.9.2+)."""
    sets: Dict[str, List[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Set, ast.List, ast.Tuple)) \
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            strs = [str_const(e) for e in node.value.elts]
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
            if isinstance(test.ops[0], ast.Eq) and str_const(comp):
                names = [str_const(comp)]  # type: ignore[list-item]
            elif isinstance(test.ops[0], ast.In):
                if isinstance(comp, (ast.Set, ast.List, ast.Tuple)):
                    names = [s for s in (str_const(e) for e in comp.elts) if s]
                elif isinstance(comp, ast.Name):
                    names = sets.get(comp.id, [])
        for name in names:
            out.setdefault(name, TYPE_NAMES.get(assigned, assigned))
    return out


def _contains(atoms: Set[tuple], kind: str) -> bool:
    return any(a[0] == kind for a in atoms)


def _literal_values(atoms: Iterable[tuple]) -> Optional[Tuple[Any, ...]]:
    """Merge every Literal in a union into one sorted tuple, or None if there is none.

    vLLM picks *one* Literal out of a set (get_type), so for Union[LiteralA, LiteralB] its
    choices depend on hash order (0.8.5 guided_decoding_backend): a value in only some of the
    Literals is accepted in some launches and refused in others (`chance_choices`).
    """
    values: List[Any] = []
    found = False
    for atom in atoms:
        if atom[0] == "literal":
            found = True
            values.extend(v for v in atom[1] if v not in values)
    return sorted_values(values) if found else None


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
            kw["known_values"] = sorted_values(values)
        else:
            kw["choices"] = sorted_values(values)
            sets = [set(a[1]) for a in atoms if a[0] == "literal"]
            chance = [v for v in values if not all(v in found for found in sets)]
            if len(sets) > 1 and chance:
                kw["chance_choices"] = sorted_values(chance)
    elif has("tuple"):
        tup = first_atom(atoms, "tuple")
        kw["type"] = _simple_type(tup[1])  # type: ignore[index]
        kw["nargs"] = "+" if tup[2] else str(tup[3] if tup else "+")  # type: ignore[index]
        _collection_choices(kw, tup[1])  # type: ignore[index]
    elif has("list"):
        inner = first_atom(atoms, "list")[1]  # type: ignore[index]
        kw["type"], kw["nargs"] = _simple_type(inner), "+"
        _collection_choices(kw, inner)
    elif has("set"):
        inner = first_atom(atoms, "set")[1]  # type: ignore[index]
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
        kw["type"] = style.dict_type
        if style.dict_optional:
            kw["optional"] = True
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


def sorted_values(values: Sequence[Any]) -> Tuple[Any, ...]:
    try:
        return tuple(sorted(values))
    except TypeError:
        return tuple(values)
