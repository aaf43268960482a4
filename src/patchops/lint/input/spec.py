"""Read a serve spec or a plain vLLM `--config` YAML mapping into a ServeConfig.

A serve spec holds `args:` (vLLM flags, spelled as a `--config` file spells them), `env:`,
`model:` and optional context (`vllm:`, `hardware:`, `workload:`, `entrypoint:`); a plain
config is flat keys, as `vllm serve --config` reads them. yamlread gives the positioned nodes;
bad shapes raise LintInputError with `file:line:col: ...`.
"""

from __future__ import annotations

import difflib
from typing import Any, Dict, List, Set, Tuple

from patchops.lint.input import yaml_nodes as yamlread
from patchops.lint.input.serve_config import ServeConfig, Setting, input_error, normalize_key, parse_compute_capability
from patchops.lint.input.yaml_nodes import YEntry, YMap, YNode, YScalar, YSeq

SPEC_KEYS = ("args", "env", "model", "vllm", "hardware", "workload", "entrypoint")
# Keys no vLLM flag has: any of them at the top level marks a serve spec.
SPEC_ONLY_KEYS = ("args", "env", "vllm", "hardware", "workload", "entrypoint")
# Context sections of a serve spec: key -> expected type (see _context_value).
CONTEXT_SCHEMA: Dict[str, Dict[str, str]] = {
    "vllm": {"version": "text", "python": "text"},
    "hardware": {"gpus": "pos_int", "memory_gib": "pos_number", "platform": "text",
                 "compute_capability": "cc", "name": "text", "host_memory_gib": "pos_number",
                 "free_memory_gib": "pos_number"},
    "workload": {"concurrency": "int_list", "max_tokens": "pos_int", "prompt_tokens": "pos_int",
                 "tools": "bool"},
}
ENTRYPOINTS = {"serve": "serve", "api_server": "api_server", "api-server": "api_server"}


def _did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _key_text(path: str, entry: YEntry, where: str) -> str:
    key = entry.key
    if isinstance(key.value, str):
        return key.value
    if isinstance(key.value, bool) and not key.quoted:
        raise input_error(path, key, f"the key `{key.raw}` in {where} is read by YAML as the boolean "
                              f"{key.value} (YAML 1.1), not as text; quote it: \"{key.text}\"")
    raise input_error(path, key, f"the key `{key.raw}` in {where} is {yamlread.kind_of(key)}, "
                          "not a name; keys must be strings")


def _setting(key: str, name: str, entry: YEntry, source: str = "yaml") -> Setting:
    node = entry.value
    if isinstance(node, YScalar):
        value, raw = node.value, node.raw
    else:
        value, raw = yamlread.to_python(node), None
    return Setting(key=key, name=name, value=value, line=entry.key.line,
                   column=entry.key.column, raw=raw, source=source, **spans(entry))


def spans(entry: YEntry) -> Dict[str, Any]:
    """Return the key_span and value_span of an entry written where it stands (not merged in)."""
    key, value = entry.key, entry.value
    if entry.merged or key.start < 0:
        return {}
    written = value.start >= key.end     # an alias's node sits at its anchor, earlier
    return {"key_span": (key.start, key.end),
            "value_span": (value.start, value.end) if written else None}


def _nested_duplicates(cfg: ServeConfig, node: YNode, prefix: str) -> None:
    """Record duplicate keys in every mapping below `node` (its own keys are handled by the caller)."""
    stack: List[Tuple[YNode, str, bool]] = [(node, prefix, False)]
    while stack:
        current, where, check_self = stack.pop()
        if isinstance(current, YMap):
            if check_self:
                for earlier, later in current.duplicates():
                    name = f"{where}.{earlier.key.text}" if where else earlier.key.text
                    cfg.duplicates.append((_setting(earlier.key.text, name, earlier),
                                           _setting(later.key.text, name, later)))
            for entry in current.entries:
                if not entry.merged:
                    child = f"{where}.{entry.key.text}" if where else entry.key.text
                    stack.append((entry.value, child, True))
        elif isinstance(current, YSeq):
            for index, item in enumerate(current.items):
                stack.append((item, f"{where}[{index}]", True))


