"""Predict what a vLLM version will do with a config: engine, scheduler defaults, backend, graphs.

vLLM fills many settings in at launch from the engine (V0/V1), the usage context (`vllm serve`
is always OPENAI_API_SERVER) and the hardware. Rules need those effective values to predict a
refusal or a silent degradation, and they need to say why; every predictor therefore returns a
`Prediction`: the value, a short reason, and whether it is certain (when the answer hangs on
hardware or model facts the config does not state, the conservative value comes first and the
other candidates are in `alternatives`).

Sources (read from the PyPI wheels, never imported): `engine/arg_utils.py`
(`_is_v1_supported_oracle`, `_set_default_args_v0/_v1`, `_set_default_args`,
`get_batch_defaults`), `config.py` / `config/scheduler.py` (SchedulerConfig), `config/vllm.py`
(`_set_cudagraph_sizes`), `attention/selector.py` (0.6.3) and `platforms/cuda.py`
(`get_attn_backend_cls`), `worker/multi_step_model_runner.py`,
`worker/model_runner.py` (0.6.3 `_BATCH_SIZES_TO_CAPTURE`). See
shared/reference/vllm-launch-checks.md sections 0, 2, 3, 4, 5 and 6.9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet

from patchops.lint.config import ServeConfig, Setting, parse_compute_capability, parse_literal
from patchops.lint.config import as_bool as to_bool
from patchops.lint.config import as_int as to_int
from patchops.lint.config import as_int_list as to_int_list
from patchops.lint.facts import Facts
from patchops.versions import release as rel_version
from patchops.versions import release_tuple

V0 = "V0"
V1 = "V1"
SMALL, LARGE, HUGE = "small", "large", "huge"  # hardware tiers of the V1 batch defaults
# 0.11.0 entrypoints/openai/api_server.py, after the oracle chose V0.
NO_V0_ERROR = "AssertionError (assert envs.VLLM_USE_V1 in entrypoints/openai/api_server.py)"

LONG_CONTEXT = 32768  # V0 switches chunked prefill on above this max_model_len
DEFAULT_BATCHED_TOKENS_V0 = 2048  # _DEFAULT_MAX_NUM_BATCHED_TOKENS (0.7.3+)
POOLING_BATCHED_TOKENS = 32768
V0_CAPTURE_CANDIDATES = tuple([1, 2, 4] + [8 * i for i in range(1, 1025)])
POOLING_TASKS = ("embed", "embedding", "classify", "score", "reward", "pooling")
NON_CUDA_PLATFORMS = ("cpu", "tpu", "xpu", "neuron", "hpu", "openvino", "gaudi")

# MultiStepModelRunner's allowed lists (worker/multi_step_model_runner.py), by get_name().
MULTISTEP_BACKENDS_063 = ("flash-attn", "rocm-flash-attn", "flashinfer")
MULTISTEP_CHUNKED_BACKENDS_063 = ("flash-attn",)
MULTISTEP_BACKENDS = ("FLASH_ATTN", "ROCM_FLASH", "FLASHINFER", "NO_ATTENTION")
MULTISTEP_CHUNKED_BACKENDS = ("FLASH_ATTN", "FLASHINFER")
# 0.6.3 AttentionBackend.get_name() spellings of the _Backend members.
GET_NAME_063 = {"FLASH_ATTN": "flash-attn", "XFORMERS": "xformers", "ROCM_FLASH": "rocm-flash-attn",
                "FLASHINFER": "flashinfer", "TORCH_SDPA": "torch-sdpa", "OPENVINO": "openvino",
                "IPEX": "ipex-attn", "NO_ATTENTION": "placeholder-attn", "PALLAS": "pallas"}


@dataclass(frozen=True)
class Prediction:
    """A predicted effective value, why, and how sure: unpacks as `value, reason`."""

    value: Any
    reason: str
    certain: bool = True
    alternatives: Tuple[Any, ...] = ()   # other values possible under facts the config lacks
    fields: Tuple[str, ...] = ()         # the settings that decided it
    error: Optional[str] = None          # what vLLM raises while deciding this, if it does

    def __iter__(self):
        yield self.value
        yield self.reason

    @property
    def candidates(self) -> Tuple[Any, ...]:
        """Return the value then the alternatives, without repeats."""
        out: List[Any] = []
        for item in (self.value,) + tuple(self.alternatives):
            if item not in out:
                out.append(item)
        return tuple(out)


# --------------------------------------------------------------------------- versions


def release(version: Any) -> Tuple[int, int, int]:
    """Return (major, minor, micro) of a Facts or a version string; "dev" reads as newest."""
    return release_tuple(version.version if isinstance(version, Facts) else str(version))


# --------------------------------------------------------------------------- reading values


def _names(name: str) -> Tuple[str, ...]:
    base = name.lstrip("-")
    return tuple(dict.fromkeys((base, base.replace("-", "_"), base.replace("_", "-"))))


def setting(cfg: ServeConfig, name: str) -> Optional[Setting]:
    """Return the Setting vLLM will see for EngineArgs field `name`, or None.

    A setting the reader marked as not reaching vLLM (`cfg.ignored`, e.g. a YAML `false`
    dropped under `vllm serve`) counts as absent.
    """
    for key in _names(name):
        found = cfg.args.get(key)
        if found is None:
            continue
        dropped = cfg.ignored.get(key)
        if dropped is not None and dropped[0] == found:
            return None
        return found
    return None


def value(cfg: ServeConfig, name: str, default: Any = None) -> Any:
    """Return the raw value of `name` as vLLM will see it, or `default`."""
    found = setting(cfg, name)
    return default if found is None else found.value


def int_value(cfg: ServeConfig, name: str) -> Optional[int]:
    return to_int(value(cfg, name))


def bool_value(cfg: ServeConfig, name: str) -> Optional[bool]:
    """Return True/False for a boolean field (`--no-x` spellings included), None when unset."""
    found = setting(cfg, name)
    if found is not None:
        return to_bool(found.value) if found.value is not None else None
    negated = setting(cfg, "no_" + name.replace("-", "_"))
    if negated is not None:
        flag = to_bool(negated.value)
        return None if flag is None else not flag
    return None


def bool_setting(cfg: ServeConfig, name: str) -> Optional[Setting]:
    """Return the Setting behind bool_value(): the field or its `no_` spelling."""
    return setting(cfg, name) or setting(cfg, "no_" + name.replace("-", "_"))


def int_list(cfg: ServeConfig, name: str) -> Optional[List[int]]:
    return to_int_list(value(cfg, name))


def env_setting(cfg: ServeConfig, var: str) -> Optional[Setting]:
    return cfg.env.get(var)


def env_value(cfg: ServeConfig, var: str) -> Optional[str]:
    found = cfg.env.get(var)
    return None if found is None or found.value is None else str(found.value).strip()


def ctx_setting(cfg: ServeConfig, path: str) -> Optional[Setting]:
    return cfg.context.get(path)


def ctx_value(cfg: ServeConfig, path: str) -> Any:
    found = cfg.context.get(path)
    return None if found is None else found.value


def compute_capability(cfg: ServeConfig) -> Optional[Tuple[int, int]]:
    """Return the stated GPU compute capability as (major, minor): 8.0, "8.6", "sm_90", 90, [8, 6]."""
    raw = ctx_value(cfg, "hardware.compute_capability")
    if isinstance(raw, (list, tuple)) and len(raw) == 2:
        return (to_int(raw[0]), to_int(raw[1])) if None not in (to_int(raw[0]), to_int(raw[1])) else None
    number = parse_compute_capability(raw)
    if number is None:
        return None
    major, minor = f"{number:.1f}".split(".")
    return (int(major), int(minor))


def memory_gib(cfg: ServeConfig) -> Optional[float]:
    raw = ctx_value(cfg, "hardware.memory_gib")
    if raw is None or isinstance(raw, bool):
        return None
    try:
        return float(str(raw).strip().lower().rstrip("gib").strip())
    except ValueError:
        return None


def device_name(cfg: ServeConfig) -> Optional[str]:
    """Return the stated GPU name (hardware.name, lower case), e.g. "nvidia a100-sxm4-80gb", or None."""
    raw = ctx_value(cfg, "hardware.name")
    if isinstance(raw, str) and raw.strip():
        return raw.strip().lower()
    return None


def platform(cfg: ServeConfig) -> Optional[str]:
    raw = ctx_value(cfg, "hardware.platform")
    return None if raw is None else str(raw).strip().lower()


def is_cuda_like(cfg: ServeConfig) -> Optional[bool]:
    """Return whether the platform runs vLLM's CUDA paths (vendor CUDA-likes count), None if unstated."""
    name = platform(cfg)
    if name is None:
        return None
    return not any(name.startswith(p) for p in NON_CUDA_PLATFORMS)


