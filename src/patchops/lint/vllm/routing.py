"""Predict which engine runs a config (V0 or V1) and what the V1 oracle says about it.

Sources: `engine/arg_utils.py` `_is_v1_supported_oracle` (0.8.5-0.11) and
`_check_feature_supported` (0.12+), `envs.py` (VLLM_USE_V1), `entrypoints/openai/api_server.py`
(0.11 asserts V1). Which checks a copy has comes from its facts (`Facts.v1_oracle`); the
conditions are encoded here, by release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.vllm.inputs import (attention_backend_env, bool_value, compute_capability, ctx_setting,
                                       env_setting, is_cuda_like, num_scheduler_steps, platform, setting,
                                       speculative_method, to_int, use_v1_env, value)
from patchops.lint.vllm import architectures
from patchops.lint.vllm.prediction import Prediction
from patchops.lint.vllm.releases import (ORACLE_BACKENDS_0_9, ORACLE_BACKENDS_0_10_1, ORACLE_BACKENDS_0_10_2,
                                         ORACLE_BACKENDS_0_11, ORACLE_CC_CHECK_GONE, ORACLE_CPU_SLIDING_WINDOW,
                                         ORACLE_GUIDED_EXACT, ORACLE_KV_BY_PLATFORM, ORACLE_MODEL_CHECKS_GONE,
                                         ORACLE_MULTISTEP_GONE, ORACLE_OUTLINES_OK, ORACLE_PLATFORM_DEFAULT_V1,
                                         ORACLE_POLICY_OK, ORACLE_PP_MP_OK, ORACLE_PROMPT_ADAPTER_GONE,
                                         ORACLE_PROMPT_EMBEDS, ORACLE_ROCM_KV_OK, ORACLE_SPEC_CHECK_GONE,
                                         ORACLE_SPEC_METHODS, ORACLE_TENSORIZER_OK, V0_REMOVED, V1_CONFIG_WITHOUT_V0,
                                         V1_DEFAULT, V1_ENGINE, V1_ONLY, V1_ORACLE, Version, release)

MULTISTEP_OPTION = "--num-scheduler-steps"
V0_COST = ("the older, slower V0 engine runs instead: no V1 scheduler (chunked prefill and prefix "
           "caching off by default, max_num_seqs 256), no torch.compile")
EXECUTOR_BACKEND = "distributed_executor_backend"

V0 = "V0"
V1 = "V1"
MODEL_REMEDY = "serve a model whose architecture the V1 engine runs"
# 0.11.0 entrypoints/openai/api_server.py, after the oracle chose V0.
NO_V0_ERROR = "AssertionError (assert envs.VLLM_USE_V1 in entrypoints/openai/api_server.py)"


@dataclass(frozen=True)
class Trigger:
    """One `_is_v1_supported_oracle` check that sends the config to V0."""

    feature: str                 # the feature_name vLLM logs: "--num-scheduler-steps"
    fields: Tuple[str, ...]
    at: Optional[Setting]
    recommend_to_remove: bool = False
    certain: bool = True
    experimental: bool = False   # _warn_or_fallback: falls back only when VLLM_USE_V1 is unset
    about: Optional[str] = None  # what the feature is when it comes from the model or platform, not a setting
    remedy: Optional[str] = None  # the fix when removing a setting is not it

    @property
    def fallback_message(self) -> str:
        """The line vLLM logs (`_raise_or_fallback` / `_warn_or_fallback`, engine/arg_utils.py 0.8.5-0.11)."""
        if self.experimental:
            return f"{self.feature} is experimental on VLLM_USE_V1=1. Falling back to V0 Engine."
        text = f"{self.feature} is not supported by the V1 Engine. Falling back to V0. "
        if self.recommend_to_remove:
            text += (f"We recommend to remove {self.feature} from your config in favor of the "
                     "V1 Engine.")
        return text

    @property
    def forced_v1_message(self) -> str:
        return f"VLLM_USE_V1=1 is not supported with {self.feature}."

    @property
    def refused_message(self) -> str:
        """0.12+ `_raise_unsupported_error` (engine/arg_utils.py), raised as NotImplementedError."""
        return f"{self.feature} is not supported. We recommend to remove {self.feature} from your config."


# EngineArgs._is_v1_supported_oracle's V1_BACKENDS (vllm/engine/arg_utils.py), by the release
# that changed it (see releases.ORACLE_BACKENDS_*). Any other value falls back to V0.
V1_ORACLE_BACKENDS: Tuple[Tuple[Version, Version, Tuple[str, ...]], ...] = (
    (V1_DEFAULT, ORACLE_BACKENDS_0_9,
     ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1", "TRITON_ATTN_VLLM_V1",
      "TRITON_MLA", "FLASHMLA", "FLASHINFER", "FLASHINFER_VLLM_V1")),
    (ORACLE_BACKENDS_0_9, ORACLE_BACKENDS_0_10_1,
     ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1", "TRITON_ATTN_VLLM_V1",
      "TRITON_MLA", "CUTLASS_MLA_VLLM_V1", "FLASHMLA", "FLASHINFER", "FLASHINFER_VLLM_V1",
      "ROCM_AITER_MLA", "TORCH_SDPA_VLLM_V1", "FLEX_ATTENTION")),
    (ORACLE_BACKENDS_0_10_1, ORACLE_BACKENDS_0_10_2,
     ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1", "TRITON_ATTN_VLLM_V1",
      "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA", "FLASHINFER", "FLASHINFER_VLLM_V1",
      "ROCM_AITER_MLA", "TORCH_SDPA_VLLM_V1", "FLEX_ATTENTION", "TREE_ATTN", "XFORMERS_VLLM_V1")),
    (ORACLE_BACKENDS_0_10_2, ORACLE_BACKENDS_0_11,
     ("FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1", "TRITON_ATTN_VLLM_V1",
      "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA", "FLASHMLA_VLLM_V1", "FLASH_ATTN_MLA", "FLASHINFER",
      "FLASHINFER_VLLM_V1", "FLASHINFER_MLA", "ROCM_AITER_MLA", "TORCH_SDPA_VLLM_V1",
      "FLEX_ATTENTION", "TREE_ATTN", "XFORMERS_VLLM_V1")),
    (ORACLE_BACKENDS_0_11, V1_ONLY,
     ("FLASH_ATTN", "PALLAS", "TRITON_ATTN", "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA",
      "FLASH_ATTN_MLA", "FLASHINFER", "FLASHINFER_MLA", "ROCM_AITER_MLA", "TORCH_SDPA",
      "FLEX_ATTENTION", "TREE_ATTN", "XFORMERS", "ROCM_ATTN")),
)


def v1_oracle_backends(version: str) -> Optional[Tuple[str, ...]]:
    """Return the V1 oracle's allowed names for `version`, None where there is no oracle list."""
    plain = release(version)
    for since, until, names in V1_ORACLE_BACKENDS:
        if since <= plain < until:
            return names
    return None


