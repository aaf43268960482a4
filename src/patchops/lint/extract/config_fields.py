"""Fields of vLLM's config classes, read with `ast`: nested JSON configs and value ranges.

Over 400 lines because both readers resolve the same classes, fields and EngineArgs dests
(a split would pass those maps between two modules).

Two kinds of knowledge argparse does not hold, read from the config dataclasses themselves:

* nested configs (`--speculative-config`, `--compilation-config`): each field's name, the
  kinds of value its annotation allows, its `Literal[...]` choices and `Field(gt=...)` bounds,
  and what the class does with a key it does not have (a stdlib dataclass raises TypeError,
  a pydantic dataclass ignores it unless its config says `extra="forbid"`);
* ranges of plain flags that the config classes check after parsing: pydantic
  `Field(gt=0, le=1)` (0.12+) and the generic guards `if self.x > 1.0: raise ValueError(...)`
  at the top of `__post_init__` / `_verify_args` (0.6.3 - 0.11; config_guards reads them),
  plus the choices of `field_validator`s and the enum names they look values up by.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.extract import ARG_UTILS
from patchops.lint.extract.config_guards import (constant_guards, literal_number, relation_guards,
                                                       string_pieces)
from patchops.lint.extract.draft_detection import draft_detection
from patchops.lint.extract.source_tree import Module, Source
from patchops.lint.extract.source_tree import last_name as _last_name
from patchops.lint.extract.static_eval import Classes, Hints
from patchops.lint.extract.value_checks import parse_time_classes, value_checks

# Nested JSON flags and the class vLLM builds from them (the pooler config's flag is
# override_pooler_config until 0.10, pooler_config from 0.11).
NESTED_CONFIGS = {"speculative_config": "SpeculativeConfig", "compilation_config": "CompilationConfig",
                  "kv_transfer_config": "KVTransferConfig", "structured_outputs_config": "StructuredOutputsConfig",
                  "override_pooler_config": "PoolerConfig", "pooler_config": "PoolerConfig"}
# Config classes whose fields mirror EngineArgs fields of the same name (range checks).
RANGE_CLASSES = ("CacheConfig", "ModelConfig", "ParallelConfig", "SchedulerConfig", "LoRAConfig",
                 "UVAOffloadConfig", "VllmConfig")
CONFIG_MODULES = ("vllm.config", "vllm.config.cache", "vllm.config.model", "vllm.config.parallel",
                  "vllm.config.scheduler", "vllm.config.speculative", "vllm.config.compilation",
                  "vllm.config.lora", "vllm.config.offload", "vllm.config.kv_transfer",
                  "vllm.config.structured_outputs", "vllm.config.vllm")
BOUNDS = ("gt", "ge", "lt", "le")


def nested_config_facts(src: Source, classes: Classes) -> Dict[str, Dict[str, Any]]:
    """Return flag dest -> {"class", "extra", "validated", "fields": {name: {...}}}."""
    out: Dict[str, Dict[str, Any]] = {}
    hints = Hints(classes)
    engine_mod = src.module_file(ARG_UTILS)
    engine = src.find_class(engine_mod, "EngineArgs") if engine_mod is not None else None
    at_parse = parse_time_classes(classes, engine, set(NESTED_CONFIGS.values()))
    fields = {stmt.target.id for stmt in engine[1].body if isinstance(stmt, ast.AnnAssign)
              and isinstance(stmt.target, ast.Name)} if engine is not None else set()
    for dest, class_name in NESTED_CONFIGS.items():
        if class_name == "PoolerConfig" and engine is not None and dest not in fields:
            continue   # the pooler config's flag was renamed: only this release's name
        found = _find_config_class(src, class_name)
        if found is not None:
            out[dest] = _class_spec(src, classes, hints, *found, depth=0)
            checks = value_checks(classes, *found) if class_name in at_parse else {}
            if checks:
                # built from the flag's JSON at parse time: its post-init checks the value
                out[dest]["checks"] = checks
            detection = draft_detection(classes, *found) if dest == "speculative_config" else None
            if detection:
                out[dest]["draft_detection"] = detection
    return out


def _class_spec(src: Source, classes: Classes, hints: Hints, mod: Module, cls: ast.ClassDef,
                depth: int) -> Dict[str, Any]:
    """Return {"class", "extra", "validated", "fields"} of one config class.

    A field whose type is itself a config dataclass carries that class's spec as "nested"
    (one level: `pass_config` of the compilation config), and a field a validator parses as
    an enum by name (`CUDAGraphMode[value.upper()]`) carries the member "names".
    """
    pydantic = _is_pydantic(src, mod, cls, classes)
    enums = dict(_enum_validators(src, mod, cls, classes))
    rewritten = _rewriting_validators(cls)
    fields: Dict[str, Dict[str, Any]] = {}
    for name, info in classes.fields(mod, cls).items():
        if name.startswith("_") or _init_false(info.value):
            continue
        fields[name] = _field_summary(hints.atoms(info.annotation, info.mod), info.value)
        if "SkipValidation" in ast.dump(info.annotation):
            fields[name]["unchecked"] = True   # pydantic skips it (0.10.x num_speculative_tokens)
        if name in enums:
            fields[name]["names"] = enums[name]
        values = _enum_values(src, classes, info, hints.atoms(info.annotation, info.mod)) \
            if name not in rewritten else None
        if values:
            fields[name]["enum_values"] = values
        inner = src.entity(info.annotation, info.mod) if isinstance(
            info.annotation, (ast.Name, ast.Attribute)) else None
        if depth == 0 and pydantic and inner is not None and inner[0] == "class" and \
                classes.is_dataclass(inner[1], inner[2]):
            fields[name]["nested"] = _class_spec(src, classes, hints, inner[1], inner[2], depth + 1)
    return {"class": cls.name, "extra": _extra_policy(src, mod, cls, pydantic),
            "validated": pydantic, "fields": fields}


def _enum_validators(src: Source, mod: Module, cls: ast.ClassDef, classes: Classes):
    """Yield (field, enum member names) for validators that return `Enum[value.upper()]`.

    A name outside the enum then fails with pydantic wrapping `KeyError: 'BOGUS'` (0.10.1+
    `cudagraph_mode`); the lookup is by upper-cased name, so any case is accepted.
    """
    for stmt in cls.body:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        names = [a.value for deco in stmt.decorator_list if isinstance(deco, ast.Call)
                 and _last_name(deco.func) == "field_validator"
                 for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not names:
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                    isinstance(node.slice, ast.Call) and isinstance(node.slice.func, ast.Attribute) \
                    and node.slice.func.attr == "upper":
                found = src.entity(node.value, mod)
                if found is not None and found[0] == "class" and classes.is_enum(found[1], found[2]):
                    members = [m for m, _ in classes.enum_members(found[1], found[2])]
                    for name in names:
                        yield name, members


def _enum_values(src: Source, classes: Classes, info, atoms) -> Optional[List[Any]]:
    """Return the member values of a field typed by one enum (`mode: CompilationMode`), else None.

    pydantic validates such a field by value: `{"mode": 9}` fails with `Input should be 0, 1,
    2 or 3` (0.12+). Only literal int or str values are kept (`auto()` is not judged), and only
    for the enum itself or an Optional of it (not `list[Mode]`).
    """
    if sorted(a[0] for a in atoms if a[0] != "none") != ["class"]:
        return None
    found = []
    for node in ast.walk(info.annotation):
        if isinstance(node, (ast.Name, ast.Attribute)):
            entity = src.entity(node, info.mod)
            if entity is not None and entity[0] == "class":
                found.append(entity)
    enums = [e for e in found if classes.is_enum(e[1], e[2])]
    if len(enums) != 1 or len(found) != 1:
        return None      # a union with another class: pydantic may take the value as that
    values = []
    for _name, value in classes.enum_members(enums[0][1], enums[0][2]):
        if not (isinstance(value, ast.Constant) and isinstance(value.value, (int, str))
                and not isinstance(value.value, bool)):
            return None
        values.append(value.value)
    return values if values and len({type(v) for v in values}) == 1 else None


def _rewriting_validators(cls: ast.ClassDef) -> set:
    """Return fields whose `mode="before"`/`"wrap"` validators may change a value that is no string.

    Such a validator runs before pydantic's own type check, so the field's type says nothing
    certain about what the user wrote. A validator that only converts strings (`if
    isinstance(value, str): ...; return value`) or skips None (`if value is None: return
    value; return handler(value)`) hands every other value on unchanged.
    """
    out = set()
    for stmt in cls.body:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        for deco in stmt.decorator_list:
            if not (isinstance(deco, ast.Call) and _last_name(deco.func) == "field_validator"):
                continue
            mode = next((k.value.value for k in deco.keywords if k.arg == "mode"
                         and isinstance(k.value, ast.Constant)), "after")
            if mode in ("before", "wrap", "plain") and not _passes_others_on(stmt):
                out.update(a.value for a in deco.args if isinstance(a, ast.Constant))
    return out


def _passes_others_on(fn: ast.FunctionDef) -> bool:
    params = [a.arg for a in fn.args.args]
    value = params[1] if len(params) > 1 and params[0] == "cls" else params[0] if params else None
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body or value is None:
        return False
    last = body[-1]
    returned = last.value if isinstance(last, ast.Return) else None
    if isinstance(returned, ast.Call) and len(params) > 2 and _last_name(returned.func) == params[-1]:
        returned = returned.args[0] if len(returned.args) == 1 else None   # handler(value)
    if not (isinstance(returned, ast.Name) and returned.id == value):
        return False
    for stmt in body[:-1]:
        test = stmt.test if isinstance(stmt, ast.If) and not stmt.orelse else None
        is_str = isinstance(test, ast.Call) and _last_name(test.func) == "isinstance" and len(test.args) == 2 \
            and isinstance(test.args[0], ast.Name) and test.args[0].id == value and _last_name(test.args[1]) == "str"
        is_none = isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == value \
            and isinstance(test.ops[0], ast.Is) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None
        if not (is_str or is_none):
            return False
    return True


def value_range_facts(src: Source, classes: Classes) -> Dict[str, Dict[str, Any]]:
    """Return EngineArgs dest -> what a config class checks of its value after parsing.

    {"gt"/"ge"/"lt"/"le": bound} from `Field(...)` or a guard, or {"choices": [...]} from a
    `field_validator` that refuses values outside the field's Literal (0.33 kv_cache_dtype),
    with "class", "how" and, for guards and validators, the raised "message".
    """
    dests = _engine_dests(src, classes)
    passed = _passed_through(src)
    hints = Hints(classes)
    out: Dict[str, Dict[str, Any]] = {}
    _read_ranges(src, classes, dests, passed, hints, out)
    switches = _build_switches(src)
    for entry in out.values():
        if entry.get("class") in switches:
            entry.setdefault("when", switches[entry["class"]])
    return out


def _build_switches(src: Source) -> Dict[str, str]:
    """Return class -> the EngineArgs switch without which it is never built (`enable_lora`)."""
    from patchops.lint.extract import guard_programs  # it reads CONFIG_MODULES from here

    out = {}
    for name, built in guard_programs.constructions(src).items():
        terms = built["when"][1] if built["when"][0] == "and" else []
        if len(terms) == 1 and terms[0][0] == "dest":
            out[name] = terms[0][1]
    return out


def _read_ranges(src: Source, classes: Classes, dests, passed, hints, out: Dict[str, Dict[str, Any]]) -> None:
    for class_name in RANGE_CLASSES:
        found = _find_config_class(src, class_name)
        if found is None:
            continue
        cmod, cls = found
        fields = classes.fields(cmod, cls)
        mapped = {name: dests.get((class_name, name), name if (None, name) in dests else None)
                  for name in fields}
        rewritten = _rewriting_validators(cls) if _is_pydantic(src, cmod, cls, classes) else None
        for name, info in fields.items():
            if name.startswith("_"):
                continue  # private fields are no flags
            bounds = _field_bounds(info.value)
            if bounds and mapped[name]:
                out.setdefault(mapped[name], {"class": class_name, "how": "pydantic Field"}).update(bounds)
            values = _enum_values(src, classes, info, hints.atoms(info.annotation, info.mod)) \
                if rewritten is not None and name not in rewritten and mapped[name] else None
            if values:
                # `optimization_level: OptimizationLevel` (0.12+): `-O5` fails with "Input should be 0, 1, 2 or 3"
                out.setdefault(mapped[name], {"class": class_name, "how": "enum field", "choices": values})
        for guard_field, bound, value, message, method in constant_guards(cls):
            dest = mapped.get(guard_field) or (guard_field if (None, guard_field) in dests else None)
            if method == "after" and dest in out and out[dest]["how"] == "pydantic Field":
                # A model_validator(mode="after") sees the value vLLM resolved (`-1` -> the
                # derived length): kept apart from the Field bounds on what the user writes.
                out[dest]["after"] = {bound: value, **({"message": message} if message else {})}
                continue
            if method != "named":
                continue

            # Before 0.8 the configs are plain classes (no annotated fields): same-name dests.
            if dest and dest not in out and dest in passed:
                entry = {"class": class_name, "how": "guard", bound: value}
                if message:
                    entry["message"] = message
                if passed[dest]:
                    entry["unless_set"] = passed[dest]
                out[dest] = entry
        for guard_field, other, message in relation_guards(cls):
            dest = mapped.get(guard_field)
            other_dest = mapped.get(other) or (other if (None, other) in dests else None)
            if dest and other_dest and dest in passed:
                entry = out.setdefault(dest, {"class": class_name, "how": "guard"})
                entry["le_field"] = other_dest
                if message:
                    entry["le_field_message"] = message
        for name, message in _choice_validators(cls):
            dest = mapped.get(name)
            if not dest or name not in fields:
                continue
            choices = [v for atom in hints.atoms(fields[name].annotation, fields[name].mod)
                       if atom[0] == "literal" for v in atom[1]]
            if choices:
                out.setdefault(dest, {"class": class_name, "how": "field_validator"}).update(
                    choices=choices, message=message)


def _engine_dests(src: Source, classes: Classes) -> Dict[Tuple[Optional[str], str], str]:
    """Map (config class, field) -> EngineArgs dest, from defaults like `CacheConfig.cache_dtype`.

    (None, name) keys list every EngineArgs field, for configs whose field has the same name.
    """
    out: Dict[Tuple[Optional[str], str], str] = {}
    mod = src.module_file(ARG_UTILS)
    found = src.find_class(mod, "EngineArgs") if mod is not None else None
    if not found:
        return out
    for name, info in classes.fields(*found).items():
        out[(None, name)] = name
        value = info.value
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            out.setdefault((value.value.id, value.attr), name)
        elif isinstance(value, ast.Call) and _last_name(value.func) == "get_field" and len(value.args) == 2 \
                and isinstance(value.args[0], ast.Name) and isinstance(value.args[1], ast.Constant):
            out.setdefault((value.args[0].id, value.args[1].value), name)
    return out


def _passed_through(src: Source) -> Dict[str, Optional[str]]:
    """Return the EngineArgs fields handed to a config class unchanged (create_engine_config).

    A guard only sees the user's value when EngineArgs passes it on unchanged: `x=self.x`, or
    `x=x` after a plain copy `x = self.x`. 0.8.5 computes `num_lookahead_slots = max(...)`
    itself, so `--num-lookahead-slots -1` never meets its guard; 0.10.1+ copies it and only
    replaces the copy under `if speculative_config is not None:`. The value is that setting
    (the user's value does not reach the guard when it is given), else None.
    """
    mod = src.module_file(ARG_UTILS)
    out: Dict[str, Optional[str]] = {}
    for fn in ast.walk(mod.tree) if mod is not None else ():
        if not isinstance(fn, ast.FunctionDef):
            continue
        copies = {name: None for name in _plain_copies(fn)}
        for node in ast.walk(fn):
            if isinstance(node, ast.If):
                for name in _assigned_names(node.body):
                    if name in copies:
                        copies[name] = _tested_setting(node.test)
        for node in ast.walk(fn):
            if not (isinstance(node, ast.keyword) and node.arg):
                continue
            value = node.value
            if _self_attr(value):
                out[value.attr] = None
            elif isinstance(value, ast.Name) and value.id in copies and value.id == node.arg:
                out.setdefault(value.id, copies[value.id])
    return out


def _self_attr(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"


def _plain_copies(fn: ast.FunctionDef) -> List[str]:
    """Return the local names a function body sets once, at its top level, to `self.<same name>`."""
    copies = [stmt.targets[0].id for stmt in fn.body
              if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
              and isinstance(stmt.targets[0], ast.Name) and _self_attr(stmt.value)
              and stmt.value.attr == stmt.targets[0].id]
    assigned = _assigned_names(fn.body)
    return [name for name in copies if assigned.count(name) == 1]


def _assigned_names(body: List[ast.stmt]) -> List[str]:
    return [t.id for stmt in body if isinstance(stmt, ast.Assign) for t in stmt.targets
            if isinstance(t, ast.Name)]


def _tested_setting(test: ast.AST) -> Optional[str]:
    """Return X for `if X is not None:` (a local copy of the EngineArgs setting X)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return test.left.id
    return None


def _choice_validators(cls: ast.ClassDef):
    """Yield (field, message) for `@field_validator("f")` methods that raise on a bad value."""
    for stmt in cls.body:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        for deco in stmt.decorator_list:
            if isinstance(deco, ast.Call) and _last_name(deco.func) == "field_validator" \
                    and len(deco.args) == 1 and isinstance(deco.args[0], ast.Constant):
                raises = [n for n in ast.walk(stmt) if isinstance(n, ast.Raise)]
                if raises and any(isinstance(n, ast.Compare) or
                                  (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not))
                                  for n in ast.walk(stmt)):
                    yield deco.args[0].value, _message_prefix(raises[0])