def concurrency_levels(cfg: ServeConfig) -> List[int]:
    """Return the workload.concurrency levels (an int or a list), ascending."""
    raw = ctx_value(cfg, "workload.concurrency")
    levels = to_int_list(raw) if not isinstance(raw, dict) else None
    return sorted({n for n in levels or [] if n > 0})


def max_model_len(cfg: ServeConfig) -> Prediction:
    """Return the max_model_len the config states; None when it comes from the model's config.json."""
    found = setting(cfg, "max_model_len")
    number = to_int(found.value) if found is not None else None
    if number is not None and number > 0:
        return Prediction(number, f"max_model_len {number}", fields=("max_model_len",))
    return Prediction(None, "max_model_len comes from the model's config.json", certain=False)


def compilation_value(cfg: ServeConfig, key: str) -> Tuple[Any, Optional[Setting]]:
    """Return (value, setting) of compilation_config sub-key `key`, from whichever form was used.

    Forms: a dict (YAML), a JSON or Python-literal string (`'{"level": 3}'`), an int (`-O 3`,
    the level), or dotted keys (`compilation_config.cudagraph_capture_sizes`, 0.9+). A dotted
    key wins over a whole-dict value for the same sub-key. (None, None) when absent.
    """
    key = key.replace("-", "_")
    for name, found in cfg.args.items():
        dotted = name.lstrip("-").replace("-", "_")
        if dotted in (f"compilation_config.{key}", f"O.{key}"):
            dropped = cfg.ignored.get(name)
            if dropped is not None and dropped[0] == found:
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


def use_v1_env(cfg: ServeConfig) -> Optional[bool]:
    """Return VLLM_USE_V1 as vLLM reads it (`bool(int(...))`), None when unset or unreadable."""
    raw = env_value(cfg, "VLLM_USE_V1")
    if raw is None:
        return None
    try:
        return bool(int(raw))
    except ValueError:
        return None


def attention_backend_env(cfg: ServeConfig) -> Optional[str]:
    raw = env_value(cfg, "VLLM_ATTENTION_BACKEND")
    return raw or None


def num_scheduler_steps(cfg: ServeConfig) -> Optional[int]:
    """Return the explicit --num-scheduler-steps value (a removed key still counts)."""
    found = setting(cfg, "num_scheduler_steps") or unknown_setting(cfg, "num_scheduler_steps")
    return None if found is None else to_int(found.value)


def multistep_setting(cfg: ServeConfig) -> Optional[Setting]:
    """Return the accepted --num-scheduler-steps setting when it asks for multi-step (> 1)."""
    steps = num_scheduler_steps(cfg)
    found = setting(cfg, "num_scheduler_steps")
    return found if found is not None and steps is not None and steps > 1 else None


def v0_multistep_setting(cfg: ServeConfig, facts: Facts) -> Optional[Setting]:
    """Return multistep_setting() where V0's own multi-step checks get to run.

    From 0.8.5 `VLLM_USE_V1=1` makes the V1 oracle refuse multi-step first (PO302).
    """
    if release(facts) >= (0, 8, 5) and use_v1_env(cfg):
        return None
    return multistep_setting(cfg)


def unknown_setting(cfg: ServeConfig, name: str) -> Optional[Setting]:
    """Return a key vLLM's parser will reject (cfg.unknown) whose name is `name`."""
    wanted = set(_names(name))
    for found in cfg.unknown:
        if found.name.lstrip("-") in wanted or found.name.lstrip("-").replace("-", "_") in wanted:
            return found
    return None


def speculative_method(cfg: ServeConfig, facts: Facts) -> Optional[str]:
    """Return the speculative method ("ngram", "eagle", "draft_model", ...) or None without spec decode."""
    if release(facts) < (0, 8, 5):
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


def is_pooling(cfg: ServeConfig) -> bool:
    task = value(cfg, "task")
    runner = value(cfg, "runner")
    return (isinstance(task, str) and task.lower() in POOLING_TASKS) or runner == "pooling"


def enforce_eager(cfg: ServeConfig, facts: Facts) -> Prediction:
    """Return whether the copy runs eagerly: the user's flag, or a fork hardcoding it (facts.hardcoded)."""
    hard = facts.hardcoded.get("enforce_eager") if facts.hardcoded else None
    if hard is not None and str(hard).strip() == "True":
        return Prediction(True, "this vLLM build hardcodes enforce_eager=True in EngineArgs",
                          fields=("enforce_eager",))
    flag = bool_value(cfg, "enforce_eager")
    if flag:
        return Prediction(True, "enforce_eager is set", fields=("enforce_eager",))
    return Prediction(False, "enforce_eager is off", fields=("enforce_eager",) if flag is False else ())


# --------------------------------------------------------------------------- engine