def oracle_triggers(cfg: ReadConfig, facts: Facts) -> List[Trigger]:
    """Return the V1-oracle checks this config trips, in the order vLLM runs them (0.8.5-0.11).

    The model's checks come from its config.json (architectures, sliding window) when it was
    read, the platform's `supports_v1` from the copy's in-tree platforms (an out-of-tree
    platform plugin's is not known). A check whose outcome depends on unstated hardware is
    `certain=False`.
    """
    v = release(facts)
    if not V1_ORACLE <= v < V1_ONLY:
        return []
    out: List[Trigger] = []
    cc = compute_capability(cfg)
    arch = architectures.resolved(cfg, facts)  # the registered class vLLM inspects

    def add(feature, name, remove=False, certain=True, experimental=False, fields=None, at=None, template=None,
            about=None, remedy=None):
        if not in_copy(template or feature, facts):
            return
        at = at or setting(cfg, name) or env_setting(cfg, name)
        out.append(Trigger(feature, tuple(fields or (name,)), at, remove, certain, experimental, about, remedy))

    load_format = value(cfg, "load_format")
    fallback_formats = ("tensorizer", "sharded_state") if v < ORACLE_TENSORIZER_OK else ("sharded_state",)
    if v < V0_REMOVED and load_format in fallback_formats:
        add(f"--load_format {load_format}", "load_format")
    if value(cfg, "logits_processor_pattern") not in (None, "", "None"):
        add("--logits-processor-pattern", "logits_processor_pattern")
    if v < V0_REMOVED:
        if value(cfg, "preemption_mode") not in (None, "", "None"):
            add("--preemption-mode", "preemption_mode", remove=True)
        if bool_value(cfg, "disable_async_output_proc"):
            add("--disable-async-output-proc", "disable_async_output_proc", remove=True)
        policy = value(cfg, "scheduling_policy")
        if v < ORACLE_POLICY_OK and policy not in (None, "fcfs"):
            add("--scheduling-policy", "scheduling_policy")
        steps = num_scheduler_steps(cfg)
        if v < ORACLE_MULTISTEP_GONE and steps is not None and steps != 1:
            add("--num-scheduler-steps", "num_scheduler_steps", remove=True)
        delay = value(cfg, "scheduler_delay_factor")
        try:
            delayed = delay is not None and float(delay) != 0.0
        except (TypeError, ValueError):
            delayed = False
        if delayed:
            add("--scheduler-delay-factor", "scheduler_delay_factor", remove=True)
        guided = value(cfg, "guided_decoding_backend")
        if v < ORACLE_MULTISTEP_GONE and isinstance(guided, str):
            allowed = ("auto", "xgrammar", "guidance") + (("outlines",) if v >= ORACLE_OUTLINES_OK else ())
            name = guided.split(":")[0] if v < ORACLE_GUIDED_EXACT else guided
            if name not in allowed:
                add(f"--guided-decoding-backend={guided}", "guided_decoding_backend")
        if v < ORACLE_CC_CHECK_GONE and cc is not None and cc[0] < 8 and is_cuda_like(cfg) is not False:
            add("Compute Capability < 8.0", "hardware.compute_capability",
                at=ctx_setting(cfg, "hardware.compute_capability"))
        kv = value(cfg, "kv_cache_dtype")
        if isinstance(kv, str) and kv != "auto":
            backend = attention_backend_env(cfg)
            will_use_fa = backend is None or backend == "FLASH_ATTN_VLLM_V1"
            fa3_fp8 = kv.startswith("fp8") and will_use_fa and facts.has_flash_attn is not False
            if cc is None:
                supported: Optional[bool] = None if fa3_fp8 or v >= ORACLE_KV_BY_PLATFORM else False
            else:
                supported = (fa3_fp8 and cc[0] == 9) or (v >= ORACLE_KV_BY_PLATFORM and cc[0] == 10)
            if platform(cfg) == "rocm" and v >= ORACLE_ROCM_KV_OK:
                supported = True
            if supported is not True:
                add("--kv-cache-dtype", "kv_cache_dtype", certain=supported is False)
        if v < ORACLE_PROMPT_ADAPTER_GONE and bool_value(cfg, "enable_prompt_adapter"):
            add("--enable-prompt-adapter", "enable_prompt_adapter")
        if v >= ORACLE_PROMPT_EMBEDS and bool_value(cfg, "enable_prompt_embeds"):
            add("--enable-prompt-embeds", "enable_prompt_embeds")
        if v < ORACLE_MODEL_CHECKS_GONE:
            dtype = value(cfg, "dtype")
            if isinstance(dtype, str) and dtype.lower() in ("float", "float32"):
                add("--dtype torch.float32", "dtype")
            if value(cfg, "quantization") == "gguf":
                add("--quantization gguf", "quantization")
            task = value(cfg, "task")
            implicit = task in (None, "auto") and architectures.has(cfg, facts, "transcription")
            if implicit:  # ModelConfig._resolve_task: the transcription runner comes first (Whisper)
                task = "transcription"
            if isinstance(task, str) and task not in ("auto", "generate"):
                add(f"--task {task}", "task", at=cfg.model if implicit else None,
                    about=f"--task transcription (the task vLLM picks for {arch})" if implicit else None,
                    remedy=MODEL_REMEDY if implicit else None)
    if architectures.has(cfg, facts, "v0_only"):  # ModelConfig.is_v1_compatible: SupportsV0Only
        add(architectures.shown(cfg), "model", at=cfg.model, template="{}",
            about=f"the model's architecture (config.json architectures: {arch})", remedy=MODEL_REMEDY)
    elif architectures.has(cfg, facts, "inner_state"):  # 0.9-0.10: "V1 mamba models are unoptimized"
        add("Mamba", "model", at=cfg.model, experimental=True,
            about=f"Mamba-style state-space models (config.json architectures: {arch})", remedy=MODEL_REMEDY)
    if (to_int(value(cfg, "max_num_partial_prefills")) or 1) != 1 or \
            (to_int(value(cfg, "max_long_partial_prefills")) or 1) != 1:
        add("Concurrent Partial Prefill", "max_num_partial_prefills",
            fields=("max_num_partial_prefills", "max_long_partial_prefills"))
    if v < ORACLE_CC_CHECK_GONE and (value(cfg, "otlp_traces_endpoint") or value(cfg, "collect_detailed_traces")):
        add("--otlp-traces-endpoint", "otlp_traces_endpoint")
    method = speculative_method(cfg, facts)
    experimental: Optional[str] = None
    if method is not None and v < ORACLE_SPEC_CHECK_GONE:
        if v < ORACLE_SPEC_METHODS:
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
    answer = facts.v1_platforms.get(platform_module(cfg) or "")
    if answer is not None and answer.supports_v1 is False:  # current_platform.supports_v1
        add(f"device type={answer.device_type}", "hardware.platform", at=ctx_setting(cfg, "hardware.platform"),
            about=f"the {platform(cfg)} platform (hardware.platform; its supports_v1 says no)",
            remedy="run this platform on V0 on purpose (VLLM_USE_V1=0), or a vLLM whose V1 supports it")
    pp = to_int(value(cfg, "pipeline_parallel_size")) or 1
    executor = value(cfg, "distributed_executor_backend")
    if pp > 1 and v < ORACLE_PP_MP_OK and executor != "ray":
        add("Pipeline Parallelism without Ray distributed executor", "pipeline_parallel_size")
    elif pp > 1 and ORACLE_PP_MP_OK <= v and executor not in PP_EXECUTORS:
        add(PP_FEATURE, "pipeline_parallel_size")
    if experimental:
        add(experimental, "speculative_config", experimental=True)
    device = platform(cfg)
    if v < ORACLE_PLATFORM_DEFAULT_V1 and device is not None and (device == "rocm" or is_cuda_like(cfg) is False):
        add(device, "hardware.platform", experimental=True, at=ctx_setting(cfg, "hardware.platform"),
            template="{}")  # _warn_or_fallback(current_platform.device_name)
    if v >= ORACLE_CPU_SLIDING_WINDOW and device == "cpu" and cfg.model_facts is not None \
            and cfg.model_facts.sliding_window is not None:
        add("sliding window (CPU backend)", "hardware.platform", at=ctx_setting(cfg, "hardware.platform"))
    return out


