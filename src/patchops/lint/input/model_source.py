"""Which model config each input is judged with, and why none when there is none.

In order: `--model-config MODEL=FILE` for that model, a folder of snapshots given with
`--model-config DIR`, a bare `--model-config FILE` (the old form, for one input), the model's
own folder or its Hugging Face cache snapshot, else the Hub (host/hub.py) unless fetching is
off. A given config whose `_name_or_path` or architecture names another model than the
input's is not used: PO004 says so, and the model-aware rules are listed as not run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence, Tuple

from patchops.core.errors import UsageError
from patchops.lint.input.model_config import (ModelFacts, hub_snapshots, launch_environment,
                                              read_model_facts, with_launch_overrides)

NOT_HERE = ("no model config.json", "pass --model-config FILE")
NO_MODEL = ("the input names no model", "state `model:`, or lint the command that names it")
# Architecture words that name a model family; Llama's is left out: many families reuse
# LlamaForCausalLM (Yi, DeepSeek-Coder v1, TinyLlama), so it contradicts no model name.
FAMILIES = ("qwen", "mistral", "mixtral", "gemma", "phi", "falcon", "baichuan", "chatglm",
            "internlm", "deepseek", "gpt2", "bloom", "starcoder", "mpt", "llama", "opt")
GENERIC_ARCHITECTURE = "llama"
YES, NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass(frozen=True)
class GivenConfigs:
    """What `--model-config` says: MODEL=FILE pairs, one bare FILE, folders of snapshots;
    `read` is a bare config already read (a rule example's)."""

    by_model: Tuple[Tuple[str, Path], ...] = ()
    default: Optional[Path] = None
    folders: Tuple[Path, ...] = ()
    read: Optional[ModelFacts] = None

    def file_for(self, model: str) -> Optional[Path]:
        for name, path in self.by_model:
            if name.lower() == model.lower():
                return path
        return None


@dataclass(frozen=True)
class ModelSource:
    """The config an input's model is judged with (`facts`), where it came from, or why none.

    `origin`: "given", "snapshots", "local", "hub" or "" (none); `reason`/`hint` say why
    there is none; `contradiction` names the other model a given config is for.
    """

    model: Optional[str]
    facts: Optional[ModelFacts] = None
    origin: str = ""
    reason: str = ""
    hint: str = ""
    contradiction: Optional[str] = None
    path: Optional[str] = None     # the config.json considered (used or not)


def parse_given(values: Sequence[str]) -> GivenConfigs:
    """Read `--model-config` values: `MODEL=FILE`, `FILE` (once) or `DIR`; UsageError otherwise."""
    by_model, default, folders = [], None, []
    for value in values:
        model, sep, file = value.partition("=")
        if sep and not Path(value).exists() and model and file:
            by_model.append((model, Path(file).expanduser()))
            continue
        path = Path(value).expanduser()
        if path.is_dir() and not (path / "config.json").is_file():
            folders.append(path)
            continue
        if default is not None:
            raise UsageError(f"--model-config {value}: a second bare FILE; name the model each one "
                             "is for: --model-config MODEL=FILE")
        default = path / "config.json" if path.is_dir() else path
    return GivenConfigs(tuple(by_model), default, tuple(folders))


def fetch_allowed(fetch: Optional[bool], setting: Optional[bool]) -> bool:
    """Return whether lint may ask the Hub: `--fetch/--no-fetch`, else PATCHOPS_FETCH, else the
    settings' `fetch`, else yes (a PATCHOPS_FETCH that is no yes or no is a UsageError)."""
    if fetch is not None:
        return fetch
    word = os.environ.get("PATCHOPS_FETCH", "").strip().lower()
    if word:
        if word not in YES + NO:
            raise UsageError(f"PATCHOPS_FETCH={word}: expected 1 or 0")
        return word in YES
    return setting if setting is not None else True


def choose(cfg: Any, given: GivenConfigs, fetch: bool) -> ModelSource:
    """Return the model config `cfg` (a read ServeConfig) is judged with; read errors of a given
    file raise LintInputError, a Hub that cannot answer is a reason instead."""
    model = cfg.model.value if cfg.model is not None and isinstance(cfg.model.value, str) else None
    if model is None:
        return ModelSource(None, reason=NO_MODEL[0], hint=NO_MODEL[1])
    named = given.file_for(model)
    if named is not None:
        return _given(cfg, model, named)
    for folder in given.folders:
        found = _in_folder(folder, model)
        if found is not None:
            return _used(cfg, model, found, "snapshots")
    if given.default is not None or given.read is not None:
        return _given(cfg, model, given.default, given.read)
    env = launch_environment(cfg)
    revision = _revision(cfg)
    found = _local(cfg, model, env, revision)
    if found is not None:
        return _used(cfg, model, found, "local")
    if not fetch or not HUB_ID.fullmatch(model):
        return ModelSource(model, reason=NOT_HERE[0], hint=NOT_HERE[1])
    if env.get("VLLM_USE_MODELSCOPE", "").strip().lower() in YES:
        # vLLM asks ModelScope then (transformers_utils/config.py:305, 0.11.0), not the Hub.
        return ModelSource(model, reason=f"VLLM_USE_MODELSCOPE is set: {model} comes from ModelScope, "
                           "which lint does not ask", hint=f"pass --model-config {model}=FILE")
    return _fetched(cfg, model, env, revision)


def _given(cfg: Any, model: str, path: Optional[Path], read: Optional[ModelFacts] = None) -> ModelSource:
    facts = read or read_model_facts(path)  # type: ignore[arg-type]
    shown = str(path) if path is not None else facts.path
    other = contradiction(facts, model)
    if other is None:
        return ModelSource(model, with_launch_overrides(facts, cfg), "given", path=shown)
    return ModelSource(model, origin="given", reason=f"the model config {shown} is for {other}",
                       hint=f"pass --model-config {model}=FILE", contradiction=other, path=shown)


def _used(cfg: Any, model: str, path: Path, origin: str) -> ModelSource:
    return ModelSource(model, with_launch_overrides(read_model_facts(path), cfg), origin, path=str(path))


def _fetched(cfg: Any, model: str, env, revision: Optional[str]) -> ModelSource:
    from patchops.host import hub
    from patchops.lint import result_cache

    found = hub.fetch(model, env, revision=revision)
    if found.asked:  # the Hub's answer is no file: a later run reads what this one cached
        result_cache.uncacheable()
    if found.problem is not None:
        return ModelSource(model, origin="hub", reason=found.reason, hint=found.hint)
    return _used(cfg, model, Path(found.files["config.json"]), "hub")


def contradiction(facts: ModelFacts, model: str) -> Optional[str]:
    """Return the model a config is for when it is plainly not `model`, else None.

    `_name_or_path` naming another hub id says so; so does an architecture of one family for
    a model whose name names only other families (a Qwen2 config for a Llama launch).
    """
    own = facts.name_or_path
    if HUB_ID.fullmatch(own) and HUB_ID.fullmatch(model) and \
            own.lower().rsplit("/", 1)[-1] != model.lower().rsplit("/", 1)[-1]:
        return own
    words = re.split(r"[^a-z0-9]+", model.lower())
    named = {family for family in FAMILIES if any(word.startswith(family) for word in words)}
    for architecture in facts.architectures:
        family = next((f for f in FAMILIES if f in architecture.lower()), None)
        if family not in (None, GENERIC_ARCHITECTURE) and named and family not in named:
            return f"a {architecture} model"
    return None


def _in_folder(folder: Path, model: str) -> Optional[Path]:
    """Return `model`'s config.json in a folder of snapshots: an HF cache, ORG/NAME or NAME."""
    cache = hub_snapshots(model, {"HF_HUB_CACHE": str(folder)}) if HUB_ID.fullmatch(model) else None
    candidates = [folder / model / "config.json", folder / model.rsplit("/", 1)[-1] / "config.json"]
    if cache is not None and cache.is_dir():
        candidates[:0] = sorted(cache.glob("*/config.json"), key=os.path.getmtime, reverse=True)
    return next((c for c in candidates if c.is_file()), None)


def _local(cfg: Any, model: str, env, revision: Optional[str]) -> Optional[Path]:
    """Return the model's own folder's config.json, else (no --revision) its newest cached snapshot."""
    from patchops.lint.input.model_config import find_model_config

    base = Path(cfg.path).parent if Path(cfg.path).is_file() else None
    return find_model_config(model, env, [base] if base else [], cached=revision is None)


def _revision(cfg: Any) -> Optional[str]:
    found = cfg.args.get("revision")
    return str(found.value) if found is not None and isinstance(found.value, str) and found.value else None