@dataclass(frozen=True)
class Trigger:
    """One `_is_v1_supported_oracle` check that sends the config to V0."""

    feature: str                 # the feature_name vLLM logs: "--num-scheduler-steps"
    fields: Tuple[str, ...]
    at: Optional[Setting]
    recommend_to_remove: bool = False
    certain: bool = True
    experimental: bool = False   # _warn_or_fallback: falls back only when VLLM_USE_V1 is unset

    @property
    def fallback_message(self) -> str:
        """The warning vLLM logs (`_raise_or_fallback`, engine/arg_utils.py 0.8.5-0.11)."""
        text = f"{self.feature} is not supported by the V1 Engine. Falling back to V0. "
        if self.recommend_to_remove:
            text += (f"We recommend to remove {self.feature} from your config in favor of the "
                     "V1 Engine.")
        return text

    @property
    def forced_v1_message(self) -> str:
        return f"VLLM_USE_V1=1 is not supported with {self.feature}."


# EngineArgs._is_v1_supported_oracle's V1_BACKENDS (vllm/engine/arg_utils.py), as first seen in
# 0.8.5, 0.9.2 (== 0.10.0), 0.10.1.1, 0.10.2 and 0.11.0. Any other value falls back to V0.
V1_ORACLE_BACKENDS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    (">=0.8,<0.9", ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1",
                    "TRITON_ATTN_VLLM_V1", "TRITON_MLA", "FLASHMLA", "FLASHINFER",
                    "FLASHINFER_VLLM_V1")),
    (">=0.9,<0.10.1", ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1",
                       "TRITON_ATTN_VLLM_V1", "TRITON_MLA", "CUTLASS_MLA_VLLM_V1", "FLASHMLA",
                       "FLASHINFER", "FLASHINFER_VLLM_V1", "ROCM_AITER_MLA", "TORCH_SDPA_VLLM_V1",
                       "FLEX_ATTENTION")),
    (">=0.10.1,<0.10.2", ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1",
                          "TRITON_ATTN_VLLM_V1", "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA",
                          "FLASHINFER", "FLASHINFER_VLLM_V1", "ROCM_AITER_MLA",
                          "TORCH_SDPA_VLLM_V1", "FLEX_ATTENTION", "TREE_ATTN", "XFORMERS_VLLM_V1")),
    (">=0.10.2,<0.11", ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1",
                        "TRITON_ATTN_VLLM_V1", "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA",
                        "FLASHMLA_VLLM_V1", "FLASH_ATTN_MLA", "FLASHINFER", "FLASHINFER_VLLM_V1",
                        "FLASHINFER_MLA", "ROCM_AITER_MLA", "TORCH_SDPA_VLLM_V1", "FLEX_ATTENTION",
                        "TREE_ATTN", "XFORMERS_VLLM_V1")),
    (">=0.11,<0.12", ("FLASH_ATTN", "PALLAS", "TRITON_ATTN", "TRITON_MLA", "CUTLASS_MLA",
                      "FLASHMLA", "FLASH_ATTN_MLA", "FLASHINFER", "FLASHINFER_MLA",
                      "ROCM_AITER_MLA", "TORCH_SDPA", "FLEX_ATTENTION", "TREE_ATTN", "XFORMERS",
                      "ROCM_ATTN")),
)


def v1_oracle_backends(version: str) -> Optional[Tuple[str, ...]]:
    """Return the V1 oracle's allowed names for `version`, None where there is no oracle list."""
    plain = rel_version(version)
    for spec, names in V1_ORACLE_BACKENDS:
        if SpecifierSet(spec).contains(plain, prereleases=True):
            return names
    return None


def oracle_triggers(cfg: ServeConfig, facts: Facts) -> List[Trigger]:
    """Return the V1-oracle checks this config trips, in the order vLLM runs them (0.8.5-0.11).

    Checks that depend on the model (architecture, sliding window) or on the platform plugin
    are not predicted. A check whose outcome depends on unstated hardware is `certain=False`.
    """
    v = release(facts)
    if not (0, 8, 5) <= v < (0, 12, 0):
        return []
    out: List[Trigger] = []
    cc = compute_capability(cfg)

    def add(feature, name, remove=False, certain=True, experimental=False, fields=None, at=None):
        at = at or setting(cfg, name) or env_setting(cfg, name)
        out.append(Trigger(feature, tuple(fields or (name,)), at, remove, certain, experimental))

    load_format = value(cfg, "load_format")
    fallback_formats = ("tensorizer", "sharded_state") if v < (0, 9) else ("sharded_state",)
    if v < (0, 11, 0) and load_format in fallback_formats:
        add(f"--load_format {load_format}", "load_format")
    if value(cfg, "logits_processor_pattern") not in (None, "", "None"):
        add("--logits-processor-pattern", "logits_processor_pattern")
    if v < (0, 11, 0):
        if value(cfg, "preemption_mode") not in (None, "", "None"):
            add("--preemption-mode", "preemption_mode", remove=True)
        if bool_value(cfg, "disable_async_output_proc"):
            add("--disable-async-output-proc", "disable_async_output_proc", remove=True)
        policy = value(cfg, "scheduling_policy")
        if v < (0, 9) and policy not in (None, "fcfs"):
            add("--scheduling-policy", "scheduling_policy")
        steps = num_scheduler_steps(cfg)
        if v < (0, 10, 1) and steps is not None and steps != 1:
            add("--num-scheduler-steps", "num_scheduler_steps", remove=True)
        delay = value(cfg, "scheduler_delay_factor")
        try:
            delayed = delay is not None and float(delay) != 0.0
        except (TypeError, ValueError):
            delayed = False
        if delayed:
            add("--scheduler-delay-factor", "scheduler_delay_factor", remove=True)
        guided = value(cfg, "guided_decoding_backend")
        if v < (0, 10, 1) and isinstance(guided, str):
            allowed = ("auto", "xgrammar", "guidance") + (("outlines",) if v >= (0, 10) else ())
            name = guided.split(":")[0] if v < (0, 9) else guided
            if name not in allowed:
                add(f"--guided-decoding-backend={guided}", "guided_decoding_backend")
        if v < (0, 10, 2) and cc is not None and cc[0] < 8 and is_cuda_like(cfg) is not False:
            add("Compute Capability < 8.0", "hardware.compute_capability",
                at=ctx_setting(cfg, "hardware.compute_capability"))
        kv = value(cfg, "kv_cache_dtype")
        if isinstance(kv, str) and kv != "auto":
            backend = attention_backend_env(cfg)
            will_use_fa = backend is None or backend == "FLASH_ATTN_VLLM_V1"
            fa3_fp8 = kv.startswith("fp8") and will_use_fa and facts.has_flash_attn is not False
            if cc is None:
                supported: Optional[bool] = None if fa3_fp8 or v >= (0, 10) else False
            else:
                supported = (fa3_fp8 and cc[0] == 9) or (v >= (0, 10) and cc[0] == 10)
            if platform(cfg) == "rocm" and v >= (0, 9):
                supported = True
            if supported is not True:
                add("--kv-cache-dtype", "kv_cache_dtype", certain=supported is False)
        if v < (0, 10) and bool_value(cfg, "enable_prompt_adapter"):
            add("--enable-prompt-adapter", "enable_prompt_adapter")
        if v >= (0, 9) and bool_value(cfg, "enable_prompt_embeds"):
            add("--enable-prompt-embeds", "enable_prompt_embeds")
        if v < (0, 9):
            dtype = value(cfg, "dtype")
            if isinstance(dtype, str) and dtype.lower() in ("float", "float32"):
                add("--dtype torch.float32", "dtype")
            if value(cfg, "quantization") == "gguf":
                add("--quantization gguf", "quantization")
            task = value(cfg, "task")
            if isinstance(task, str) and task not in ("auto", "generate"):
                add(f"--task {task}", "task")
    if (to_int(value(cfg, "max_num_partial_prefills")) or 1) != 1 or \
            (to_int(value(cfg, "max_long_partial_prefills")) or 1) != 1:
        add("Concurrent Partial Prefill", "max_num_partial_prefills",
            fields=("max_num_partial_prefills", "max_long_partial_prefills"))
    if v < (0, 10, 2) and (value(cfg, "otlp_traces_endpoint") or value(cfg, "collect_detailed_traces")):
        add("--otlp-traces-endpoint", "otlp_traces_endpoint")
    method = speculative_method(cfg, facts)
    experimental: Optional[str] = None
    if method is not None and v < (0, 10):
        if v < (0, 9):
            ok = {"ngram": "ngram", "eagle": "Eagle", "eagle3": "Eagle"}
        else:
            ok = {m: "" for m in ("ngram", "medusa", "eagle", "eagle3", "deepseek_mtp")}
        if method not in ok:
            add("Speculative Decoding", "speculative_config")
        elif ok[method]:
            experimental = ok[method]
    backend = attention_backend_env(cfg)
    if backend is not None and backend not in (v1_oracle_backends(facts.version) or ()):
        add(f"VLLM_ATTENTION_BACKEND={backend}", "VLLM_ATTENTION_BACKEND", remove=True)
    pp = to_int(value(cfg, "pipeline_parallel_size")) or 1
    executor = value(cfg, "distributed_executor_backend")
    if pp > 1 and v < (0, 9) and executor != "ray":
        add("Pipeline Parallelism without Ray distributed executor", "pipeline_parallel_size")
    elif pp > 1 and (0, 9) <= v < (0, 10, 1) and executor not in (None, "ray", "mp", "external_launcher"):
        add("Pipeline Parallelism without Ray distributed executor or multiprocessing executor "
            "or external launcher", "pipeline_parallel_size")
    if experimental:
        add(experimental, "speculative_config", experimental=True)
    return out


