"""The model architectures a vLLM copy knows, and which of them only V0 runs, read with `ast`.

`vllm/model_executor/models/registry.py` maps each `architectures` name of a config.json to
a (module, class) in its `_*_MODELS` dicts. 0.8.5-0.11 mark the classes V1 cannot run with the
`SupportsV0Only` interface (interfaces.py), inherited like any base: the V1 oracle then
reports `model_config.architectures` (`ModelConfig.is_v1_compatible`); 0.9-0.10 also send
the classes with `HasInnerState` (Mamba-style state) to V0 unless VLLM_USE_V1=1 (the oracle's
`_warn_or_fallback(feature_name="Mamba")`), and 0.8.5 resolves `--task auto` of a
`SupportsTranscription` class (Whisper) to "transcription", which its oracle refuses. From 0.12
an unset prefix caching follows the class's attention type (`IsAttentionFree`, `IsHybrid`), and
in every release pipeline parallelism needs `SupportsPP` and LoRA `SupportsLoRA`. From 0.11
the same file
names removed architectures in `_PREVIOUSLY_SUPPORTED_MODELS` (arch -> the last release) and,
later, those moved to plugins in `_OOT_SUPPORTED_MODELS` (arch -> plugin URL), which
`_raise_for_unsupported` refuses with their own messages.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, Optional, Set, Tuple

from patchops.lint.extract.source_tree import MAX_DEPTH, Module, Source

REGISTRY_FILE = "vllm/model_executor/models/registry.py"
# where ModelConfig lives: 0.8.5, 0.10.x, 0.11+
MODEL_CONFIG_FILES = ("vllm/config.py", "vllm/config/__init__.py", "vllm/config/model.py")
HF_CONFIG_FILE = "vllm/transformers_utils/config.py"  # get_config and vLLM's own config classes
MODELS_PACKAGE = "vllm.model_executor.models"
# The interfaces read, each a Protocol class with its ClassVar flag: the facts key for each.
INTERFACES = {"v0_only": ("SupportsV0Only", "supports_v0_only"),
              "inner_state": ("HasInnerState", "has_inner_state"),
              "transcription": ("SupportsTranscription", "supports_transcription"),
              "attention_free": ("IsAttentionFree", "is_attention_free"),
              "hybrid": ("IsHybrid", "is_hybrid")}
PP_INTERFACE = ("SupportsPP", "supports_pp")
LORA_INTERFACE = ("SupportsLoRA", "supports_lora")   # the LoRA model runner's supports_lora(model)
POOLING_INTERFACE = ("VllmModelForPooling", "is_pooling_model")   # interfaces_base.py, 0.10+
GENERATION_METHOD = "compute_logits"   # is_text_generation_model: VllmModelForTextGeneration's method
REMOVED_TABLES = {"_PREVIOUSLY_SUPPORTED_MODELS": "previously_supported",
                  "_OOT_SUPPORTED_MODELS": "out_of_tree"}


def architecture_facts(src: Source) -> Dict[str, Any]:
    """Return {"registered", "v0_only", "inner_state", "transcription", "attention_free", "hybrid",
    "no_pp" (without SupportsPP), "pooling_only": [names], "no_lora": {name: class without
    SupportsLoRA}, "previously_supported", "out_of_tree": {name: ...}}.

    {} when the registry cannot be read. An architecture whose class cannot be found has no
    interface (vLLM would fail to inspect it anyway).
    """
    mod = src.module_file(REGISTRY_FILE)
    if mod is None:
        return {}
    classes: Dict[str, Tuple[str, str]] = {}
    out: Dict[str, Any] = {}
    for node in mod.tree.body:
        target = _assigned_name(node)
        value = getattr(node, "value", None)
        if target is None or not isinstance(value, ast.Dict):
            continue
        if target in REMOVED_TABLES:
            out[REMOVED_TABLES[target]] = {k.value: v.value for k, v in zip(value.keys, value.values)
                                           if _is_str(k) and _is_str(v)}
        elif target.endswith("_MODELS"):
            for key, entry in zip(value.keys, value.values):
                if _is_str(key) and isinstance(entry, ast.Tuple) and len(entry.elts) >= 2 \
                        and _is_str(entry.elts[0]) and _is_str(entry.elts[1]):
                    classes.setdefault(key.value, (entry.elts[0].value, entry.elts[1].value))
    lists = {key: _with_interface(src, classes, interface, flag)
             for key, (interface, flag) in INTERFACES.items()}
    lists["no_pp"] = _without_pp(src, classes)
    lists["no_lora"] = _without_interface(src, classes, *LORA_INTERFACE)
    lists["pooling_only"] = _pooling_only(src, classes)
    return {"registered": sorted(classes), **lists, **out, **model_type_facts(src)}


def model_type_facts(src: Source) -> Dict[str, Any]:
    """Return what the config code says of some config.json `model_type`s.

    "float16_unsupported": {model_type: reason} of `_FLOAT16_NOT_SUPPORTED_MODELS`, which
    `_check_valid_dtype` refuses with an explicit float16 (0.9+); "interleaved": the
    `interleaved_attn_models` of ModelConfig.__init__ (0.8.5), whose sliding window vLLM keeps
    out of the cache config (later releases ask `is_interleaved`, the config's `layer_types`);
    "config_classes": the model types `get_config` builds with a config class of vLLM's own
    (`_CONFIG_REGISTRY`) instead of asking transformers' AutoConfig.
    """
    out: Dict[str, Any] = {}
    own = _config_registry(src)
    if own:
        out["config_classes"] = own
    for rel in MODEL_CONFIG_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for node in ast.walk(mod.tree):
            target, value = _assigned_name(node), getattr(node, "value", None)
            if target == "_FLOAT16_NOT_SUPPORTED_MODELS" and isinstance(value, ast.Dict):
                out["float16_unsupported"] = {k.value: v.value for k, v in zip(value.keys, value.values)
                                              if _is_str(k) and _is_str(v)}
            elif target == "interleaved_attn_models" and isinstance(value, (ast.List, ast.Tuple)):
                out["interleaved"] = sorted(e.value for e in value.elts if _is_str(e))
    return out


def _config_registry(src: Source) -> list:
    """The keys of `_CONFIG_REGISTRY`: a dict literal with `**` merges of other module dicts
    (0.6-0.10), or `LazyConfigDict(name="Class", ...)` keywords (0.11+)."""
    mod = src.module_file(HF_CONFIG_FILE)
    if mod is None:
        return []
    dicts = {_assigned_name(n): n.value for n in mod.tree.body if isinstance(getattr(n, "value", None), ast.Dict)}

    def keys(value: Optional[ast.AST], depth: int = 0) -> Set[str]:
        if isinstance(value, ast.Call) and depth < MAX_DEPTH:
            return {k.arg for k in value.keywords if k.arg} | set().union(
                *(keys(dicts.get(k.value.id) if isinstance(k.value, ast.Name) else None, depth + 1)
                  for k in value.keywords if k.arg is None))
        if isinstance(value, ast.Dict) and depth < MAX_DEPTH:
            return {k.value for k in value.keys if _is_str(k)} | set().union(
                *(keys(dicts.get(v.id), depth + 1) for k, v in zip(value.keys, value.values)
                  if k is None and isinstance(v, ast.Name)))
        return set()

    found = next((n.value for n in mod.tree.body if _assigned_name(n) == "_CONFIG_REGISTRY"), None)
    return sorted(keys(found))


def _with_interface(src: Source, classes: Dict[str, Tuple[str, str]], interface: str, flag: str) -> list:
    """Return the registered architectures whose class is or inherits `interface`, sorted.

    Parsing every model file costs seconds (0.33 registers 415 architectures), so only the
    modules that name the interface, its flag or a class already found to have it are parsed,
    until no new one turns up: a class inherits only what its module imports by name.
    """
    holders: Set[str] = {interface, flag}
    found: Set[str] = set()
    seen: Dict[str, bool] = {}
    grew = True
    while grew:
        grew = False
        for arch, (module, cls) in classes.items():
            if arch in found or not _mentions(src, module, holders):
                continue
            mod = src.module(f"{MODELS_PACKAGE}.{module}")
            hit = src.find_class(mod, cls) if mod is not None else None
            if hit is not None and _class_has(src, hit[0], hit[1], interface, flag, seen, holders, 0):
                found.add(arch)
                grew = True
    return sorted(found)


def _without_pp(src: Source, classes: Dict[str, Tuple[str, str]]) -> list:
    """Return the registered architectures whose class lacks SupportsPP (few), sorted.

    Nearly every model file names SupportsPP, so the classes of those files are taken to have
    it and only the others are parsed. A file that names it for one class but registers
    another without it (gpt2.py's GPT2ForSequenceClassification) is missed: a missed
    refusal, never a false one.
    """
    interface, flag = PP_INTERFACE
    seen: Dict[str, bool] = {}
    out = []
    for arch, (module, cls) in classes.items():
        if _mentions(src, module, {interface, flag}):
            continue
        mod = src.module(f"{MODELS_PACKAGE}.{module}")
        hit = src.find_class(mod, cls) if mod is not None else None
        if hit is not None and not _class_has(src, hit[0], hit[1], interface, flag, seen, set(), 0):
            out.append(arch)
    return sorted(out)


def _without_interface(src: Source, classes: Dict[str, Tuple[str, str]], interface: str,
                       flag: str) -> Dict[str, str]:
    """Return {architecture: class name} of the registered classes that surely lack `interface`.

    A class lacks it when neither it nor a base sets the flag or is the interface, and every
    base resolves (to a class of the copy or an outside one): a base that cannot be read might
    carry it, so its class is left out (a missed refusal, never a false one).
    """
    have = set(_with_interface(src, classes, interface, flag))
    seen: Dict[str, bool] = {}
    out = {}
    for arch, (module, cls) in sorted(classes.items()):
        if arch in have:
            continue
        mod = src.module(f"{MODELS_PACKAGE}.{module}")
        hit = src.find_class(mod, cls) if mod is not None else None
        if hit is not None and _bases_resolve(src, hit[0], hit[1], 0) and \
                not _class_has(src, hit[0], hit[1], interface, flag, seen, set(), 0):
            out[arch] = cls
    return out


def _bases_resolve(src: Source, mod: Module, node: ast.ClassDef, depth: int) -> bool:
    """Whether every base of the class, and of its bases in the copy, resolves (`Generic[T]` does)."""
    if depth > MAX_DEPTH:
        return False
    for base in node.bases:
        found = src.entity(base.value if isinstance(base, ast.Subscript) else base, mod)
        if found is None or found[0] not in ("external", "class"):
            return False
        if found[0] == "class" and not _bases_resolve(src, found[1], found[2], depth + 1):
            return False
    return True


def _pooling_only(src: Source, classes: Dict[str, Tuple[str, str]]) -> list:
    """Return the registered architectures whose class pools and cannot generate, sorted.

    `ModelConfig.__post_init__` (0.10+) refuses `--runner generate` for them: the class sets
    `is_pooling_model` (or inherits VllmModelForPooling) and no class of its bases defines
    `compute_logits`. Before 0.10 the pooling protocol has no flag and the registry says every
    model can pool (`is_pooling_model=True`: vLLM converts it), so `_resolve_task` refuses
    `--task generate` for any class without `compute_logits` (every model file is parsed then).
    """
    pooling = set(_with_interface(src, classes, *POOLING_INTERFACE)) or set(classes)
    out = []
    for arch in sorted(pooling):
        module, cls = classes[arch]
        mod = src.module(f"{MODELS_PACKAGE}.{module}")
        hit = src.find_class(mod, cls) if mod is not None else None
        if hit is not None and not _defines(src, hit[0], hit[1], GENERATION_METHOD, 0):
            out.append(arch)
    return out


def _defines(src: Source, mod: Module, node: ast.ClassDef, method: str, depth: int) -> bool:
    """Whether the class or a base it names defines `method`; an external base is taken to
    define it (a missed refusal, never a false one)."""
    if depth > MAX_DEPTH:
        return True
    if any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == method
           for stmt in node.body):
        return True
    for base in node.bases:
        found = src.entity(base, mod)
        if found is None or found[0] == "external":
            name = found[1].rsplit(".", 1)[-1] if found else ""
            if name not in ("Module", "Protocol", "Generic") and not name.startswith("Supports"):
                return True
        elif found[0] == "class" and _defines(src, found[1], found[2], method, depth + 1):
            return True
    return False


def _mentions(src: Source, module: str, names: Set[str]) -> bool:
    """Whether the model module's text names any of `names`."""
    base = f"{MODELS_PACKAGE}.{module}".replace(".", "/")
    for rel in (base + ".py", base + "/__init__.py"):
        if src.stat(rel) is not None:
            try:
                text = (src.site / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return False
            return any(name in text for name in names)
    return False


def _class_has(src: Source, mod: Module, node: ast.ClassDef, interface: str, flag: str,
               seen: Dict[str, bool], holders: Set[str], depth: int) -> bool:
    """Whether the class is or inherits `interface`, or sets its ClassVar `flag` itself.

    Every class found to have it joins `holders`, so the modules naming it are read next.
    """
    qual = f"{mod.name}.{node.name}"
    if node.name == interface:
        return True
    if qual in seen or depth > MAX_DEPTH:
        return seen.get(qual, False)
    seen[qual] = False  # a cycle: not (yet) known to have it
    result = False
    for stmt in node.body:
        if _assigned_name(stmt) == flag and isinstance(getattr(stmt, "value", None), ast.Constant):
            result = stmt.value.value is True
            break
    else:
        for base in node.bases:
            found = src.entity(base, mod)
            if found is None:
                continue
            if found[0] == "external" and found[1].rsplit(".", 1)[-1] == interface:
                result = True
            elif found[0] == "class":
                result = _class_has(src, found[1], found[2], interface, flag, seen, holders, depth + 1)
            if result:
                break
    seen[qual] = result
    if result:
        holders.add(node.name)
    return result


def _assigned_name(node: ast.stmt) -> Optional[str]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _is_str(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)