def _read_flag_mapping(cfg: ServeConfig, node: YMap, where: str) -> None:
    """Read a mapping of vLLM flags (spec `args:` or a plain config) into args/config_settings."""
    by_key: Dict[str, Setting] = {}
    by_name: Dict[str, Setting] = {}
    from_merge: Set[str] = set()        # names last set by a `<<:` merge (overriding is fine)
    for entry in node.entries:
        key = _key_text(cfg.path, entry, where)
        setting = _setting(key, normalize_key(key), entry)
        if not entry.merged and setting.name in by_name and setting.name not in from_merge:
            cfg.duplicates.append((by_name[setting.name], setting))
        by_name[setting.name] = setting
        if entry.merged:
            from_merge.add(setting.name)
        else:
            from_merge.discard(setting.name)
        by_key[key] = setting           # dict order: first occurrence, last value (safe_load)
        if setting.name == "model":
            cfg.model = setting
        else:
            cfg.args[setting.name] = setting
    cfg.config_settings = list(by_key.values())
    _nested_duplicates(cfg, node, where if where != "the file" else "")


def read_plain_config(cfg: ServeConfig, root: YMap) -> None:
    _read_flag_mapping(cfg, root, "the file")


def read_spec(cfg: ServeConfig, root: YMap) -> None:
    path = cfg.path
    top: Dict[str, YEntry] = {}
    for earlier, later in root.duplicates():
        name = earlier.key.text
        cfg.duplicates.append((_setting(name, name, earlier), _setting(name, name, later)))
    for entry in root.entries:
        key = _key_text(path, entry, "the serve spec")
        if key not in SPEC_KEYS:
            raise input_error(path, entry.key, f"unknown top-level key `{key}` in a serve spec"
                       f"{_did_you_mean(key, SPEC_KEYS)} (expected: {', '.join(SPEC_KEYS)}; "
                       "vLLM flags go under `args:`)")
        top[key] = entry

    if "args" in top:
        node = top["args"].value
        if isinstance(node, YMap):
            _read_flag_mapping(cfg, node, "args")
            args_model = cfg.model
        elif isinstance(node, YScalar) and node.value is None:
            args_model = None
        else:
            raise input_error(path, top["args"].key, "`args` must be a mapping of vLLM flags "
                       f"(like `max-model-len: 4096`), found {yamlread.kind_of(node)}")
    else:
        args_model = None

    if "model" in top:
        entry = top["model"]
        if not isinstance(entry.value, YScalar) or not isinstance(entry.value.value, str) \
                or not entry.value.value.strip():
            raise input_error(path, entry.key, "`model` must be a model name or path (a string), found "
                       f"{yamlread.kind_of(entry.value)}")
        model = _setting("model", "model", entry)
        if args_model is not None:
            cfg.duplicates.append((args_model, model))
        cfg.model = model

    if "env" in top:
        node = top["env"].value
        if isinstance(node, YMap):
            for earlier, later in node.duplicates():
                name = earlier.key.text
                cfg.duplicates.append((_env_setting(path, earlier), _env_setting(path, later)))
            for entry in node.entries:
                setting = _env_setting(path, entry)
                cfg.env[setting.name] = setting
        elif not (isinstance(node, YScalar) and node.value is None):
            raise input_error(path, top["env"].key, "`env` must be a mapping of environment variables "
                       f"(like `VLLM_USE_V1: \"1\"`), found {yamlread.kind_of(node)}")

    if "entrypoint" in top:
        entry = top["entrypoint"]
        node = entry.value
        value = node.value if isinstance(node, YScalar) else None
        if not isinstance(value, str) or value not in ENTRYPOINTS:
            raise input_error(path, entry.key, "`entrypoint` must be `serve` (vllm serve) or "
                       "`api_server` (python -m vllm.entrypoints.openai.api_server), found "
                       f"{yamlread.kind_of(node)}")
        cfg.entrypoint = ENTRYPOINTS[value]
        cfg.context["entrypoint"] = _setting("entrypoint", "entrypoint", entry)

    for section, schema in CONTEXT_SCHEMA.items():
        if section not in top:
            continue
        entry = top[section]
        node = entry.value
        if isinstance(node, YScalar) and node.value is None:
            continue
        if not isinstance(node, YMap):
            raise input_error(path, entry.key, f"`{section}` must be a mapping (keys: "
                       f"{', '.join(schema)}), found {yamlread.kind_of(node)}")
        for earlier, later in node.duplicates():
            name = f"{section}.{earlier.key.text}"
            cfg.duplicates.append((_setting(earlier.key.text, name, earlier),
                                   _setting(later.key.text, name, later)))
        for item in node.entries:
            key = _key_text(path, item, f"`{section}`")
            if key not in schema:
                raise input_error(path, item.key, f"unknown key `{key}` in `{section}`"
                           f"{_did_you_mean(key, schema)} (expected: {', '.join(schema)})")
            value = _context_value(path, f"{section}.{key}", item, schema[key])
            if value is _ABSENT:
                continue
            raw = item.value.raw if isinstance(item.value, YScalar) else None
            cfg.context[f"{section}.{key}"] = Setting(
                key=key, name=f"{section}.{key}", value=value, line=item.key.line,
                column=item.key.column, raw=raw, source="yaml", **spans(item))


