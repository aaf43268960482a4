"""Predict the attention backend V0 selects, the backend lists multi-step accepts, and the
MLA and attention-sink models no backend of a release takes on the GPU at hand.

Sources: `attention/selector.py` (0.6.3 `which_attn_to_use`), `platforms/cuda.py`
(`get_attn_backend_cls`, 0.7.3-0.33.0), `worker/multi_step_model_runner.py`,
`v1/attention/backends/` (each backend's `supports_compute_capability`, 0.12.0-0.33.0).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.vllm.inputs import (attention_backend_env, compute_capability, env_value, is_cuda_like, platform,
                                       to_int, value)
from patchops.lint.vllm.prediction import Prediction
from patchops.lint.vllm.releases import (ATTENTION_SINKS, BACKEND_ENUM_NAMES, BACKENDS_VALIDATED, FA4_SINKS,
                                         FA_FP8_KV, MLA_FLASHMLA_ON_HOPPER, MLA_TRITON_FP8, MLA_TRITON_FP8_REFUSED,
                                         PLATFORM_SELECTS_BACKEND, SPARSE_MLA_ON_SM120, release)

ATTENTION_BACKEND_FLAG = "attention_backend"

ATTENTION_BACKEND_ENV = "VLLM_ATTENTION_BACKEND"

# MultiStepModelRunner's allowed lists (worker/multi_step_model_runner.py), by get_name().
MULTISTEP_BACKENDS_063 = ("flash-attn", "rocm-flash-attn", "flashinfer")
MULTISTEP_CHUNKED_BACKENDS_063 = ("flash-attn",)
MULTISTEP_BACKENDS = ("FLASH_ATTN", "ROCM_FLASH", "FLASHINFER", "NO_ATTENTION")
MULTISTEP_CHUNKED_BACKENDS = ("FLASH_ATTN", "FLASHINFER")
# 0.6.3 AttentionBackend.get_name() spellings of the _Backend members.
GET_NAME_063 = {"FLASH_ATTN": "flash-attn", "XFORMERS": "xformers", "ROCM_FLASH": "rocm-flash-attn",
                "FLASHINFER": "flashinfer", "TORCH_SDPA": "torch-sdpa", "OPENVINO": "openvino",
                "IPEX": "ipex-attn", "NO_ATTENTION": "placeholder-attn", "PALLAS": "pallas"}


def backend_label(name: Optional[str], facts: Facts) -> Optional[str]:
    """Return the backend's get_name() spelling in this version (0.6.3: "xformers", "flash-attn")."""
    if name is None:
        return None
    if release(facts) < BACKEND_ENUM_NAMES:
        return GET_NAME_063.get(name, name.lower())
    return name


def multistep_backends(facts: Facts, chunked: bool) -> Tuple[str, ...]:
    """Return MultiStepModelRunner's allowed backend list (get_name() spellings) for this version."""
    shipped = facts.multistep_chunked_backends if chunked else facts.multistep_backends
    if shipped:
        return tuple(shipped)
    if release(facts) < BACKEND_ENUM_NAMES:
        return MULTISTEP_CHUNKED_BACKENDS_063 if chunked else MULTISTEP_BACKENDS_063
    return MULTISTEP_CHUNKED_BACKENDS if chunked else MULTISTEP_BACKENDS


