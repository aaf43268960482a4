"""Whether one key of a JSON config flag (`--speculative-config`, `--compilation-config`) is a
field of the class vLLM builds from it, and whether pydantic takes its value (facts
`nested_configs[dest].fields`, read by extract/config_fields.py).

pydantic's lax mode is the judge: `"1"` is an int, `"yes"` a bool, `1.0` an int; a class
without validation (a plain dataclass before 0.12) takes any value of a field it has.
PO112 words what this finds; the class's own post-init checks are nested_values'.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from patchops.lint.facts.groups import NestedConfig
from patchops.lint.vllm.nested_values import BOOL_WORDS, BOUND_HOLDS, BOUND_WORDS, TYPE_NOUNS


@dataclass(frozen=True)
class FieldProblem:
    """What is wrong with one key, what it may take (for a choice), how bad, and vLLM's message."""

    headline: str
    takes: Optional[str] = None
    severity: Optional[str] = None     # "warning" where vLLM drops the key silently; None: the rule's
    vllm_message: Optional[str] = None


def field_problem(spec: NestedConfig, key: str, item: Any, within: str = "") -> Optional[FieldProblem]:
    """Return what is wrong with `key: item` in the class `spec` describes, or None.

    `within` is the enclosing field of a nested class ("pass_config."), as vLLM names it.
    """
    fields = spec.fields
    cls = spec.class_name
    if key not in fields:
        if spec.extra == "reject":
            vllm_text = (f"{within}{key}: Unexpected keyword argument" if within else
                         "Extra inputs are not permitted") if spec.validated else \
                f"{cls}.__init__() got an unexpected keyword argument '{key}'"
            return FieldProblem(f"has no field {within + key!r} in {cls}", vllm_message=vllm_text)
        return FieldProblem(f"key {within + key!r} is not a {cls} field, and vLLM drops it without a word",
                            severity="warning")
    field = fields[key]
    if not spec.validated or field.unchecked:
        return None
    names = field.names
    if names and isinstance(item, str) and item.upper() not in names:
        return FieldProblem(f"{key} {item!r} is not one of its {len(names)} values",
                            f"one of {', '.join(names)} (any case)", vllm_message=f"KeyError: {item.upper()!r}")
    nested = field.nested
    if nested and isinstance(item, dict):
        for inner_key, inner in item.items():
            problem = field_problem(nested, inner_key, inner, f"{within}{key}.")
            if problem is not None:
                return problem
        return None
    values = field.enum_values
    if values and type(item) is type(values[0]) and item not in values:
        listed = _either(values)
        return FieldProblem(f"{key} {item!r} is not one of its {len(values)} values", f"one of {listed}",
                            vllm_message=f"{within}{key}: Input should be {listed}")
    choices = field.choices
    if choices is not None and item is not None and item not in choices:
        listed = ", ".join(repr(c) for c in choices)
        return FieldProblem(f"{key} {item!r} is not one of its {len(choices)} values", f"one of {listed}",
                            vllm_message=f"Input should be {listed}")
    kind = _wrong_kind(field.kinds, item)
    if kind is not None:
        return FieldProblem(f"{key} {json.dumps(item)} is not {kind}", vllm_message=f"Input should be {kind}")
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        for bound, limit in field.bounds().items():
            if not BOUND_HOLDS[bound](item, limit):
                return FieldProblem(f"{key} ({item}) must be {BOUND_WORDS[bound]} {limit}",
                                    vllm_message=f"Input should be {BOUND_WORDS[bound]} {limit}")
    return None


def _either(values) -> str:
    """Join values as pydantic lists what an enum takes: `0, 1, 2 or 3`."""
    shown = [repr(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _wrong_kind(kinds, item: Any) -> Optional[str]:
    """Return what pydantic (lax mode) wants when `item` fits none of `kinds`, else None."""
    if not kinds or "other" in kinds or item is None:
        return None
    if isinstance(item, bool):
        fits = "bool" in kinds or "int" in kinds or "float" in kinds
    elif isinstance(item, int):
        fits = "int" in kinds or "float" in kinds or ("bool" in kinds and item in (0, 1))
    elif isinstance(item, float):
        fits = "float" in kinds or ("int" in kinds and item.is_integer())
    elif isinstance(item, str):
        fits = "str" in kinds or ("bool" in kinds and item.strip().lower() in BOOL_WORDS) or \
            (("int" in kinds or "float" in kinds) and _numeric(item))
    elif isinstance(item, list):
        fits = "list" in kinds
    elif isinstance(item, dict):
        fits = "dict" in kinds
    else:
        fits = True
    if fits:
        return None
    first = next((k for k in kinds if k in TYPE_NOUNS), None)
    return TYPE_NOUNS.get(first) if first else None


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
