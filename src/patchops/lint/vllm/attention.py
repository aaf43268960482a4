"""Predict the attention backend V0 selects, and the backend lists multi-step accepts.

Sources: `attention/selector.py` (0.6.3 `which_attn_to_use`), `platforms/cuda.py`
(`get_attn_backend_cls`, 0.7.3-0.10.2), `worker/multi_step_model_runner.py`.
"""

from __future__ import annotations

import difflib
from typing import List, Optional, Tuple

from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm.inputs import attention_backend_env, compute_capability, platform, to_int, value
from patchops.lint.vllm.prediction import Prediction
from patchops.lint.vllm.releases import BACKEND_ENUM_NAMES, FA_FP8_KV, PLATFORM_SELECTS_BACKEND, release

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