PLATFORM_MODULES = {"gaudi": "hpu"}  # hardware.platform names -> vllm/platforms/<module>.py


def platform_module(cfg: ReadConfig) -> Optional[str]:
    """Return the vllm/platforms module that runs the stated platform (vendor CUDA-likes: cuda)."""
    name = platform(cfg)
    if name is None:
        return None
    return PLATFORM_MODULES.get(name, name) if is_cuda_like(cfg) is False or name == "rocm" else "cuda"


PP_EXECUTORS = (None, "ray", "mp", "external_launcher")  # run pipeline parallelism on V1 (0.9+)
PP_FEATURE = ("Pipeline Parallelism without Ray distributed executor or multiprocessing executor "
              "or external launcher")


def refused_features(cfg: ReadConfig, facts: Facts) -> List[Trigger]:
    """Return what `EngineArgs._check_feature_supported` refuses (0.12+, V1 only), in its order.

    The checks of the oracle that survived V0's removal: they now raise NotImplementedError
    while vLLM builds its configuration.
    """
    if release(facts) < V1_ONLY:
        return []
    out: List[Trigger] = []

    def add(feature, name, fields=None):
        if in_copy(feature, facts):
            out.append(Trigger(feature, tuple(fields or (name,)), setting(cfg, name)))

    if value(cfg, "logits_processor_pattern") not in (None, "", "None"):
        add("--logits-processor-pattern", "logits_processor_pattern")
    if (to_int(value(cfg, "max_num_partial_prefills")) or 1) != 1 or \
            (to_int(value(cfg, "max_long_partial_prefills")) or 1) != 1:
        add("Concurrent Partial Prefill", "max_num_partial_prefills",
            fields=("max_num_partial_prefills", "max_long_partial_prefills"))
    if (to_int(value(cfg, "pipeline_parallel_size")) or 1) > 1 and \
            value(cfg, "distributed_executor_backend") not in PP_EXECUTORS:
        add(PP_FEATURE, "pipeline_parallel_size", fields=("pipeline_parallel_size", "distributed_executor_backend"))
    return out


