"""Estimate GPU memory before launch: weights per GPU, KV bytes per token, tokens the cache holds.

vLLM sizes its KV cache at worker start-up (profile run, then `determine_num_available_blocks`
on V0, `check_enough_kv_cache_memory` on V1) and refuses to start when one request of
`max_model_len` cannot be stored. The estimate here is an upper bound on the cache: it takes
`memory_gib x gpu_memory_utilization` minus the weights, and leaves out activations, CUDA graphs
and non-torch memory, so "does not fit" is certain and "fits" is only likely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from patchops.lint.input.model_config import ModelFacts

DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
KV_CACHE_DTYPE = "kv_cache_dtype"
FLOAT_KV_CACHE_DTYPES = ("float16", "bfloat16")
# --dtype spellings -> the torch dtype vLLM quotes
DTYPE_NAMES = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32",
               "float32": "float32"}
GIB = 1024 ** 3

DTYPE_BYTES = {"float16": 2, "half": 2, "bfloat16": 2, "float32": 4, "float": 4}
# Quantization methods whose linear-layer weight size we know: bytes per parameter (None: from `bits`).
QUANT_BYTES = {"fp8": 1.0, "fbgemm_fp8": 1.0, "awq": None, "gptq": None, "awq_marlin": None,
               "gptq_marlin": None}


@dataclass(frozen=True)
class ParamCount:
    """Parameters from config.json dimensions: embeddings (input, and lm_head unless tied) and the rest."""

    embedding: int
    layers: int

    @property
    def total(self) -> int:
        return self.embedding + self.layers


@dataclass(frozen=True)
class MemoryEstimate:
    """The arithmetic of one launch's KV-cache sizing, per GPU."""

    params: ParamCount
    weight_bytes: float          # per GPU
    budget_bytes: float          # memory_gib x gpu_memory_utilization
    layers: int                  # per pipeline stage
    kv_heads: int                # per GPU: KV heads / TP, at least 1 (vLLM replicates them)
    head_size: int
    kv_dtype_bytes: int
    block_size: int

    @property
    def kv_bytes_per_token(self) -> int:
        """Per GPU: 2 (K and V) x layers x KV heads x head size x KV dtype bytes."""
        return 2 * self.layers * self.kv_heads * self.head_size * self.kv_dtype_bytes

    @property
    def kv_bytes(self) -> float:
        return self.budget_bytes - self.weight_bytes

    @property
    def tokens(self) -> int:
        """Tokens the KV cache holds: whole blocks of `block_size` tokens."""
        if self.kv_bytes <= 0:
            return 0
        return int(self.kv_bytes // (self.block_size * self.kv_bytes_per_token)) * self.block_size

    def needed_bytes(self, tokens: int) -> int:
        """Bytes of KV cache `tokens` tokens need, in whole blocks (V1 max_memory_usage_bytes)."""
        return -(-tokens // self.block_size) * self.block_size * self.kv_bytes_per_token


def count_params(model: ModelFacts) -> Optional[ParamCount]:
    """Count a decoder's parameters (Llama-style attention, gated MLP or MoE experts); None if dims are missing.

    Biases and per-head norms are left out (under 0.01% for the models tested).
    """
    cfg = model.text_config
    hidden, layers = model.hidden_size, model.num_hidden_layers
    heads, kv_heads, head = model.num_attention_heads, model.num_key_value_heads, model.head_size
    vocab = cfg.get("vocab_size")
    if not all(isinstance(v, int) and v > 0 for v in (hidden, layers, heads, kv_heads, head, vocab)):
        return None
    embedding = vocab * hidden * (1 if cfg.get("tie_word_embeddings") else 2)
    attention = hidden * heads * head * 2 + hidden * kv_heads * head * 2   # q, o; k, v
    experts = model.num_experts
    if experts:
        inner = cfg.get("moe_intermediate_size") or cfg.get("intermediate_size") or 0
        mlp = experts * 3 * hidden * inner + hidden * experts                # gate/up/down per expert, router
    else:
        mlp = 3 * hidden * (cfg.get("intermediate_size") or 0)
    norms = 2 * hidden
    return ParamCount(embedding=embedding, layers=layers * (attention + mlp + norms) + hidden)


def dtype_bytes(model: ModelFacts, dtype: Optional[str]) -> Optional[int]:
    """Bytes per weight for `--dtype` (auto: config.json's, float32 served as float16, as vLLM does)."""
    name = (dtype or "auto").lower()
    if name == "auto":
        return 2 if (model.dtype or "float16") in ("float32", "float") else DTYPE_BYTES.get(model.dtype or "float16")
    return DTYPE_BYTES.get(name)


def served_dtype(dtype: Optional[str], model: Optional[ModelFacts],
                 capability: Optional[Tuple[int, int]]) -> Optional[str]:
    """Return the dtype vLLM serves the weights in ("float16", "bfloat16", "float32"), None if unsure.

    `auto` takes config.json's; bfloat16 becomes float16 on GPUs below compute capability 8.0.
    A float32 checkpoint under `auto` depends on the platform's preference: left unsure.
    """
    name = (dtype or "auto").lower()
    named = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16",
             "float": "float32", "float32": "float32"}
    if name != "auto":
        return named.get(name)
    config = named.get((model.dtype or "").lower()) if model is not None else None
    if config == "bfloat16" and capability is not None and capability < (8, 0):
        return "float16"
    return config if config in ("float16", "bfloat16") else None


def quant_method(model: ModelFacts, quantization: Optional[str]) -> Tuple[Optional[str], Optional[int]]:
    """Return (method, bits): `--quantization`, else config.json's quantization_config."""
    qcfg = model.text_config.get("quantization_config")
    qcfg = qcfg if isinstance(qcfg, dict) else {}
    method = quantization or qcfg.get("quant_method")
    bits = qcfg.get("bits") or qcfg.get("w_bit")
    return (str(method).lower() if method else None, bits if isinstance(bits, int) else None)


def estimate(model: ModelFacts, *, memory_gib: float, utilization: float, tp: int, pp: int,
             block_size: int, dtype: Optional[str], kv_cache_dtype: Optional[str],
             quantization: Optional[str], params: Optional[ParamCount] = None,
             ) -> Tuple[Optional[MemoryEstimate], Optional[str]]:
    """Return (estimate, None), or (None, why no estimate can be made).

    `params` replaces the Llama-style count for models whose layers differ (hybrid models).
    """
    params = params or count_params(model)
    if params is None:
        return None, "config.json lacks the dimensions to count parameters"
    weight_bytes = dtype_bytes(model, dtype)
    if weight_bytes is None:
        return None, f"dtype {dtype!r} has no known size"
    method, bits = quant_method(model, quantization)
    linear_bytes: float = weight_bytes
    if method:
        if method not in QUANT_BYTES:
            return None, f"quantization {method!r} has no known weight size"
        linear_bytes = QUANT_BYTES[method] or (bits or 4) / 8
    kv_name = (kv_cache_dtype or "auto").lower()
    kv_bytes = 1 if kv_name.startswith("fp8") else weight_bytes if kv_name == "auto" else DTYPE_BYTES.get(kv_name)
    if kv_bytes is None:
        return None, f"kv_cache_dtype {kv_cache_dtype!r} has no known size"
    # Weights split across TP x PP ranks; KV heads split across TP (replicated when TP > KV heads).
    per_gpu = (params.embedding * weight_bytes + params.layers * linear_bytes) / (tp * pp)
    return MemoryEstimate(params=params, weight_bytes=per_gpu, budget_bytes=memory_gib * utilization * GIB,
                          layers=-(-model.num_hidden_layers // pp),
                          kv_heads=max(1, model.num_key_value_heads // tp), head_size=model.head_size,
                          kv_dtype_bytes=kv_bytes, block_size=block_size), None


def gib(value: float) -> str:
    """Format bytes as GiB with two decimals, as vLLM's messages do."""
    return f"{value / GIB:.2f}"