def _message_prefix(raise_stmt: ast.Raise) -> Optional[str]:
    """Return the raised message up to its first interpolation ("Invalid kv_cache_dtype: ")."""
    exc = raise_stmt.exc
    if not (isinstance(exc, ast.Call) and exc.args):
        return None
    text = ""
    for piece in string_pieces(exc.args[0]):
        if not (isinstance(piece, ast.Constant) and isinstance(piece.value, str)):
            break
        text += piece.value
    return text or None


# -- classes -----------------------------------------------------------------------------------


def _find_config_class(src: Source, name: str) -> Optional[Tuple[Module, ast.ClassDef]]:
    for dotted in CONFIG_MODULES:
        mod = src.module(dotted)
        if mod is None:
            continue
        found = src.find_class(mod, name)
        if found is not None:
            return found
    return None


def _decorator_origins(src: Source, mod: Module, cls: ast.ClassDef) -> List[tuple]:
    origins = []
    for deco in cls.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        origins.append((deco, src.entity(target, mod)))
    return origins


def _is_pydantic(src: Source, mod: Module, cls: ast.ClassDef, classes: Classes) -> bool:
    if "BaseModel" in classes.base_names(mod, cls):
        return True
    for _deco, origin in _decorator_origins(src, mod, cls):
        if origin is None:
            continue
        if origin[0] == "external" and origin[1].startswith("pydantic"):
            return True
        if origin[0] == "func" and _mentions(origin[2], "pydantic_dataclass", "dataclass"):
            # vLLM's own @config decorator (0.12+) wraps pydantic.dataclasses.dataclass.
            return _module_imports_pydantic(origin[1])
    return False