def engine(cfg: ServeConfig, facts: Facts) -> Prediction:
    """Return which engine runs the config ("V0" or "V1"), why, and any error vLLM raises choosing it."""
    v = release(facts)
    ver = facts.version
    env = use_v1_env(cfg)
    env_fields = ("VLLM_USE_V1",) if env is not None else ()
    if v < (0, 7, 0):
        return Prediction(V0, f"vLLM {ver} has only the V0 engine")
    if v < (0, 8, 0):
        if env:
            return Prediction(V1, f"VLLM_USE_V1=1 opts in to the V1 engine on vLLM {ver}", fields=env_fields)
        return Prediction(V0, f"V0 is the default engine of vLLM {ver}", fields=env_fields)
    if v >= (0, 12, 0):
        return Prediction(V1, f"vLLM {ver} has only the V1 engine")
    if env is False:
        if v >= (0, 11, 0):
            return Prediction(V0, f"VLLM_USE_V1=0 asks for V0, which vLLM {ver} no longer has",
                              fields=env_fields,
                              error=NO_V0_ERROR)
        return Prediction(V0, f"VLLM_USE_V1=0 selects the V0 engine on vLLM {ver}", fields=env_fields)
    triggers = oracle_triggers(cfg, facts)
    possible: List[Trigger] = []
    for trigger in triggers:
        if trigger.experimental and env:
            continue
        if not trigger.certain:
            possible.append(trigger)
            continue
        if env:
            return Prediction(V1, f"VLLM_USE_V1=1 forces V1, which does not support {trigger.feature}",
                              fields=trigger.fields + env_fields, error=trigger.forced_v1_message)
        reason = f"{trigger.feature} is not supported by the V1 engine, so vLLM {ver} falls back to V0"
        if v >= (0, 11, 0):
            return Prediction(V0, reason + ", which it no longer has", fields=trigger.fields,
                              error=NO_V0_ERROR)
        return Prediction(V0, reason, fields=trigger.fields)
    if possible:
        first = possible[0]
        return Prediction(V1, f"V1 is the default engine of vLLM {ver}, unless the GPU does not support "
                          f"{first.feature} (then it falls back to V0)", certain=False,
                          alternatives=(V0,), fields=first.fields)
    return Prediction(V1, f"V1 is the default engine of vLLM {ver}", fields=env_fields)


# --------------------------------------------------------------------------- hardware tier


def hardware_tier(cfg: ServeConfig, facts: Facts) -> Prediction:
    """Return the V1 default-batch tier: "large" (>= 70 GiB, not A100), "small", "huge" (>= 160 GiB, 0.30+).

    Unknown hardware gives "small" (what vLLM uses when it cannot query the device) with the
    other tier as an alternative.
    """
    v = release(facts)
    mem = memory_gib(cfg)
    name = device_name(cfg)
    cc = compute_capability(cfg)
    fields = tuple(p for p in ("hardware.memory_gib", "hardware.name", "hardware.compute_capability")
                   if ctx_setting(cfg, p) is not None)
    if v < (0, 8, 0):  # 0.7.3 V1 keys on the device name (platforms get_device_name)
        if name is not None:
            big = "h100" in name or "h200" in name
            what = "an H100/H200" if big else "not an H100/H200"
            return Prediction(LARGE if big else SMALL, f"the GPU is {what}", fields=fields)
        if cc is not None and cc[0] != 9:
            return Prediction(SMALL, "the GPU is not an H100/H200", fields=fields)
        if mem is not None and mem < 70:
            return Prediction(SMALL, f"the GPU has {mem:g} GiB, so it is not an H100/H200", fields=fields)
        return Prediction(SMALL, "the hardware is not stated (the larger defaults need an H100/H200)",
                          certain=False, alternatives=(LARGE,), fields=fields)
    if mem is None:
        return Prediction(SMALL, "the GPU memory is not stated (hardware.memory_gib)", certain=False,
                          alternatives=(LARGE,), fields=fields)
    if v >= (0, 30, 0) and mem >= 160:
        return Prediction(HUGE, f"the GPU has {mem:g} GiB, at least 160", fields=fields)
    if mem < 70:
        return Prediction(SMALL, f"the GPU has {mem:g} GiB, below 70", fields=fields)
    if v < (0, 9, 0):
        return Prediction(LARGE, f"the GPU has {mem:g} GiB, at least 70", fields=fields)
    if v >= (0, 30, 0) and cc == (12, 1):
        return Prediction(SMALL, "GB10 (compute capability 12.1) stays in the small tier", fields=fields)
    if name is not None:
        if "a100" in name:
            return Prediction(SMALL, f"the GPU has {mem:g} GiB but is an A100, which keeps the small "
                              "defaults", fields=fields)
        return Prediction(LARGE, f"the GPU has {mem:g} GiB, at least 70, and is not an A100", fields=fields)
    if cc is not None and cc != (8, 0):
        return Prediction(LARGE, f"the GPU has {mem:g} GiB, at least 70, and is not an A100", fields=fields)
    return Prediction(SMALL, f"the GPU has {mem:g} GiB and may be an A100, which keeps the small defaults",
                      certain=False, alternatives=(LARGE,), fields=fields)