def v0_attention_backend(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return the attention backend V0 selects on CUDA (enum names: FLASH_ATTN, XFORMERS, ...).

    Follows `which_attn_to_use` (0.6.3) / `CudaPlatform.get_attn_backend_cls` (0.7.3-0.10.2):
    FLASH_ATTN unless a downgrade to XFORMERS applies. Model facts (head size, sliding window)
    are not known, so FLASH_ATTN is never more than likely without a stated GPU.
    """
    v = release(facts)
    explicit = attention_backend_env(cfg)
    env_field = ("VLLM_ATTENTION_BACKEND",) if explicit is not None else ()
    if platform(cfg) == "rocm":
        if explicit in (None, "FLASH_ATTN", "ROCM_FLASH") or v < PLATFORM_SELECTS_BACKEND:
            return Prediction("ROCM_FLASH", "V0 on ROCm uses the ROCm flash-attention backend",
                              fields=("hardware.platform",))
    if explicit is not None:
        if explicit == "XFORMERS":
            return Prediction("XFORMERS", "VLLM_ATTENTION_BACKEND=XFORMERS is set", fields=env_field)
        if explicit == "FLASHINFER":
            return Prediction("FLASHINFER", "VLLM_ATTENTION_BACKEND=FLASHINFER is set", fields=env_field)
        if explicit != "FLASH_ATTN":
            if v < PLATFORM_SELECTS_BACKEND:
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
        if v < FA_FP8_KV:
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


def suggest_backend(name: str, known: Tuple[str, ...]) -> Optional[str]:
    """Return the backend `name` most likely meant: a case-insensitive or suffix match, else close."""
    by_upper = {k.upper(): k for k in known}
    plain = name.strip().upper().replace("-", "_")
    for stem in (plain, plain.replace("ATTENTION", "ATTN")):   # FLASH_ATTENTION -> FLASH_ATTN
        for candidate in (stem, stem.replace("_VLLM_V1", ""), stem + "_VLLM_V1"):
            if candidate in by_upper:
                return by_upper[candidate]
    close = difflib.get_close_matches(name.upper(), list(by_upper), n=1, cutoff=0.6)
    return by_upper[close[0]] if close else None


# --------------------------------------------------------------------------- MLA and sinks on this GPU

# ModelConfig.is_deepseek_mla: these model types with `kv_lora_rank` run MLA (config.py:980 0.8.5;
# deepseek_v32 from config/model.py:1208 0.12.0); VLLM_MLA_DISABLE=1 turns it off (use_mla).
MLA_MODEL_TYPES = ("deepseek_v2", "deepseek_v3", "deepseek_v32")
MLA_HEAD_SIZE = 576   # kv_lora_rank 512 + qk_rope_head_dim 64: MLACommonBackend.get_supported_head_sizes
# supports_compute_capability of the CUDA MLA backends, as the majors each takes (0.12.0-0.33.0:
# v1/attention/backends/mla/flashattn_mla.py, flashmla.py, flashinfer_mla.py, cutlass_mla.py);
# TRITON_MLA takes every GPU. The sparse ones (DeepSeek-V3.2) are in SPARSE_MLA_MAJORS.
MLA_BACKEND_MAJORS: Dict[str, Tuple[int, ...]] = {
    "FLASH_ATTN_MLA": (9,), "FLASHMLA": (9, 10), "FLASHINFER_MLA": (10,), "CUTLASS_MLA": (10,),
    "FLASHMLA_SPARSE": (9, 10), "FLASHINFER_MLA_SPARSE": (10,)}
SPARSE_MLA_MAJORS = (9, 10)           # flashmla_sparse.py:89 (0.12.0); 12 joins at SPARSE_MLA_ON_SM120
DENSE_FP8_MLA_MAJORS = (9, 10)        # the majors a non-Triton MLA backend takes (0.12.0-0.17.0)

# How the selection refuses (the rule words each with lint/vllm/messages.py).
TRITON_FP8 = "triton-fp8"             # messages.FP8_TRITON_MLA
NO_VALID = "no-valid"                 # messages.NO_VALID_ATTENTION_BACKEND, config and reasons
SELECTED = "selected"                 # messages.SELECTED_BACKEND_INVALID, problem (the name) and reasons
FA3_SINKS = "fa3-sinks"               # messages.SINKS_NEED_FA3
SINK_MODEL_TYPES = ("gpt_oss",)       # GptOssAttention passes `sinks` to every Attention layer (0.10.1.1)
FA_NAMES = ("FLASH_ATTN",)            # 0.10.x: FLASH_ATTN_VLLM_V1 is not matched and falls to the default
# Backends whose supports_sink() is False on every CUDA GPU (0.12.0): FlexAttention, Tree attention.
SINKLESS_BACKENDS = ("FLEX_ATTENTION", "TREE_ATTN")


@dataclass(frozen=True)
class BackendRefusal:
    """What vLLM's backend selection refuses for this model on this GPU, and which setting asked."""

    problem: str                        # "sparse MLA", "an fp8 KV cache with MLA", or the backend named
    takes: str                          # the GPUs that would take it ("compute capability 9.x or 10.x")
    refusal: str                        # TRITON_FP8, NO_VALID, SELECTED or FA3_SINKS
    fields: Tuple[str, ...] = ()
    setting: Optional[Setting] = None   # the setting to point at (None: the GPU)
    config: str = ""                    # NO_VALID's config_str, as far as the inputs show it
    reasons: str = ""                   # the invalid reasons vLLM lists


def chosen_backend(cfg: ReadConfig, facts: Facts) -> Tuple[Optional[str], Optional[Setting], Tuple[str, ...]]:
    """Return the backend the launch names (VLLM_ATTENTION_BACKEND, or --attention-backend), upper case."""
    found = cfg.args.get("attention_backend")
    if "attention_backend" in facts.flags and found is not None and isinstance(found.value, str):
        name = found.value.strip().upper()
        if name != "AUTO":
            return name, found, ("attention_backend",)
    name = attention_backend_env(cfg)
    if name is not None and facts.attention_env_var:
        return name.strip().upper(), cfg.env.get(ATTENTION_BACKEND_ENV), (ATTENTION_BACKEND_ENV,)
    return None, None, ()


def _majors(majors: Tuple[int, ...]) -> str:
    return "compute capability " + " or ".join(f"{m}.x" for m in majors)


def _gpu_major(cfg: ReadConfig) -> Optional[int]:
    """Return the stated NVIDIA GPU's major compute capability (None off CUDA or when unstated)."""
    cc = compute_capability(cfg)
    if cc is None or is_cuda_like(cfg) is False or platform(cfg) == "rocm":   # ROCm has its own backends
        return None
    return cc[0]


def _config_str(config: Dict[str, Any], head: Any, kv: str, mla: bool, sinks: bool, sparse: bool) -> str:
    """Return the config_str of the refusal, as far as config.json and the launch show it."""
    dtype = str(config.get("torch_dtype") or "bfloat16").replace("torch.", "")
    return (f"head_size: {head}, dtype: torch.{dtype}, kv_cache_dtype: {kv}, block_size: ..., "
            f"use_mla: {mla}, has_sink: {sinks}, use_sparse: {sparse}")


def uses_mla(cfg: ReadConfig, config: Dict[str, Any]) -> bool:
    """Say whether vLLM runs this config.json with MLA (ModelConfig.use_mla)."""
    return (config.get("kv_lora_rank") is not None and config.get("model_type") in MLA_MODEL_TYPES
            and env_value(cfg, "VLLM_MLA_DISABLE") not in ("1", "true", "True"))


def mla_refusal(cfg: ReadConfig, facts: Facts, config: Dict[str, Any]) -> Optional[BackendRefusal]:
    """Return why no MLA backend of this release takes an MLA model on the stated GPU, or None.

    Judged: an fp8 KV cache, which Triton MLA (the one MLA backend off Hopper and Blackwell)
    refuses before MLA_TRITON_FP8; sparse MLA (`index_topk`, DeepSeek-V3.2), which only FlashMLA
    and FlashInfer sparse kernels run (from BACKENDS_VALIDATED, which names the refusal); and a
    named MLA backend the GPU is not listed for (from BACKENDS_VALIDATED). Not judged: GPUs
    before Ampere, where Triton MLA is picked and the prefill's FlashAttention fails in a kernel;
    fp8 on Blackwell before BACKENDS_VALIDATED.
    """
    v = release(facts)
    major = _gpu_major(cfg)
    if major is None or v < MLA_TRITON_FP8_REFUSED or not uses_mla(cfg, config):
        return None
    kv = str(value(cfg, "kv_cache_dtype") or "auto")
    sparse = config.get("index_topk") is not None
    name, named, name_fields = chosen_backend(cfg, facts)
    if v >= BACKENDS_VALIDATED and name in MLA_BACKEND_MAJORS and major not in MLA_BACKEND_MAJORS[name]:
        return BackendRefusal(name, _majors(MLA_BACKEND_MAJORS[name]), SELECTED,
                              name_fields + ("hardware.compute_capability",), named,
                              reasons="['compute capability not supported']")
    if name is not None:
        return None       # another backend named: its own checks and the copy decide
    described = _config_str(config, MLA_HEAD_SIZE, kv, True, False, sparse)
    if sparse:
        majors = SPARSE_MLA_MAJORS + ((12,) if v >= SPARSE_MLA_ON_SM120 else ())
        if v < BACKENDS_VALIDATED or major in majors:
            return None
        return BackendRefusal("sparse MLA", _majors(majors), NO_VALID, ("hardware.compute_capability",),
                              config=described, reasons="{...}")
    if not kv.startswith("fp8") or v >= MLA_TRITON_FP8:
        return None
    fields = ("kv_cache_dtype", "hardware.compute_capability")
    at = cfg.args.get("kv_cache_dtype")
    if v < MLA_FLASHMLA_ON_HOPPER:        # 0.7: Triton MLA on every GPU
        return BackendRefusal("an fp8 KV cache with MLA", "no GPU: Triton MLA is the only MLA backend",
                              TRITON_FP8, fields, at)
    if major in DENSE_FP8_MLA_MAJORS:     # FlashMLA (Hopper), CUTLASS/FlashInfer MLA (Blackwell)
        return None
    if v < BACKENDS_VALIDATED:            # FlashMLA on Hopper; Blackwell's CUTLASS MLA not judged
        return BackendRefusal("an fp8 KV cache with MLA", _majors((9,)), TRITON_FP8, fields, at)
    return BackendRefusal("an fp8 KV cache with MLA", _majors(DENSE_FP8_MLA_MAJORS), NO_VALID, fields, at,
                          config=described, reasons="{...}")


def sink_refusal(cfg: ReadConfig, facts: Facts, config: Dict[str, Any]) -> Optional[BackendRefusal]:
    """Return why the backend a launch names cannot run an attention-sink model on the stated GPU, or None.

    vLLM's own pick takes sinks everywhere (Triton off Hopper: platforms/cuda.py:322 0.10.1.1,
    TRITON_ATTN's supports_sink 0.12.0); a named FLASH_ATTN needs FA3 (Hopper; FA4 on Blackwell
    from FA4_SINKS), a named FLASHINFER its TRTLLM kernels (Blackwell), FLEX_ATTENTION and
    TREE_ATTN never take them (validated from BACKENDS_VALIDATED).
    """
    v = release(facts)
    major = _gpu_major(cfg)
    if major is None or v < ATTENTION_SINKS or config.get("model_type") not in SINK_MODEL_TYPES:
        return None
    name, named, name_fields = chosen_backend(cfg, facts)
    if name is None:
        return None
    fields = name_fields + ("hardware.compute_capability",)
    reasons = ["sink setting not supported"]
    if name in FA_NAMES:
        majors = (9, 10) if v >= FA4_SINKS else (9,)
        if major in majors:
            return None
        if v < BACKENDS_VALIDATED:
            return BackendRefusal(name, _majors(majors) + " (FlashAttention 3)", FA3_SINKS, fields, named)
        if major < 8:     # FlashAttentionBackend.supports_compute_capability: >= 8.0
            reasons.append("compute capability not supported")
    elif name == "FLASHINFER" and v >= BACKENDS_VALIDATED:
        if major == 10:   # supports_trtllm_attention: is_device_capability(100)
            return None
        majors = (10,)
    elif name in SINKLESS_BACKENDS and v >= BACKENDS_VALIDATED:
        majors = ()
    else:
        return None
    takes = _majors(majors) if majors else "no GPU"
    return BackendRefusal(name, takes, SELECTED, fields, named, reasons=str(reasons))