def in_copy(feature: str, facts: Facts) -> bool:
    """Return whether the copy's oracle reports `feature` (always, when its oracle was not read).

    A fork that dropped a check is linted as it is. A feature matches a report of the same
    text, or a template (`--load_format {}`) with text around its fields; a bare `{}` (the
    architectures, the device name) matches only itself.
    """
    if facts.v1_oracle is None:
        return True
    for template, _kind in facts.v1_oracle:
        if template == feature:
            return True
        if template.strip("{}") and re.fullmatch(".*".join(re.escape(p) for p in template.split("{}")), feature):
            return True
    return False


def engine(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return which engine runs the config ("V0" or "V1"), why, and any error vLLM raises choosing it."""
    v = release(facts)
    ver = facts.version
    env = use_v1_env(cfg)
    env_fields = ("VLLM_USE_V1",) if env is not None else ()
    if v < V1_ENGINE:
        return Prediction(V0, f"vLLM {ver} has only the V0 engine")
    if v < V1_DEFAULT:
        if env:
            return Prediction(V1, f"VLLM_USE_V1=1 opts in to the V1 engine on vLLM {ver}", fields=env_fields)
        return Prediction(V0, f"V0 is the default engine of vLLM {ver}", fields=env_fields)
    if v >= V1_ONLY:
        return Prediction(V1, f"vLLM {ver} has only the V1 engine")
    if env is False:
        if v >= V0_REMOVED:
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
        if v >= V0_REMOVED:
            return Prediction(V0, reason + ", which it no longer has", fields=trigger.fields,
                              error=NO_V0_ERROR)
        return Prediction(V0, reason, fields=trigger.fields)
    if possible:
        first = possible[0]
        return Prediction(V1, f"V1 is the default engine of vLLM {ver}, unless the GPU does not support "
                          f"{first.feature} (then it falls back to V0)", certain=False,
                          alternatives=(V0,), fields=first.fields)
    return Prediction(V1, f"V1 is the default engine of vLLM {ver}", fields=env_fields)


def config_engine(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return the engine whose defaults and checks build the configuration (SchedulerConfig and its kin).

    That is `engine()`'s, except on 0.11: V0 is gone, yet a config that chooses it (VLLM_USE_V1=0,
    or a fallback) is still built with V1's defaults and checks, and the API server's
    assertion comes only after it, so those checks refuse first.
    """
    eng = engine(cfg, facts)
    if eng.value == V0 and eng.error and release(facts) >= V1_CONFIG_WITHOUT_V0:
        return Prediction(V1, f"vLLM {facts.version} has no V0, so it builds the configuration with V1's "
                          f"defaults and checks ({eng.reason})", fields=eng.fields)
    return eng