_TIER_TOKENS = {SMALL: 2048, LARGE: 8192, HUGE: 16384}   # OPENAI_API_SERVER values
_TIER_SEQS = {SMALL: 256, LARGE: 1024, HUGE: 1024}


def _literal_default(facts: Facts, name: str) -> Any:
    """Return a fork's literal EngineArgs default for `name` (None means "filled in at launch")."""
    raw = facts.field_defaults.get(name) if facts.field_defaults else None
    return raw


# --------------------------------------------------------------------------- scheduler defaults


def chunked_prefill(cfg: ServeConfig, facts: Facts, eng: Optional[Prediction] = None) -> Prediction:
    """Return whether chunked prefill ends up on, by version, engine and max_model_len."""
    v = release(facts)
    ver = facts.version
    eng = eng or engine(cfg, facts)
    explicit = bool_value(cfg, "enable_chunked_prefill")
    where = ("enable_chunked_prefill",) if explicit is not None else ()
    if eng.value == V1 and v < (0, 12, 0):
        if is_pooling(cfg):
            value_ = explicit if explicit is not None else False
            return Prediction(value_, "pooling models choose chunked prefill by their pooling type",
                              certain=explicit is not None, alternatives=(not value_,), fields=where)
        note = ", ignoring enable_chunked_prefill false" if explicit is False else ""
        return Prediction(True, f"the V1 engine of vLLM {ver} always turns chunked prefill on{note}",
                          fields=where)
    if v >= (0, 12, 0):
        if explicit is not None:
            return Prediction(explicit, f"enable_chunked_prefill {str(explicit).lower()} is respected",
                              fields=where)
        return Prediction(True, f"vLLM {ver} turns chunked prefill on for models that support it",
                          certain=not is_pooling(cfg), alternatives=() if not is_pooling(cfg) else (False,))
    if explicit is not None:
        return Prediction(explicit, f"enable_chunked_prefill {str(explicit).lower()} is respected on V0",
                          fields=where)
    literal = _literal_default(facts, "enable_chunked_prefill")
    if isinstance(literal, bool):
        return Prediction(literal, f"this vLLM build defaults enable_chunked_prefill to {literal}",
                          fields=("enable_chunked_prefill",))
    mml = max_model_len(cfg)
    if mml.value is None:
        return Prediction(False, "V0 turns chunked prefill on only when max_model_len > 32768, and "
                          "max_model_len is not stated", certain=False, alternatives=(True,))
    if mml.value <= LONG_CONTEXT:
        return Prediction(False, f"V0 leaves chunked prefill off for max_model_len {mml.value}, which is not "
                          "above 32768",
                          fields=mml.fields)
    blockers = []
    cuda = is_cuda_like(cfg)
    if cuda is False:
        blockers.append(f"the platform is {platform(cfg)}")
    if platform(cfg) == "rocm" and v >= (0, 7, 0):
        blockers.append("the platform is ROCm")
    if speculative_method(cfg, facts) is not None:
        blockers.append("speculative decoding is on")
    if bool_value(cfg, "enable_lora"):
        blockers.append("LoRA is on")
    if bool_value(cfg, "enable_prompt_adapter"):
        blockers.append("prompt adapters are on")
    if v >= (0, 7, 0) and is_pooling(cfg):
        blockers.append("the model is a pooling model")
    if blockers:
        return Prediction(False, f"V0 would turn chunked prefill on for max_model_len {mml.value} > 32768, "
                          f"but not when {blockers[0]}", fields=mml.fields)
    return Prediction(True, f"V0 turns chunked prefill on automatically for max_model_len {mml.value} > "
                      "32768, unless the model is multimodal, uses a sliding window or MLA",
                      certain=False, alternatives=(False,), fields=mml.fields)


def _v0_batched_tokens(v: Tuple[int, int, int], chunked: bool, mml: Optional[int], steps: int,
                       pooling: bool) -> Tuple[Optional[int], str]:
    small = 512 if v < (0, 7, 0) else DEFAULT_BATCHED_TOKENS_V0
    if chunked and steps <= 1:
        out: Optional[int] = small
        why = f"V0 with chunked prefill defaults to {small}"
    else:
        out = None if mml is None else max(mml, 2048)
        why = ("V0 multi-step with chunked prefill defaults to max(max_model_len, 2048)" if chunked
               else "V0 without chunked prefill defaults to max(max_model_len, 2048)")
    if pooling and out is not None:
        out = max(out, POOLING_BATCHED_TOKENS)
    return out, why


def max_num_batched_tokens(cfg: ServeConfig, facts: Facts, eng: Optional[Prediction] = None,
                           chunked: Optional[Prediction] = None) -> Prediction:
    """Return the token budget per step: the user's value or the version/engine/tier default.

    The value is None when it depends on a max_model_len the config does not state.
    """
    v = release(facts)
    ver = facts.version
    found = setting(cfg, "max_num_batched_tokens")
    explicit = to_int(found.value) if found is not None else None
    if explicit is not None:
        return Prediction(explicit, f"max_num_batched_tokens {explicit} is set",
                          fields=("max_num_batched_tokens",))
    literal = to_int(_literal_default(facts, "max_num_batched_tokens"))
    if literal is not None:
        return Prediction(literal, f"this vLLM build defaults max_num_batched_tokens to {literal}",
                          fields=("max_num_batched_tokens",))
    eng = eng or engine(cfg, facts)
    chunked = chunked or chunked_prefill(cfg, facts, eng)
    mml = max_model_len(cfg).value
    if eng.value == V0:
        steps = num_scheduler_steps(cfg) or 1
        values = []
        for on in chunked.candidates:
            values.append(_v0_batched_tokens(v, on, mml, steps, is_pooling(cfg)))
        (first, why), rest = values[0], values[1:]
        alternatives = tuple(val for val, _ in rest if val != first)
        return Prediction(first, why + f" ({chunked.reason})", certain=chunked.certain and first is not None,
                          alternatives=alternatives, fields=chunked.fields)
    tier = hardware_tier(cfg, facts)

    def for_tier(name: str) -> Optional[int]:
        budget = _TIER_TOKENS[name]
        if v >= (0, 12, 0):
            if chunked.value is False:
                budget = max(mml, budget) if mml is not None else None
            if budget is not None and mml is not None:
                seqs = max_num_seqs(cfg, facts, eng, _tier=name, _budget=budget).value
                if seqs is not None:
                    budget = min(seqs * mml, budget)
        return budget

    first = for_tier(tier.value)
    alternatives = tuple(dict.fromkeys(b for b in (for_tier(t) for t in tier.alternatives) if b != first))
    return Prediction(first, f"the V1 engine of vLLM {ver} defaults max_num_batched_tokens to "
                      f"{first} for `vllm serve` when {tier.reason}", certain=tier.certain,
                      alternatives=alternatives, fields=tier.fields)


