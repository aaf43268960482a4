"""Read the values vLLM will see from a config: settings, environment, hardware and workload.

Every reader takes the ReadConfig `read_as_vllm` returns, so a setting vLLM drops (a YAML
`false` under `vllm serve`, an ignored Outcome) counts as absent.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from patchops.lint.input.serve_config import Setting, parse_compute_capability, parse_literal
from patchops.lint.input.serve_config import as_bool as to_bool  # re-exported: rules convert values from here
from patchops.lint.input.serve_config import as_int as to_int
from patchops.lint.input.serve_config import as_int_list as to_int_list
from patchops.lint.facts.model import Facts, Flag
from patchops.lint.input.model_config import other_model_facts as model_facts_of  # re-exported: a draft model's config.json
from patchops.lint.reading.read_config import Fate, ReadConfig
from patchops.lint.vllm.prediction import Prediction
from patchops.lint.vllm.releases import SPECULATIVE_CONFIG, V1_ORACLE, release

# Fields whose None default ends up false: ModelConfig turns enforce_eager=None into False (<=0.8.5).
NONE_MEANS_FALSE = ("enforce_eager",)

POOLING_TASKS = ("embed", "embedding", "classify", "score", "reward", "pooling")
NON_CUDA_PLATFORMS = ("cpu", "tpu", "xpu", "neuron", "hpu", "openvino", "gaudi")


def _names(name: str) -> Tuple[str, ...]:
    base = name.lstrip("-")
    return tuple(dict.fromkeys((base, base.replace("-", "_"), base.replace("_", "-"))))


def setting(cfg: ReadConfig, name: str) -> Optional[Setting]:
    """Return the Setting vLLM will see for EngineArgs field `name`, or None.

    A setting the reader marked as not reaching vLLM (`cfg.dropped`, e.g. a YAML `false`
    dropped under `vllm serve`) counts as absent, and so does one whose value the input does
    not show (`--kv-cache-dtype $KV`): no prediction is made from text vLLM never gets.
    """
    for key in _names(name):
        found = cfg.args.get(key)
        if found is None:
            continue
        if found.unknown or is_dropped(cfg, key, found):
            return None
        return found
    return None


def value(cfg: ReadConfig, name: str, default: Any = None) -> Any:
    """Return the raw value of `name` as vLLM will see it, or `default`."""
    found = setting(cfg, name)
    return default if found is None else found.value


def int_value(cfg: ReadConfig, name: str) -> Optional[int]:
    return to_int(value(cfg, name))


def bool_value(cfg: ReadConfig, name: str) -> Optional[bool]:
    """Return True/False for a boolean field (`--no-x` spellings included), None when unset."""
    found = setting(cfg, name)
    if found is not None:
        return to_bool(found.value) if found.value is not None else None
    negated = setting(cfg, "no_" + name.replace("-", "_"))
    if negated is not None:
        flag = to_bool(negated.value)
        return None if flag is None else not flag
    return None


def bool_setting(cfg: ReadConfig, name: str) -> Optional[Setting]:
    """Return the Setting behind bool_value(): the field or its `no_` spelling."""
    return setting(cfg, name) or setting(cfg, "no_" + name.replace("-", "_"))


def int_list(cfg: ReadConfig, name: str) -> Optional[List[int]]:
    return to_int_list(value(cfg, name))


def env_setting(cfg: ReadConfig, var: str) -> Optional[Setting]:
    return cfg.env.get(var)


def env_value(cfg: ReadConfig, var: str) -> Optional[str]:
    found = cfg.env.get(var)
    return None if found is None or found.value is None else str(found.value).strip()


def env_text(cfg: ReadConfig, name: str) -> Optional[str]:
    """Return environment variable `name` as the vLLM process sees it, unstripped (None when unset)."""
    found = cfg.env.get(name)
    return None if found is None or found.value is None else str(found.value)


def ctx_setting(cfg: ReadConfig, path: str) -> Optional[Setting]:
    return cfg.context.get(path)


def ctx_value(cfg: ReadConfig, path: str) -> Any:
    found = cfg.context.get(path)
    return None if found is None else found.value


def compute_capability(cfg: ReadConfig) -> Optional[Tuple[int, int]]:
    """Return the stated GPU compute capability as (major, minor): 8.0, "8.6", "sm_90", 90, [8, 6]."""
    raw = ctx_value(cfg, "hardware.compute_capability")
    if isinstance(raw, (list, tuple)) and len(raw) == 2:
        return (to_int(raw[0]), to_int(raw[1])) if None not in (to_int(raw[0]), to_int(raw[1])) else None
    number = parse_compute_capability(raw)
    if number is None:
        return None
    major, minor = f"{number:.1f}".split(".")
    return (int(major), int(minor))


def memory_gib(cfg: ReadConfig) -> Optional[float]:
    raw = ctx_value(cfg, "hardware.memory_gib")
    if raw is None or isinstance(raw, bool):
        return None
    try:
        return float(str(raw).strip().lower().rstrip("gib").strip())
    except ValueError:
        return None


def device_name(cfg: ReadConfig) -> Optional[str]:
    """Return the stated GPU name (hardware.name, lower case), e.g. "nvidia a100-sxm4-80gb", or None."""
    raw = ctx_value(cfg, "hardware.name")
    if isinstance(raw, str) and raw.strip():
        return raw.strip().lower()
    return None


def platform(cfg: ReadConfig) -> Optional[str]:
    raw = ctx_value(cfg, "hardware.platform")
    return None if raw is None else str(raw).strip().lower()


def is_cuda_like(cfg: ReadConfig) -> Optional[bool]:
    """Return whether the platform runs vLLM's CUDA paths (vendor CUDA-likes count), None if unstated."""
    name = platform(cfg)
    if name is None:
        return None
    return not any(name.startswith(p) for p in NON_CUDA_PLATFORMS)


