"""PO625 mamba-blocks-below-max-seqs."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import cuda_graphs, inputs, mamba_cache, memory, messages, routing, scheduler

# Qwen/Qwen3.5-27B's config.json (text_config): 48 gated delta net layers and 16 attention
# layers, the SSM state in float32 (mamba_ssm_dtype).
QWEN35_27B = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
    "text_config": {
        "model_type": "qwen3_5_text", "hidden_size": 5120, "intermediate_size": 17408,
        "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_value_head_dim": 128,
        "mamba_ssm_dtype": "float32", "max_position_embeddings": 262144, "vocab_size": 248320,
        "tie_word_embeddings": False, "dtype": "bfloat16"},
    "tie_word_embeddings": False}
V = "0.20.0"
SPEC_80G = "model: Qwen/Qwen3.5-27B\nhardware: {memory_gib: 80, name: H100}\nargs:\n  max-model-len: 32768\n"


class MambaBlocksBelowMaxSeqs(Rule):
    """
    ## What it does
    For a hybrid model (gated delta net layers of Qwen3-Next and Qwen3.5, Mamba2 layers of
    Nemotron-H) on vLLM 0.20+, estimates the Mamba cache blocks of each GPU and flags a
    `max_num_seqs` (set, or the default for the stated GPU) above them, unless the launch runs
    without FULL decode CUDA graphs (`enforce_eager`, `cudagraph_mode` NONE or PIECEWISE).
    The blocks are `num_gpu_blocks_override` when set; else the KV cache memory of PO622's
    estimate (`hardware.memory_gib` x `gpu_memory_utilization` minus the weights, counted per
    layer kind from config.json) divided by one recurrent layer's state (conv plus SSM, per
    GPU after tensor parallelism, the SSM in `mamba_ssm_cache_dtype` or the model's
    float32 default) and by the layers per KV cache group. Activations, CUDA graphs, padding
    of the page to the attention block and an MTP head are left out, so the real blocks are
    fewer still.

    ## Why is this bad?
    vLLM loads the weights, profiles the memory and only then refuses to start: "max_num_seqs
    (1024) exceeds available Mamba cache blocks (969). Each decode sequence requires one Mamba
    cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 969
    or increase gpu_memory_utilization." Each decode sequence holds one block of every
    recurrent layer, and vLLM's default of 1024 sequences on 70+ GiB GPUs is above the pool
    at a long context. 0.19 silently capped the CUDA graph sizes instead, and earlier
    releases failed in graph capture (`assert num_cache_lines >= batch`): not judged here.

    ## Fix
    Lower max-num-seqs to the blocks the finding gives (or fewer), raise
    gpu-memory-utilization, or spread the model over more GPUs with tensor parallelism.
    """

    code = "PO625"
    name = "mamba-blocks-below-max-seqs"
    severity = "error"
    versions = ">=0.20"
    vllm_message = messages.MAMBA_BLOCKS_BELOW_MAX_SEQS
    stage = "later"      # raised by the worker after the KV cache is sized (initialize_kv_cache)
    needs = Needs(model=True, hardware=("memory_gib",),
                  optional=("hardware.compute_capability", "hardware.name", "hardware.platform"))
    # 80 GiB x 0.9 = 72 GiB - 49.16 GiB of weights (26.39B in bf16) = 22.84 GiB, over pages of 3.06 MiB
    # (3 MiB of float32 SSM state, 60 KiB of conv state) x 16 layers per group: 478 blocks.
    VALID = [
        Example(SPEC_80G + "  max-num-seqs: 478\n", vllm=V, model=QWEN35_27B),
        Example(SPEC_80G + "  enforce-eager: true\n", vllm=V, model=QWEN35_27B),
        # TP 2 halves the weights and the state per GPU: 4 x the blocks
        Example(SPEC_80G + "  tensor-parallel-size: 2\n", vllm=V, model=QWEN35_27B),
        Example(SPEC_80G + "  max-num-seqs: 64\n  num-gpu-blocks-override: 64\n", vllm=V, model=QWEN35_27B),
    ]
    INVALID = [
        Example(SPEC_80G + "  max-num-seqs: 479\n", vllm=V, model=QWEN35_27B, at=(5, 3)),
        # the default for an 80 GiB H100 is 1024 sequences
        Example(SPEC_80G, vllm=V, model=QWEN35_27B, at=(1, 1)),
        Example(SPEC_80G + "  max-num-seqs: 128\n  num-gpu-blocks-override: 100\n", vllm=V, model=QWEN35_27B,
                at=(5, 3)),
    ]

    def concerns(self, cfg: ReadConfig) -> bool:
        return mamba_cache.layout(cfg.model_facts) is not None

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        memory_gib = inputs.memory_gib(cfg)
        if model is None or not memory_gib or inputs.is_pooling(cfg):
            return
        tp = max(inputs.int_value(cfg, "tensor_parallel_size") or 1, 1)
        pp = max(inputs.int_value(cfg, "pipeline_parallel_size") or 1, 1)
        found = mamba_cache.layout(model, tp)
        if found is None or pp > 1:
            return
        if cuda_graphs.effective_eager(cfg, facts).value:
            return
        mode, _ = inputs.compilation_value(cfg, "cudagraph_mode")
        if not mamba_cache.full_decode_graphs(mode):
            return
        eng = routing.engine(cfg, facts)
        if eng.error:
            return
        seqs = scheduler.max_num_seqs(cfg, facts, eng)
        if not isinstance(seqs.value, int):
            return
        override = inputs.int_value(cfg, "num_gpu_blocks_override")
        if override is not None:
            blocks, how = override, f"num_gpu_blocks_override sets {override} blocks"
        else:
            est = mamba_cache.estimate(
                model, found, memory_gib=memory_gib, utilization=inputs.to_float(inputs.value(cfg, "gpu_memory_utilization"), 0.9),
                tp=tp, dtype=inputs.to_text(inputs.value(cfg, "dtype")), quantization=inputs.to_text(inputs.value(cfg, "quantization")),
                ssm_cache_dtype=inputs.to_text(inputs.value(cfg, "mamba_ssm_cache_dtype")))
            if est is None:
                return
            blocks, how = est.blocks, _arithmetic(est, memory_gib, tp)
        failing = [s for s in seqs.candidates if isinstance(s, int) and s > blocks]
        if not failing:
            return
        count = failing[0]
        certain = len(failing) == len(seqs.candidates)
        at = inputs.setting(cfg, "max_num_seqs") or cfg.model
        origin = "max_num_seqs" if inputs.setting(cfg, "max_num_seqs") is not None else \
            f"max_num_seqs (default: {seqs.reason})"
        yield self.diagnostic(
            cfg, at, f"max_num_seqs {count} > {blocks} Mamba cache blocks of {found.family} layers",
            explanation=f"{origin}; each decode sequence needs one block; {how}; vLLM {facts.version} will load "
            "the model and then refuse to capture CUDA graphs" + ("" if certain else " (if the default is this)"),
            severity=None if certain else "warning",
            fields=("max_num_seqs", "hardware.memory_gib") + tuple(seqs.fields),
            fix=f"set max-num-seqs to {blocks} or less, raise gpu-memory-utilization, or raise tensor-parallel-size",
            vllm_message=mamba_cache.message(count, blocks))


def _arithmetic(est: mamba_cache.BlockEstimate, memory_gib: float, tp: int) -> str:
    """Say how the blocks were counted, every number with its origin."""
    mem, found = est.memory, est.layout
    util = mem.budget_bytes / (memory_gib * memory.GIB)
    return (f"each GPU has at most {memory.gib(max(mem.kv_bytes, 0))} GiB for the cache ({memory_gib:g} GiB x "
            f"gpu_memory_utilization {util:g} minus {memory.gib(mem.weight_bytes)} GiB of weights: "
            f"{mem.params.total / 1e9:.2f}B parameters / TP {tp}), and a block takes at least "
            f"{est.page_bytes} bytes ({found.family} state per layer) x {found.group_size} layers per group "
            f"({', '.join(mamba_cache.layer_counts(found))}): at most {est.blocks} blocks")