def max_num_seqs(cfg: ServeConfig, facts: Facts, eng: Optional[Prediction] = None, *,
                 _tier: Optional[str] = None, _budget: Optional[int] = None) -> Prediction:
    """Return the largest number of sequences per step: the user's value or the default."""
    v = release(facts)
    ver = facts.version
    found = setting(cfg, "max_num_seqs")
    explicit = to_int(found.value) if found is not None else None
    if explicit is not None:
        return Prediction(explicit, f"max_num_seqs {explicit} is set", fields=("max_num_seqs",))
    literal = to_int(_literal_default(facts, "max_num_seqs"))
    if literal is not None:
        return Prediction(literal, f"vLLM {ver} defaults max_num_seqs to {literal}")
    eng = eng or engine(cfg, facts)
    if eng.value == V0:
        return Prediction(256, "the V0 engine defaults max_num_seqs to 256")
    if v < (0, 8, 0):
        return Prediction(1024, f"the V1 engine of vLLM {ver} defaults max_num_seqs to 1024")
    tier = hardware_tier(cfg, facts)

    def for_tier(name: str) -> int:
        seqs = _TIER_SEQS[name]
        if v >= (0, 10, 1):  # min(default, max_num_batched_tokens) for an unset max_num_seqs
            budget = _budget
            if budget is None:
                found_budget = setting(cfg, "max_num_batched_tokens")
                budget = to_int(found_budget.value) if found_budget is not None else _TIER_TOKENS[name]
            if budget:
                seqs = min(seqs, budget)
        return seqs

    if _tier is not None:
        return Prediction(for_tier(_tier), "")
    first = for_tier(tier.value)
    alternatives = tuple(dict.fromkeys(s for s in (for_tier(t) for t in tier.alternatives) if s != first))
    return Prediction(first, f"the V1 engine of vLLM {ver} defaults max_num_seqs to {first} for `vllm serve` "
                      f"when {tier.reason}",
                      certain=tier.certain, alternatives=alternatives, fields=tier.fields)


# --------------------------------------------------------------------------- attention backend


def backend_label(name: Optional[str], facts: Facts) -> Optional[str]:
    """Return the backend's get_name() spelling in this version (0.6.3: "xformers", "flash-attn")."""
    if name is None:
        return None
    if release(facts) < (0, 7, 0):
        return GET_NAME_063.get(name, name.lower())
    return name


def multistep_backends(facts: Facts, chunked: bool) -> Tuple[str, ...]:
    """Return MultiStepModelRunner's allowed backend list (get_name() spellings) for this version."""
    shipped = facts.multistep_chunked_backends if chunked else facts.multistep_backends
    if shipped:
        return tuple(shipped)
    if release(facts) < (0, 7, 0):
        return MULTISTEP_CHUNKED_BACKENDS_063 if chunked else MULTISTEP_BACKENDS_063
    return MULTISTEP_CHUNKED_BACKENDS if chunked else MULTISTEP_BACKENDS


def v0_attention_backend(cfg: ServeConfig, facts: Facts) -> Prediction:
    """Return the attention backend V0 selects on CUDA (enum names: FLASH_ATTN, XFORMERS, ...).

    Follows `which_attn_to_use` (0.6.3) / `CudaPlatform.get_attn_backend_cls` (0.7.3-0.10.2):
    FLASH_ATTN unless a downgrade to XFORMERS applies. Model facts (head size, sliding window)
    are not known, so FLASH_ATTN is never more than likely without a stated GPU.
    """
    v = release(facts)
    explicit = attention_backend_env(cfg)
    env_field = ("VLLM_ATTENTION_BACKEND",) if explicit is not None else ()
    if platform(cfg) == "rocm":
        if explicit in (None, "FLASH_ATTN", "ROCM_FLASH") or v < (0, 7, 0):
            return Prediction("ROCM_FLASH", "V0 on ROCm uses the ROCm flash-attention backend",
                              fields=("hardware.platform",))
    if explicit is not None:
        if explicit == "XFORMERS":
            return Prediction("XFORMERS", "VLLM_ATTENTION_BACKEND=XFORMERS is set", fields=env_field)
        if explicit == "FLASHINFER":
            return Prediction("FLASHINFER", "VLLM_ATTENTION_BACKEND=FLASHINFER is set", fields=env_field)
        if explicit != "FLASH_ATTN":
            if v < (0, 7, 0):
                return Prediction(explicit, f"VLLM_ATTENTION_BACKEND={explicit} is set", fields=env_field)
            return Prediction(None, f"VLLM_ATTENTION_BACKEND={explicit} is not a V0 CUDA backend",
                              certain=False, fields=env_field)
    fields = list(env_field)
    cc = compute_capability(cfg)
    reasons: List[Tuple[str, Tuple[str, ...]]] = []
    if cc is not None and cc < (8, 0):
        reasons.append((f"compute capability {cc[0]}.{cc[1]} is below 8.0 (Volta/Turing)",
                        ("hardware.compute_capability",)))
    dtype = value(cfg, "dtype")
    if isinstance(dtype, str) and dtype.lower() in ("float", "float32"):
        reasons.append((f"dtype {dtype!r} is not float16/bfloat16", ("dtype",)))
    kv = value(cfg, "kv_cache_dtype")
    fp8_possible = False
    if isinstance(kv, str) and kv.startswith("fp8"):
        if v < (0, 8, 0):
            reasons.append((f"kv_cache_dtype {kv!r} (flash-attention has no fp8 KV cache here)",
                            ("kv_cache_dtype",)))
        elif cc is not None and cc[0] != 9:
            reasons.append((f"kv_cache_dtype {kv!r} (fp8 flash-attention needs FA3 on Hopper)",
                            ("kv_cache_dtype",)))
        elif cc is None:
            fp8_possible = True
    block = to_int(value(cfg, "block_size"))
    if block is not None and block % 16 != 0:
        reasons.append((f"block_size {block} is not a multiple of 16", ("block_size",)))
    if not reasons and facts.has_flash_attn is False:
        reasons.append(("this vLLM build has no vllm_flash_attn extension", ()))
    if reasons:
        why, why_fields = reasons[0]
        return Prediction("XFORMERS", f"V0 falls back to XFORMERS because {why}",
                          fields=tuple(fields) + why_fields)
    if fp8_possible:
        return Prediction("XFORMERS", f"V0 falls back to XFORMERS for kv_cache_dtype {kv!r} unless the GPU "
                          "is a Hopper with FA3", certain=False, alternatives=("FLASH_ATTN",),
                          fields=("kv_cache_dtype",))
    certain = cc is not None and facts.has_flash_attn is True
    return Prediction("FLASH_ATTN", "V0 picks FLASH_ATTN" + ("" if cc is not None else
                      " (XFORMERS on Volta/Turing GPUs; the compute capability is not stated)"),
                      certain=certain, alternatives=() if cc is not None else ("XFORMERS",),
                      fields=tuple(fields))