def concurrency_levels(cfg: ReadConfig) -> List[int]:
    """Return the workload.concurrency levels (an int or a list), ascending."""
    raw = ctx_value(cfg, "workload.concurrency")
    levels = to_int_list(raw) if not isinstance(raw, dict) else None
    return sorted({n for n in levels or [] if n > 0})


def max_model_len(cfg: ReadConfig) -> Prediction:
    """Return the max_model_len the config states; None when it comes from the model's config.json."""
    found = setting(cfg, "max_model_len")
    number = to_int(found.value) if found is not None else None
    if number is not None and number > 0:
        return Prediction(number, f"max_model_len {number}", fields=("max_model_len",))
    return Prediction(None, "max_model_len comes from the model's config.json", certain=False)


def compilation_value(cfg: ReadConfig, key: str) -> Tuple[Any, Optional[Setting]]:
    """Return (value, setting) of compilation_config sub-key `key`, from whichever form was used.

    Forms: a dict (YAML), a JSON or Python-literal string (`'{"level": 3}'`), an int (`-O 3`,
    the level), or dotted keys (`compilation_config.cudagraph_capture_sizes`, 0.9+). A dotted
    key wins over a whole-dict value for the same sub-key. (None, None) when absent.
    """
    key = key.replace("-", "_")
    for name, found in cfg.args.items():
        dotted = name.lstrip("-").replace("-", "_")
        if dotted in (f"compilation_config.{key}", f"O.{key}"):
            if is_dropped(cfg, name, found):
                continue
            raw = found.value
            if isinstance(raw, str):
                raw = parse_literal(raw)
            return raw, found
    whole = setting(cfg, "compilation_config")
    if whole is None:
        return None, None
    raw = whole.value
    if isinstance(raw, str):
        raw = parse_literal(raw)
    if isinstance(raw, dict):
        for name, sub in raw.items():
            if str(name).replace("-", "_") == key:
                return sub, whole
        return None, None
    if key in ("level", "mode") and to_int(raw) is not None:
        return to_int(raw), whole
    return None, None


# --------------------------------------------------------------------------- environment


def use_v1_env(cfg: ReadConfig) -> Optional[bool]:
    """Return VLLM_USE_V1 as vLLM reads it (`bool(int(...))`), None when unset or unreadable."""
    raw = env_value(cfg, "VLLM_USE_V1")
    if raw is None:
        return None
    try:
        return bool(int(raw))
    except ValueError:
        return None


def attention_backend_env(cfg: ReadConfig) -> Optional[str]:
    raw = env_value(cfg, "VLLM_ATTENTION_BACKEND")
    return raw or None


def num_scheduler_steps(cfg: ReadConfig) -> Optional[int]:
    """Return the explicit --num-scheduler-steps value (a removed key still counts)."""
    found = setting(cfg, "num_scheduler_steps") or unknown_setting(cfg, "num_scheduler_steps")
    return None if found is None else to_int(found.value)


def multistep_setting(cfg: ReadConfig) -> Optional[Setting]:
    """Return the accepted --num-scheduler-steps setting when it asks for multi-step (> 1)."""
    steps = num_scheduler_steps(cfg)
    found = setting(cfg, "num_scheduler_steps")
    return found if found is not None and steps is not None and steps > 1 else None


def v0_multistep_setting(cfg: ReadConfig, facts: Facts) -> Optional[Setting]:
    """Return multistep_setting() where V0's own multi-step checks get to run.

    From 0.8.5 `VLLM_USE_V1=1` makes the V1 oracle refuse multi-step first (PO302).
    """
    if release(facts) >= V1_ORACLE and use_v1_env(cfg):
        return None
    return multistep_setting(cfg)


def unknown_setting(cfg: ReadConfig, name: str) -> Optional[Setting]:
    """Return a key vLLM's parser will reject (an unknown Outcome) whose name is `name`."""
    wanted = set(_names(name))
    for found in (o.setting for o in cfg.outcomes_of(Fate.UNKNOWN)):
        if found.name.lstrip("-") in wanted or found.name.lstrip("-").replace("-", "_") in wanted:
            return found
    return None


