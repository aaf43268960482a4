"""Estimate the Mamba cache blocks of a hybrid model, which bound max_num_seqs (V1, 0.20+).

A hybrid model (recurrent layers beside attention) keeps one state per sequence in each
recurrent layer, in blocks of the same KV cache pool as attention. vLLM 0.20's
`CompilationConfig.resolve_cudagraph_mode_and_sizes` (vllm/config/compilation.py:1427) refuses
to capture FULL decode graphs when max_num_seqs is above `kv_cache_config.num_blocks`: each
decode sequence needs a block. 0.19 capped the capture sizes instead (a warning); earlier
releases failed in `causal_conv1d_update` (`assert num_cache_lines >= batch`) while capturing.

The pool, from vllm/v1/core/kv_cache_utils.py (0.20.0): the layers are grouped by type into
groups of `group_size` layers (the fewest layers of a type, or the most when the counts are
within 1.5x), every block has one uniform page size (the attention block size is raised until
its page holds the largest recurrent state, and smaller pages are padded), and
`num_blocks = available_memory // page_size // group_size` (`get_num_blocks`), unless
`num_gpu_blocks_override` sets it. The page here is the recurrent state alone (conv + SSM),
so it is a lower bound; the available memory is memory.py's upper bound (no activations,
CUDA graphs or non-torch memory). The blocks counted are therefore at least the real ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from patchops.lint.input.model_config import ModelFacts
from patchops.lint.vllm import memory, messages
from patchops.lint.vllm.memory import ParamCount

MESSAGE = messages.MAMBA_BLOCKS_BELOW_MAX_SEQS
# vllm/model_executor/models/config.py:410 (0.20.0): NemotronH's SSM state in float32 unless configured.
NEMOTRON_H_SSM_DTYPE = "float32"
# Qwen3NextConfig (vllm/transformers_utils/configs/qwen3_next.py:251, 0.20.0): every 4th layer is full attention.
GDN_FULL_ATTENTION_INTERVAL = 4
# Modes whose decode graphs are FULL (CUDAGraphMode.has_full_cudagraphs); 0.20's default for
# hybrid models is FULL_AND_PIECEWISE (MambaModelConfig.verify_and_update_config).
FULL_MODES = ("FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
STATE_BYTES = {"float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2}


@dataclass(frozen=True)
class Layout:
    """The recurrent and attention layers of a hybrid model and one recurrent layer's state per GPU."""

    family: str                  # "gated delta net" (Qwen3-Next, Qwen3.5), "mamba2" (Nemotron-H)
    recurrent_layers: int
    attention_layers: int
    conv_elements: int           # per layer per GPU
    ssm_elements: int
    ssm_dtype: Optional[str]     # None: the conv state's dtype (the model's)
    params: ParamCount           # weights counted per layer kind

    @property
    def group_size(self) -> int:
        """Layers per KV cache group (kv_cache_utils._get_kv_cache_groups_uniform_page_size)."""
        counts = [n for n in (self.recurrent_layers, self.attention_layers) if n > 0]
        low, high = min(counts), max(counts)
        return high if high < low * 1.5 else low

    def page_bytes(self, state_bytes: int) -> int:
        """A recurrent layer's state: conv in `state_bytes`, SSM in its own dtype or the same."""
        ssm = STATE_BYTES.get(self.ssm_dtype or "", state_bytes)
        return self.conv_elements * state_bytes + self.ssm_elements * ssm