# --------------------------------------------------------------------------- CUDA graph capture sizes


# No batch reaches this many sequences; capping keeps a typo like 400000000 from building a
# list of 50 million sizes.
CAPTURE_CEILING = 1 << 16


def _pattern(upto: int) -> List[int]:
    """[1, 2, 4] + range(8, upto + 1, 8): the `--cuda-graph-sizes N` pattern (0.9.2-0.11)."""
    upto = min(upto, CAPTURE_CEILING)
    return [i for i in (1, 2, 4) if i <= upto] + list(range(8, upto + 1, 8))


def _pattern_012(top: int) -> List[int]:
    top = min(top, CAPTURE_CEILING)
    sizes = [i for i in (1, 2, 4) if i <= top]
    if top >= 8:
        sizes += list(range(8, min(top + 1, 256), 8))
    if top >= 256:
        sizes += list(range(256, top + 1, 16))
    return sizes


def _no_graphs(reason: str, fields: Sequence[str]) -> Prediction:
    return Prediction((), reason, fields=tuple(fields))


def capture_sizes(cfg: ServeConfig, facts: Facts) -> Prediction:
    """Return the CUDA graph batch sizes the version captures (ascending); () when none are.

    Precedence: enforce_eager (or a fork hardcoding it) -> nothing; the user's explicit list
    (compilation_config.cudagraph_capture_sizes, and by version cudagraph_capture_sizes or
    cuda_graph_sizes); else the fork's default (facts.capture_sizes_default); else the version's
    derivation from max_num_seqs / max_num_batched_tokens (reference section 4).
    """
    v = release(facts)
    ver = facts.version
    eager = enforce_eager(cfg, facts)
    if eager.value:
        return _no_graphs(f"{eager.reason}, so vLLM captures no CUDA graphs", eager.fields)
    eng = engine(cfg, facts)
    seqs = max_num_seqs(cfg, facts, eng)
    budget = max_num_batched_tokens(cfg, facts, eng)
    v1 = eng.value == V1

    level, level_at = compilation_value(cfg, "level")
    if v1 and v < (0, 12, 0) and level_at is not None and to_int(level) not in (None, 3):
        return _no_graphs(f"compilation_config level {level} is not PIECEWISE (3), so V1 captures no "
                          "CUDA graphs", ("compilation_config.level",))
    use_graph, use_at = compilation_value(cfg, "use_cudagraph")
    if v1 and v < (0, 12, 0) and use_at is not None and to_bool(use_graph) is False:
        return _no_graphs("compilation_config use_cudagraph is false", ("compilation_config.use_cudagraph",))
    mode, mode_at = compilation_value(cfg, "cudagraph_mode")
    if mode_at is not None and str(mode).upper() in ("NONE", "0"):
        return _no_graphs("compilation_config cudagraph_mode is NONE", ("compilation_config.cudagraph_mode",))

    explicit, explicit_at = compilation_value(cfg, "cudagraph_capture_sizes")
    explicit_list = to_int_list(explicit) if explicit_at is not None else None
    fields: Tuple[str, ...] = (("compilation_config.cudagraph_capture_sizes",) if explicit_at is not None
                               else ())
    why = "compilation_config.cudagraph_capture_sizes is set"
    if explicit_list is None and v >= (0, 12, 0):
        for name in ("cudagraph_capture_sizes", "cuda_graph_sizes"):
            listed = int_list(cfg, name)
            if listed is not None:
                explicit_list, fields = listed, (name,)
                why = f"{name} is copied verbatim into the capture list on vLLM {ver}"
                break
    top_budget = budget.value if isinstance(budget.value, int) else None

    if v >= (0, 12, 0):
        if explicit_list is None and facts.capture_sizes_default is not None:
            explicit_list = list(facts.capture_sizes_default)
            why, fields = "this vLLM build sets a default capture list", ()
        if explicit_list is not None:
            def kept(tokens: Any) -> Tuple[int, ...]:
                return tuple(sorted({s for s in explicit_list if not isinstance(tokens, int) or s <= tokens}))
            first = kept(top_budget)
            alternatives = tuple(dict.fromkeys(kept(b) for b in budget.alternatives if kept(b) != first))
            dropped = (" (sizes above max_num_batched_tokens dropped)"
                       if len(first) < len(set(explicit_list)) else "")
            return Prediction(first, why + dropped, certain=not alternatives, alternatives=alternatives,
                              fields=fields)
        top_set = to_int(compilation_value(cfg, "max_cudagraph_capture_size")[0])
        if top_set is None:
            top_set = int_value(cfg, "max_cudagraph_capture_size")
        spec = 0
        if v >= (0, 15, 0):
            raw = value(cfg, "speculative_config")
            raw = parse_literal(raw) if isinstance(raw, str) else raw
            if isinstance(raw, dict):
                spec = to_int(raw.get("num_speculative_tokens")) or 0
        default_top = 512
        cc = compute_capability(cfg)
        if v >= (0, 30, 0) and cc is not None and cc[0] == 10:
            default_top = 1024

        def for_values(seq_count: Optional[int], tokens: Optional[int]) -> Tuple[int, ...]:
            top = top_set if top_set is not None else min((seq_count or 256) * (1 + spec) * 2, default_top)
            if tokens is not None:
                top = min(top, tokens)
            sizes = _pattern_012(top)
            if v >= (0, 25, 0) and tokens is not None and tokens <= top and tokens not in sizes:
                sizes.append(tokens)
            return tuple(sorted(set(sizes)))

        first = for_values(seqs.value, top_budget)
        others = tuple(dict.fromkeys(
            for_values(s, b) for s in seqs.candidates for b in budget.candidates
            if isinstance(b, int) or b is None)) if not (seqs.certain and budget.certain) else ()
        alternatives = tuple(o for o in others if o != first)
        source = (f"max_cudagraph_capture_size {top_set}" if top_set is not None
                  else f"min(2 x max_num_seqs {seqs.value}, {default_top}, max_num_batched_tokens "
                       f"{top_budget})")
        return Prediction(first, f"vLLM {ver} captures sizes up to {source}", certain=not alternatives,
                          alternatives=alternatives, fields=("max_num_seqs",) if seqs.fields else ())

    if explicit_list is None and facts.capture_sizes_default is not None:
        return Prediction(tuple(sorted(set(facts.capture_sizes_default))),
                          f"this vLLM build ({ver}) sets a default capture list and the config does not "
                          "override it", fields=())
    if explicit_list is not None and v >= (0, 7, 0):
        return Prediction(tuple(sorted(set(explicit_list))), why, fields=fields)

    if not v1:
        max_graph = to_int(value(cfg, "max_seq_len_to_capture"))
        note = f"; decodes longer than {max_graph} tokens run eagerly" if max_graph is not None else ""

        def v0_list(seq_count: int) -> Tuple[int, ...]:
            larger = [x for x in V0_CAPTURE_CANDIDATES if x >= seq_count]
            top = larger[0] if larger else V0_CAPTURE_CANDIDATES[-1]
            return tuple(x for x in V0_CAPTURE_CANDIDATES if x <= top)

        first = v0_list(seqs.value)
        alternatives = tuple(dict.fromkeys(v0_list(s) for s in seqs.alternatives if v0_list(s) != first))
        return Prediction(first, f"V0 captures [1, 2, 4, 8, ...] up to the first size >= max_num_seqs "
                          f"{seqs.value}{note}", certain=seqs.certain, alternatives=alternatives,
                          fields=seqs.fields)

    def filtered(sizes: List[int], tokens: Any) -> Tuple[int, ...]:
        return tuple(sorted(s for s in set(sizes) if not isinstance(tokens, int) or s <= tokens))

    if v < (0, 9, 0):
        base = [1, 2, 4] + list(range(8, 513, 8))
        first = filtered(base, top_budget) if v >= (0, 8, 0) else tuple(base)
        alternatives = tuple(dict.fromkeys(filtered(base, b) for b in budget.alternatives
                                           if filtered(base, b) != first)) if v >= (0, 8, 0) else ()
        return Prediction(first, f"the V1 engine of vLLM {ver} captures [1, 2, 4, 8, ..., 512]"
                          + (" up to max_num_batched_tokens" if v >= (0, 8, 0) else ""),
                          certain=not alternatives, alternatives=alternatives)
    graph_sizes = int_list(cfg, "cuda_graph_sizes")
    if graph_sizes is None:
        graph_sizes = to_int_list(_literal_default(facts, "cuda_graph_sizes"))
        if graph_sizes is None:
            graph_sizes = [512] if v < (0, 10, 0) else []
        from_user = False
    else:
        from_user = True

    def v1_list(seq_count: Optional[int], tokens: Any) -> Tuple[int, ...]:
        wanted = list(graph_sizes)
        if not wanted:
            wanted = [min((seq_count or 256) * 2, 512)]
        sizes = _pattern(wanted[0]) if len(wanted) == 1 else sorted(wanted)
        return filtered(sizes, tokens)

    first = v1_list(seqs.value, top_budget)
    others = [v1_list(s, b) for s in seqs.candidates for b in budget.candidates]
    alternatives = tuple(dict.fromkeys(o for o in others if o != first))
    if from_user:
        how = (f"cuda_graph_sizes {graph_sizes} means [1, 2, 4, 8, ..., {graph_sizes[0]}]"
               if len(graph_sizes) == 1 else f"cuda_graph_sizes {graph_sizes} is used as the list")
    elif not graph_sizes:
        how = f"vLLM {ver} captures [1, 2, 4, 8, ...] up to min(2 x max_num_seqs {seqs.value}, 512)"
    else:
        how = f"vLLM {ver} captures [1, 2, 4, 8, ..., {graph_sizes[0]}]"
    return Prediction(first, how + ", filtered to max_num_batched_tokens", certain=not alternatives,
                      alternatives=alternatives, fields=("cuda_graph_sizes",) if from_user else ())