def speculative_method(cfg: ReadConfig, facts: Facts) -> Optional[str]:
    """Return the speculative method ("ngram", "eagle", "draft_model", ...) or None without spec decode."""
    if release(facts) < SPECULATIVE_CONFIG:
        model = value(cfg, "speculative_model")
        if model in (None, "", "None"):
            return None
        return "ngram" if str(model) in ("[ngram]", "ngram") else "draft_model"
    raw = value(cfg, "speculative_config")
    if raw in (None, "", "None"):
        return None
    if isinstance(raw, str):
        raw = parse_literal(raw)
    if not isinstance(raw, dict):
        return "unknown"
    method = raw.get("method")
    if method:
        return "ngram" if method in ("[ngram]", "ngram") else str(method)
    model = raw.get("model")
    if model in ("ngram", "[ngram]"):
        return "ngram"
    return "draft_model" if model else "unknown"


def speculative_setting(cfg: ReadConfig, facts: Facts) -> Optional[Setting]:
    """Return the setting that turns speculative decoding on (speculative_config, or speculative_model before 0.8.5)."""
    return setting(cfg, "speculative_model" if release(facts) < SPECULATIVE_CONFIG else "speculative_config")


def num_speculative_tokens(cfg: ReadConfig, facts: Facts) -> Optional[int]:
    """Return the draft tokens proposed per step as stated; None when unstated (MTP may take it from the model)."""
    if release(facts) < SPECULATIVE_CONFIG:
        return int_value(cfg, "num_speculative_tokens")
    raw = value(cfg, "speculative_config")
    raw = parse_literal(raw) if isinstance(raw, str) else raw
    return to_int(raw.get("num_speculative_tokens")) if isinstance(raw, dict) else None


def is_pooling(cfg: ReadConfig) -> bool:
    task = value(cfg, "task")
    runner = value(cfg, "runner")
    return (isinstance(task, str) and task.lower() in POOLING_TASKS) or runner == "pooling"


def enforce_eager(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return whether the copy runs eagerly: the user's flag, or a fork hardcoding it (facts.hardcoded)."""
    hard = facts.hardcoded.get("enforce_eager") if facts.hardcoded else None
    if hard is not None and str(hard).strip() == "True":
        return Prediction(True, "this vLLM build hardcodes enforce_eager=True in EngineArgs",
                          fields=("enforce_eager",))
    flag = bool_value(cfg, "enforce_eager")
    if flag:
        return Prediction(True, "enforce_eager is set", fields=("enforce_eager",))
    return Prediction(False, "enforce_eager is off", fields=("enforce_eager",) if flag is False else ())


def literal_default(facts: Facts, name: str) -> Any:
    """Return a fork's literal EngineArgs default for `name` (None means "filled in at launch")."""
    return facts.field_defaults.get(name) if facts.field_defaults else None


# --------------------------------------------------------------------------- config-file values


# PyYAML's bool resolver (yaml/resolver.py) follows YAML 1.1: these words are booleans, `y` and
# `n` are not. true/false are left out: writing them means a boolean.
YAML11_WORDS = {w: True for w in ("yes", "Yes", "YES", "on", "On", "ON")}
YAML11_WORDS.update({w: False for w in ("no", "No", "NO", "off", "Off", "OFF")})

BOOLEAN_ACTIONS = ("store_true", "store_false", "boolean_optional", "store_boolean")


def is_boolean(flag: Optional[Flag]) -> bool:
    """Return whether `flag` takes a boolean (so a YAML boolean is what the user meant)."""
    return flag is not None and (flag.action in BOOLEAN_ACTIONS or flag.type == "bool")


def yaml11_word(setting: Setting) -> Optional[str]:
    """Return the YAML 1.1 boolean word `setting` was written with, if any."""
    raw = (setting.raw or "").strip()
    if setting.source == "yaml" and raw in YAML11_WORDS and isinstance(setting.value, bool):
        return raw
    return None


def written_settings(cfg: ReadConfig) -> List[Setting]:
    """Return the YAML settings as the user wrote them (values before vLLM's reading), in order."""
    if cfg.config_settings:
        return list(cfg.config_settings)
    judged = (Fate.ACCEPTED, Fate.IGNORED, Fate.REJECTED)
    found = [o.setting for fate in judged for o in cfg.outcomes_of(fate) if o.setting.source == "yaml"]
    return sorted(found, key=lambda s: (s.line, s.column))


def is_dropped(cfg: ReadConfig, name: str, found: Setting) -> bool:
    """Return whether reading dropped the very setting `found` of `name` (an ignored Outcome)."""
    dropped = cfg.dropped(name)
    return dropped is not None and dropped.setting == found


def quantization_taken_over(cfg: ReadConfig, facts: Facts) -> bool:
    """Whether the checkpoint's method is one an override claims whatever `--quantization`
    says (0.3x: a gpt-oss MXFP4 checkpoint), so the user's choice is never checked."""
    model = cfg.model_facts
    method = model.quant_method if model is not None else None
    return bool(method) and any(method in (entry.takes_over or ())
                                for entry in facts.quantization_limits.values())


def to_float(value, default: float) -> float:
    """Return a setting's value as a float, `default` when unset or not a number."""
    try:
        return float(str(value).strip()) if value is not None else default
    except ValueError:
        return default


def to_text(value) -> Optional[str]:
    """Return a setting's value as stripped text, None when unset."""
    return str(value).strip() if value is not None else None