def _env_setting(path: str, entry: YEntry) -> Setting:
    name = _key_text(path, entry, "`env`")
    node = entry.value
    if not isinstance(node, YScalar):
        raise input_error(path, entry.key, f"the environment variable `{name}` must have a plain value, "
                   f"found {yamlread.kind_of(node)}")
    # An environment variable is text: keep it as written (`VLLM_USE_V1: 1` means "1", and
    # `true` means "true", not Python's True).
    value = "" if node.tag == yamlread.NULL_TAG and not node.quoted else node.text
    return Setting(key=name, name=name, value=value, line=entry.key.line,
                   column=entry.key.column, raw=node.raw, source="env", **spans(entry))


_ABSENT = object()


def _context_value(path: str, dotted: str, entry: YEntry, expected: str) -> Any:
    node = entry.value
    where = entry.key
    if isinstance(node, YScalar) and node.value is None and not node.quoted:
        return _ABSENT
    got = yamlread.kind_of(node)
    if expected == "text":
        if not isinstance(node, YScalar):
            raise input_error(path, where, f"`{dotted}` must be a plain value, found {got}")
        return node.text            # `version: 0.10` stays "0.10", not the float 0.1
    if expected in ("pos_int", "pos_number"):
        value = node.value if isinstance(node, YScalar) else None
        ok_types = (int,) if expected == "pos_int" else (int, float)
        if isinstance(value, bool) or not isinstance(value, ok_types) or value <= 0:
            noun = "a positive integer" if expected == "pos_int" else "a positive number"
            raise input_error(path, where, f"`{dotted}` must be {noun}, found {got}")
        return value
    if expected == "bool":
        value = node.value if isinstance(node, YScalar) else None
        if not isinstance(value, bool):
            raise input_error(path, where, f"`{dotted}` must be true or false, found {got}")
        return value
    if expected == "cc":
        value = node.value if isinstance(node, YScalar) else None
        if isinstance(value, bool) or parse_compute_capability(value) is None:
            raise input_error(path, where, f"`{dotted}` must be a CUDA compute capability such as 8.0, "
                       f"\"8.9\" or \"sm_90\", found {got}")
        return value
    if expected == "int_list":
        one = node.value if isinstance(node, YScalar) else None
        if isinstance(one, int) and not isinstance(one, bool) and one > 0:
            return [one]   # `concurrency: 8`, as people write one level
        if not isinstance(node, YSeq) or not node.items:
            raise input_error(path, where, f"`{dotted}` must be a positive integer or a list of them "
                       f"such as [1, 2, 4, 8], found {got}")
        values = []
        for item in node.items:
            value = item.value if isinstance(item, YScalar) else None
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise input_error(path, item, f"`{dotted}` must be a list of positive integers such "
                           f"as [1, 2, 4, 8]; this item is {yamlread.kind_of(item)}")
            values.append(value)
        return values
    raise AssertionError(expected)  # pragma: no cover