@dataclass(frozen=True)
class BlockEstimate:
    """The arithmetic of the Mamba cache blocks, per GPU."""

    layout: Layout
    page_bytes: int
    memory: memory.MemoryEstimate

    @property
    def blocks(self) -> int:
        if self.memory.kv_bytes <= 0:
            return 0
        return int(self.memory.kv_bytes // self.page_bytes // self.layout.group_size)


def _int(cfg: Dict[str, Any], key: str) -> Optional[int]:
    value = cfg.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _mlp_params(cfg: Dict[str, Any], hidden: int, gated: int = 3) -> int:
    """A layer's MLP or MoE experts (router and shared expert included), as config.json sizes them."""
    experts = _int(cfg, "num_experts") or _int(cfg, "n_routed_experts")
    if experts:
        inner = _int(cfg, "moe_intermediate_size") or 0
        shared = (_int(cfg, "shared_expert_intermediate_size") or
                  (_int(cfg, "moe_shared_expert_intermediate_size") or 0) * (_int(cfg, "n_shared_experts") or 0))
        return experts * gated * hidden * inner + gated * hidden * shared + hidden * experts
    inner = cfg.get("intermediate_size")
    return gated * hidden * (inner if isinstance(inner, int) else 0)


def _attention_params(model: ModelFacts) -> int:
    hidden, head = model.hidden_size or 0, model.head_size or 0
    return hidden * (model.num_attention_heads or 0) * head * 2 + hidden * (model.num_key_value_heads or 0) * head * 2


def _embedding(cfg: Dict[str, Any], hidden: int) -> Optional[int]:
    vocab = _int(cfg, "vocab_size")
    return vocab * hidden * (1 if cfg.get("tie_word_embeddings") else 2) if vocab else None


def _gated_delta_net(model: ModelFacts, tp: int) -> Optional[Layout]:
    cfg = model.text_config
    nk, nv = _int(cfg, "linear_num_key_heads"), _int(cfg, "linear_num_value_heads")
    dk, dv, kernel = _int(cfg, "linear_key_head_dim"), _int(cfg, "linear_value_head_dim"), \
        _int(cfg, "linear_conv_kernel_dim")
    layers, hidden = model.num_hidden_layers, model.hidden_size
    if not all((nk, nv, dk, dv, kernel, layers, hidden)):
        return None
    types = cfg.get("layer_types")
    if not isinstance(types, list) or len(types) != layers:
        types = ["linear_attention" if (i + 1) % GDN_FULL_ATTENTION_INTERVAL else "full_attention"
                 for i in range(layers)]
    linear = sum(1 for t in types if t == "linear_attention")
    embedding = _embedding(cfg, hidden)
    if embedding is None:
        return None
    gdn = hidden * (2 * nk * dk + 2 * nv * dv) + hidden * 2 * nv + nv * dv * hidden
    body = linear * gdn + (layers - linear) * _attention_params(model) + layers * _mlp_params(cfg, hidden)
    ssm_dtype = cfg.get("mamba_ssm_dtype") if isinstance(cfg.get("mamba_ssm_dtype"), str) else None
    return Layout("gated delta net", linear, layers - linear,
                  conv_elements=(2 * nk * dk + nv * dv) // tp * (kernel - 1),
                  ssm_elements=nv // tp * dk * dv, ssm_dtype=ssm_dtype,
                  params=ParamCount(embedding=embedding, layers=body))


def _nemotron_h(model: ModelFacts, tp: int) -> Optional[Layout]:
    cfg = model.text_config
    pattern = cfg.get("hybrid_override_pattern")
    heads, head_dim, state = _int(cfg, "mamba_num_heads"), _int(cfg, "mamba_head_dim"), _int(cfg, "ssm_state_size")
    kernel, hidden = _int(cfg, "conv_kernel"), model.hidden_size
    groups = _int(cfg, "n_groups") or 1
    if not isinstance(pattern, str) or not all((heads, head_dim, state, kernel, hidden)):
        return None
    embedding = _embedding(cfg, hidden)
    if embedding is None:
        return None
    inner = heads * head_dim
    shards = groups + (0 if groups % tp == 0 else tp - groups)   # MambaStateShapeCalculator.extra_groups_for_head_shards
    mamba = hidden * (2 * inner + 2 * groups * state + heads) + inner * hidden
    kinds = {"M": mamba, "*": _attention_params(model), "-": _mlp_params(cfg, hidden, gated=2),
             "E": _mlp_params(cfg, hidden, gated=2)}
    body = sum(kinds.get(kind, 0) for kind in pattern)
    ssm_dtype = cfg.get("mamba_ssm_cache_dtype")
    return Layout("mamba2", pattern.count("M"), pattern.count("*"),
                  conv_elements=(inner + 2 * shards * state) // tp * (kernel - 1),
                  ssm_elements=heads // tp * head_dim * state,
                  ssm_dtype=ssm_dtype if isinstance(ssm_dtype, str) else NEMOTRON_H_SSM_DTYPE,
                  params=ParamCount(embedding=embedding, layers=body))


def layout(model: ModelFacts, tp: int = 1) -> Optional[Layout]:
    """Return the hybrid layout of a Qwen3-Next / Qwen3.5 (gated delta net) or Nemotron-H model, else None."""
    for read in (_gated_delta_net, _nemotron_h):
        found = read(model, max(tp, 1))
        if found is not None:
            return found
    return None


def estimate(model: ModelFacts, found: Layout, *, memory_gib: float, utilization: float, tp: int,
             dtype: Optional[str], quantization: Optional[str], ssm_cache_dtype: Optional[str]) -> Optional[BlockEstimate]:
    """Return the blocks the pool holds at most, None when the weights' size is unknown."""
    mem, _ = memory.estimate(model, memory_gib=memory_gib, utilization=utilization, tp=tp, pp=1, block_size=16,
                             dtype=dtype, kv_cache_dtype=None, quantization=quantization, params=found.params)
    state_bytes = memory.dtype_bytes(model, dtype)
    if mem is None or state_bytes is None:
        return None
    if ssm_cache_dtype and ssm_cache_dtype != "auto":
        found = Layout(found.family, found.recurrent_layers, found.attention_layers, found.conv_elements,
                       found.ssm_elements, ssm_cache_dtype, found.params)
    return BlockEstimate(found, found.page_bytes(state_bytes), mem)


def full_decode_graphs(mode: Any) -> Optional[bool]:
    """Whether a stated `compilation_config.cudagraph_mode` captures FULL decode graphs (None: unreadable)."""
    if mode is None:
        return True
    text = str(mode).strip().upper()
    if text in FULL_MODES:
        return True
    if text in ("NONE", "PIECEWISE"):
        return False
    return None


def message(seqs: int, blocks: int) -> str:
    return MESSAGE.format(seqs=seqs, blocks=blocks)


def layer_counts(found: Layout) -> List[str]:
    return [f"{found.recurrent_layers} {found.family} layers", f"{found.attention_layers} attention layers"]