# --------------------------------------------------------------------------- message text


def shown(found: Setting) -> str:
    """Return a setting's value for a message: the YAML text as written, else the read value."""
    if found.source != "cli" and found.raw is not None:
        return found.raw
    raw = found.value
    if isinstance(raw, bool):
        return str(raw).lower()
    if isinstance(raw, (list, tuple)):
        return "[" + ", ".join(str(x) for x in raw) + "]"
    return str(raw)


def as_token(found: Setting, option: str) -> str:
    """Return the argv text vLLM's parser sees for a setting: "--k", "--k 4", "--k 1 2 4"."""
    raw = found.value
    if raw is True or raw is None or raw == "":
        return option
    if isinstance(raw, (list, tuple)):
        return option + " " + " ".join(str(x) for x in raw)
    return f"{option} {raw}"


def and_list(items: Sequence[Any]) -> str:
    """Return "4", "4 and 8", "4, 8 and 16"."""
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def sizes_text(sizes: Sequence[int]) -> str:
    """Return a capture list for a message: in full when short, else "[1, 2, 4, 8, ..., 512]"."""
    sizes = list(sizes)
    if len(sizes) <= 8:
        return "[" + ", ".join(str(s) for s in sizes) + "]"
    return "[" + ", ".join(str(s) for s in sizes[:4]) + f", ..., {sizes[-1]}]"


def suggested_sizes(top: int) -> List[int]:
    """Return a short capture list covering batches up to `top`: powers of two, [1, 2, 4, ..., >= top].

    Batches pad up to the next captured size, so powers of two keep the fix readable at the
    cost of some padding; a user who wants less padding can list more sizes.
    """
    sizes = [1]
    while sizes[-1] < top:
        sizes.append(sizes[-1] * 2)
    return sizes


def capture_fix(facts: Facts, top: int) -> str:
    """Return how to make this version capture batch sizes up to `top`."""
    v = release(facts)
    sizes = suggested_sizes(top)
    listed = "[" + ", ".join(str(s) for s in sizes) + "]"
    if v < (0, 7, 0):
        return ("vLLM 0.6.3 has no flag for the capture list (it follows max_num_seqs); restore the "
                "build's capture sizes with a patch, or upgrade")
    if v < (0, 12, 0):
        return (f"set compilation-config: '{{\"cudagraph_capture_sizes\": {listed}}}' (a JSON string "
                "in YAML) so batches up to " + str(sizes[-1]) + " are captured")
    return f"set cudagraph-capture-sizes: {listed} (or max-cudagraph-capture-size: {sizes[-1]})"
