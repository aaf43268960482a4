"""Predict the scheduler's effective values: hardware tier, chunked prefill, batch budgets.

Sources: `engine/arg_utils.py` (`_set_default_args_v0/_v1`, `_set_default_args`,
`get_batch_defaults`), `config.py` / `config/scheduler.py` (SchedulerConfig). vLLM fills these
in at launch from the engine, the usage context (`vllm serve` is always OPENAI_API_SERVER) and
the hardware.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm.inputs import (bool_value, compute_capability, ctx_setting, device_name, is_cuda_like,
                                       is_pooling, literal_default, memory_gib,
                                       num_scheduler_steps, platform, setting, speculative_method, to_int, value)
from patchops.lint.vllm.model_len import max_model_len
from patchops.lint.vllm.pooling import POOLER_FLAGS, chunked_prefill_by_pooling
from patchops.lint.vllm.prediction import Prediction
from patchops.lint.vllm.releases import (A100_KEEPS_SMALL, BUDGET_FOLLOWS_MODEL_LEN, CHUNKED_PREFILL_HONOURED,
                                         CPU_BATCH_DEFAULTS, CPU_DEFAULTS_BY_WORLD_SIZE, HUGE_TIER,
                                         SEQS_CAPPED_BY_BUDGET, TPU_BATCH_BY_CHIP, V0_BATCH_2048,
                                         V0_CHUNKED_BLOCKERS, V1_BATCH_BY_MEMORY, V1_POOLING,
                                         Version, release)
from patchops.lint.vllm.routing import V0, V1, engine

# Multi-step scheduling lived in vllm/worker/multi_step_*.py with the V0 engine; both flags
# are absent from EngineArgs.add_cli_args from 0.10.1 (checked: 0.10.1.1, 0.10.2, 0.11.0).
MULTISTEP_FLAGS = ("num_scheduler_steps", "multi_step_stream_outputs")

SMALL, LARGE, HUGE = "small", "large", "huge"  # hardware tiers of the V1 batch defaults
LONG_CONTEXT = 32768  # V0 switches chunked prefill on above this max_model_len
DEFAULT_BATCHED_TOKENS_V0 = 2048  # _DEFAULT_MAX_NUM_BATCHED_TOKENS (0.7.3+)
POOLING_BATCHED_TOKENS = 32768
MULTIMODAL_BATCHED_TOKENS = 5120  # _MULTIMODAL_MODEL_MAX_NUM_BATCHED_TOKENS (config.py, V0)


def hardware_tier(cfg: ReadConfig, facts: Facts) -> Prediction:
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
    if v < V1_BATCH_BY_MEMORY:  # 0.7.3 V1 keys on the device name (platforms get_device_name)
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
    if v >= HUGE_TIER and mem >= 160:
        return Prediction(HUGE, f"the GPU has {mem:g} GiB, at least 160", fields=fields)
    if mem < 70:
        return Prediction(SMALL, f"the GPU has {mem:g} GiB, below 70", fields=fields)
    if v < A100_KEEPS_SMALL:
        return Prediction(LARGE, f"the GPU has {mem:g} GiB, at least 70", fields=fields)
    if v >= HUGE_TIER and cc == (12, 1):
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
# TPU chip (platforms/tpu.py get_device_name) -> OPENAI_API_SERVER max_num_batched_tokens (0.9+).
_TPU_TOKENS = {"v6e": 1024, "v5e": 512, "v5p": 256}


def platform_defaults(cfg: ReadConfig, facts: Facts) -> Tuple[Optional[int], Optional[int], str]:
    """Return the V1 (tokens, seqs) defaults a CPU or TPU platform sets instead of the GPU tier's.

    None for a value the platform leaves to the tier; the reason names the platform. Source:
    `_set_default_args` / `get_batch_defaults` (engine/arg_utils.py 0.9.2+).
    """
    v = release(facts)
    name = platform(cfg)
    if name == "cpu" and v >= CPU_BATCH_DEFAULTS:
        if v < CPU_DEFAULTS_BY_WORLD_SIZE:
            return 2048, 32, "on the CPU platform"
        world = (to_int(value(cfg, "tensor_parallel_size")) or 1) * (to_int(value(cfg, "pipeline_parallel_size")) or 1)
        return 2048 * world, 128 * world, f"on the CPU platform, x world size {world}"
    if name == "tpu" and v >= TPU_BATCH_BY_CHIP:
        chip = device_name(cfg) or ""
        for key, tokens in _TPU_TOKENS.items():
            if key in chip.replace(" ", "").replace("-", ""):
                return tokens, None, f"on a TPU {key.upper()}"
    return None, None, ""


def _throughput_factor(cfg: ReadConfig, facts: Facts) -> int:
    """Return 2 under `--performance-mode throughput`, which doubles both unset batch defaults.

    EngineArgs._set_default_max_num_seqs_and_batched_tokens_args (0.20.0-0.33.0), wherever the
    flag exists.
    """
    mode = value(cfg, "performance_mode")
    return 2 if "performance_mode" in facts.flags and str(mode).lower() == "throughput" else 1


def _by_pooling_type(cfg: ReadConfig, on: bool) -> Prediction:
    """The chunked prefill a pooling runner takes from the pooling type stated in its pooler config."""
    stated = tuple(name for name in POOLER_FLAGS if value(cfg, name) is not None)
    return Prediction(on, "the pooling type stated " + ("allows" if on else "rules out") + " chunked prefill "
                      "for this pooling model", fields=stated)


def chunked_prefill(cfg: ReadConfig, facts: Facts, eng: Optional[Prediction] = None) -> Prediction:
    """Return whether chunked prefill ends up on, by version, engine and max_model_len."""
    v = release(facts)
    ver = facts.version
    eng = eng or engine(cfg, facts)
    explicit = bool_value(cfg, "enable_chunked_prefill")
    where = ("enable_chunked_prefill",) if explicit is not None else ()
    if eng.value == V1 and v < CHUNKED_PREFILL_HONOURED:
        if is_pooling(cfg):
            by_type = chunked_prefill_by_pooling(cfg, facts) if explicit is None else None
            if by_type is not None:
                return _by_pooling_type(cfg, by_type)
            value_ = explicit if explicit is not None else False
            return Prediction(value_, "pooling models choose chunked prefill by their pooling type",
                              certain=explicit is not None, alternatives=(not value_,), fields=where)
        note = ", ignoring enable_chunked_prefill false" if explicit is False else ""
        return Prediction(True, f"the V1 engine of vLLM {ver} always turns chunked prefill on{note}",
                          fields=where)
    if v >= CHUNKED_PREFILL_HONOURED:
        if cfg.model_facts is not None and cfg.model_facts.is_encoder_decoder:  # SchedulerConfig.__post_init__
            return Prediction(False, "encoder-decoder models do not support chunked prefill: vLLM turns it off",
                              fields=("model",) + where)
        if explicit is not None:
            return Prediction(explicit, f"enable_chunked_prefill {str(explicit).lower()} is respected",
                              fields=where)
        by_type = chunked_prefill_by_pooling(cfg, facts) if is_pooling(cfg) else None
        if by_type is not None:
            return _by_pooling_type(cfg, by_type)
        return Prediction(True, f"vLLM {ver} turns chunked prefill on for models that support it",
                          certain=not is_pooling(cfg), alternatives=() if not is_pooling(cfg) else (False,))
    if explicit is not None:
        return Prediction(explicit, f"enable_chunked_prefill {str(explicit).lower()} is respected on V0",
                          fields=where)
    literal = literal_default(facts, "enable_chunked_prefill")
    if isinstance(literal, bool):
        return Prediction(literal, f"this vLLM build defaults enable_chunked_prefill to {literal}",
                          fields=("enable_chunked_prefill",))
    mml = max_model_len(cfg, facts)
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
    if platform(cfg) == "rocm" and v >= V0_CHUNKED_BLOCKERS:
        blockers.append("the platform is ROCm")
    if speculative_method(cfg, facts) is not None:
        blockers.append("speculative decoding is on")
    if bool_value(cfg, "enable_lora"):
        blockers.append("LoRA is on")
    if bool_value(cfg, "enable_prompt_adapter"):
        blockers.append("prompt adapters are on")
    if v >= V0_CHUNKED_BLOCKERS and is_pooling(cfg):
        blockers.append("the model is a pooling model")
    if blockers:
        return Prediction(False, f"V0 would turn chunked prefill on for max_model_len {mml.value} > 32768, "
                          f"but not when {blockers[0]}", fields=mml.fields)
    model = cfg.model_facts
    if model is not None:  # config.json says what V0's remaining conditions read
        if model.multimodal or model.uses_mla:
            what = "multimodal" if model.multimodal else "an MLA model"
            return Prediction(False, f"V0 leaves chunked prefill off for {what}", certain=False,
                              alternatives=(True,), fields=mml.fields)
        if model.sliding_window is not None and not bool_value(cfg, "disable_sliding_window"):
            return Prediction(False, f"V0 would turn chunked prefill on for max_model_len {mml.value} > "
                              "32768, but not with the model's sliding window", fields=mml.fields)
        return Prediction(True, f"V0 turns chunked prefill on automatically for max_model_len {mml.value} > "
                          "32768", fields=mml.fields)
    return Prediction(True, f"V0 turns chunked prefill on automatically for max_model_len {mml.value} > "
                      "32768, unless the model is multimodal, uses a sliding window or MLA",
                      certain=False, alternatives=(False,), fields=mml.fields)


def _v0_batched_tokens(v: Version, chunked: bool, mml: Optional[int], steps: int,
                       pooling: bool, multimodal: bool) -> Tuple[Optional[int], str]:
    small = 512 if v < V0_BATCH_2048 else DEFAULT_BATCHED_TOKENS_V0
    if chunked and steps <= 1:
        out: Optional[int] = small
        why = f"V0 with chunked prefill defaults to {small}"
    else:
        out = None if mml is None else max(mml, 2048)
        why = ("V0 multi-step with chunked prefill defaults to max(max_model_len, 2048)" if chunked
               else "V0 without chunked prefill defaults to max(max_model_len, 2048)")
    if pooling and out is not None:
        out = max(out, POOLING_BATCHED_TOKENS)
    if multimodal and out is not None:  # SchedulerConfig: room for one item's multimodal tokens
        out = max(out, MULTIMODAL_BATCHED_TOKENS)
        why += f", at least {MULTIMODAL_BATCHED_TOKENS} for a multimodal model"
    return out, why


def max_num_batched_tokens(cfg: ReadConfig, facts: Facts, eng: Optional[Prediction] = None,
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
    literal = to_int(literal_default(facts, "max_num_batched_tokens"))
    if literal is not None:
        return Prediction(literal, f"this vLLM build defaults max_num_batched_tokens to {literal}",
                          fields=("max_num_batched_tokens",))
    eng = eng or engine(cfg, facts)
    chunked = chunked or chunked_prefill(cfg, facts, eng)
    mml = max_model_len(cfg, facts).value
    if eng.value == V0:
        steps = num_scheduler_steps(cfg) or 1
        values = []
        for on in chunked.candidates:
            values.append(_v0_batched_tokens(v, on, mml, steps, is_pooling(cfg),
                                             cfg.model_facts is not None and cfg.model_facts.multimodal))
        (first, why), rest = values[0], values[1:]
        alternatives = tuple(val for val, _ in rest if val != first)
        return Prediction(first, why + f" ({chunked.reason})", certain=chunked.certain and first is not None,
                          alternatives=alternatives, fields=chunked.fields)
    tier = hardware_tier(cfg, facts)
    plat_tokens, _, plat_why = platform_defaults(cfg, facts)

    def for_tier(name: str, on: Any = chunked.value) -> Optional[int]:
        if on is False and V1_POOLING <= v < BUDGET_FOLLOWS_MODEL_LEN:
            return mml
        budget = (plat_tokens or _TIER_TOKENS[name]) * _throughput_factor(cfg, facts)
        if v >= BUDGET_FOLLOWS_MODEL_LEN:
            if chunked.value is False:
                budget = max(mml, budget) if mml is not None else None
            if budget is not None and mml is not None:
                seqs = max_num_seqs(cfg, facts, eng, _tier=name, _budget=budget).value
                if seqs is not None:
                    budget = min(seqs * mml, budget)
        return budget

    first = for_tier(tier.value)
    if plat_tokens:
        return Prediction(first, f"the V1 engine of vLLM {ver} defaults max_num_batched_tokens to {first} "
                          f"for `vllm serve` {plat_why}", fields=("hardware.platform",))
    alternatives = tuple(dict.fromkeys(b for b in (for_tier(t) for t in tier.alternatives) if b != first))
    if chunked.value is False and V1_POOLING <= v < BUDGET_FOLLOWS_MODEL_LEN:
        others = tuple(dict.fromkeys(b for b in (for_tier(t, True) for t in (tier.value,) + tier.alternatives)
                                     if b != first)) if not chunked.certain else ()
        return Prediction(first, f"the V1 engine of vLLM {ver} makes max_num_batched_tokens max_model_len "
                          f"({first}) with chunked prefill off ({chunked.reason})", certain=chunked.certain
                          and first is not None, alternatives=others, fields=chunked.fields)
    return Prediction(first, f"the V1 engine of vLLM {ver} defaults max_num_batched_tokens to "
                      f"{first} for `vllm serve` when {tier.reason}", certain=tier.certain,
                      alternatives=alternatives, fields=tier.fields)


def max_num_seqs(cfg: ReadConfig, facts: Facts, eng: Optional[Prediction] = None, *,
                 _tier: Optional[str] = None, _budget: Optional[int] = None) -> Prediction:
    """Return the largest number of sequences per step: the user's value or the default."""
    v = release(facts)
    ver = facts.version
    found = setting(cfg, "max_num_seqs")
    explicit = to_int(found.value) if found is not None else None
    if explicit is not None:
        return Prediction(explicit, f"max_num_seqs {explicit} is set", fields=("max_num_seqs",))
    literal = to_int(literal_default(facts, "max_num_seqs"))
    if literal is not None:
        return Prediction(literal, f"vLLM {ver} defaults max_num_seqs to {literal}")
    eng = eng or engine(cfg, facts)
    if eng.value == V0:
        return Prediction(256, "the V0 engine defaults max_num_seqs to 256")
    if v < V1_BATCH_BY_MEMORY:
        return Prediction(1024, f"the V1 engine of vLLM {ver} defaults max_num_seqs to 1024")
    tier = hardware_tier(cfg, facts)
    plat_tokens, plat_seqs, plat_why = platform_defaults(cfg, facts)

    def for_tier(name: str) -> int:
        factor = _throughput_factor(cfg, facts)
        seqs = (plat_seqs or _TIER_SEQS[name]) * factor
        if v >= SEQS_CAPPED_BY_BUDGET:  # min(default, max_num_batched_tokens) for an unset max_num_seqs
            budget = _budget
            if budget is None:
                found_budget = setting(cfg, "max_num_batched_tokens")
                budget = to_int(found_budget.value) if found_budget is not None else \
                    (plat_tokens or _TIER_TOKENS[name]) * factor
            if budget:
                seqs = min(seqs, budget)
        return seqs

    if _tier is not None:
        return Prediction(for_tier(_tier), "")
    first = for_tier(tier.value)
    if plat_seqs:
        return Prediction(first, f"the V1 engine of vLLM {ver} defaults max_num_seqs to {first} for `vllm serve` "
                          f"{plat_why}", fields=("hardware.platform",))
    alternatives = tuple(dict.fromkeys(s for s in (for_tier(t) for t in tier.alternatives) if s != first))
    return Prediction(first, f"the V1 engine of vLLM {ver} defaults max_num_seqs to {first} for `vllm serve` "
                      f"when {tier.reason}",
                      certain=tier.certain, alternatives=alternatives, fields=tier.fields)