def _module_imports_pydantic(mod: Module) -> bool:
    for node in mod.tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pydantic"):
            return True
        if isinstance(node, ast.Import) and any(a.name.startswith("pydantic") for a in node.names):
            return True
    return False


def _mentions(fn: ast.AST, *names: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(fn))


def _extra_policy(src: Source, mod: Module, cls: ast.ClassDef, pydantic: bool) -> str:
    """Return "reject" when an unknown key makes vLLM raise, "ignore" when it is dropped."""
    if not pydantic:
        return "reject"  # a stdlib dataclass: __init__() got an unexpected keyword argument
    places: List[ast.AST] = [cls]
    for deco, origin in _decorator_origins(src, mod, cls):
        places.append(deco)
        if origin is not None and origin[0] == "func":
            places.append(origin[2])
    for place in places:
        for node in ast.walk(place):
            if isinstance(node, ast.keyword) and node.arg == "extra" and \
                    isinstance(node.value, ast.Constant) and node.value.value == "forbid":
                return "reject"
    return "ignore"


# -- fields ------------------------------------------------------------------------------------


def _init_false(value: Optional[ast.AST]) -> bool:
    if isinstance(value, ast.Call) and _last_name(value.func) in ("field", "Field"):
        for kw in value.keywords:
            if kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                return True
    return False


def _field_summary(atoms, value: Optional[ast.AST]) -> Dict[str, Any]:
    """Reduce annotation atoms to JSON: the kinds of value allowed, Literal choices, bounds."""
    kinds = set()
    choices: List[Any] = []
    for atom in sorted(atoms, key=repr):   # a set: one order whatever the hash seed (a union of Literals)
        kind = atom[0]
        if kind == "literal":
            choices.extend(atom[1])
            kinds.update("str" if isinstance(v, str) else "int" if isinstance(v, int) else "other"
                         for v in atom[1])
        elif kind in ("int", "float", "str", "bool", "none", "list", "set", "tuple"):
            kinds.add("list" if kind in ("set", "tuple") else kind)
        elif kind in ("dict", "dictsub", "dataclass"):
            kinds.add("dict")
        else:
            kinds.add("other")       # an enum, a class, a callable: not judged
    summary: Dict[str, Any] = {"kinds": sorted(kinds)}
    only_literal = atoms and all(a[0] in ("literal", "none") for a in atoms)
    if choices and only_literal:
        summary["choices"] = choices
    summary.update(_field_bounds(value))
    return summary


def _field_bounds(value: Optional[ast.AST]) -> Dict[str, Any]:
    if not (isinstance(value, ast.Call) and _last_name(value.func) == "Field"):
        return {}
    out = {}
    for kw in value.keywords:
        if kw.arg in BOUNDS:
            number = literal_number(kw.value)
            if number is not None:
                out[kw.arg] = number
    return out
