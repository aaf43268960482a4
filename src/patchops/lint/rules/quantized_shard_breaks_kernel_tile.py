"""PO715 quantized-shard-breaks-kernel-tile."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, quantized_shapes

AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
# Qwen2.5-72B-Instruct's dimensions, AWQ-quantized as published (29568) and as Qwen pads them (29696).
QWEN_72B = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 8192,
            "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 80,
            "max_position_embeddings": 32768, "torch_dtype": "float16"}
QWEN_72B_AWQ = dict(QWEN_72B, intermediate_size=29568, quantization_config=AWQ)
QWEN_72B_AWQ_PADDED = dict(QWEN_72B, intermediate_size=29696, quantization_config=AWQ)
# Qwen3-235B-A22B-FP8: 128 experts of 1536, blocks of 128 x 128.
QWEN3_MOE_FP8 = {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 4096,
                 "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
                 "num_hidden_layers": 94, "intermediate_size": 12288, "moe_intermediate_size": 1536,
                 "num_experts": 128, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
                 "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
                                         "fmt": "e4m3", "weight_block_size": [128, 128]}}
TP = "model: {m}\nargs:\n  tensor-parallel-size: {tp}\n"


class QuantizedShardBreaksKernelTile(Rule):
    """
    ## What it does
    Flags a `tensor_parallel_size` that splits a quantized layer into per-GPU shards its kernel
    cannot take. vLLM splits column-parallel layers (qkv_proj, gate_up_proj) by their outputs,
    row-parallel ones (o_proj, down_proj) by their inputs and MoE experts by their intermediate
    size (not with `--enable-expert-parallel`); each kernel checks its shard as the copy says:
    FP8 block-quantized checkpoints (`weight_block_size` [128, 128]) against block_k and
    block_n, AWQ (auto-upgraded to Marlin) against Marlin's `min_thread_n`/`min_thread_k` (64,
    128) in 0.6, and from 0.7.3, where a layer Marlin cannot take falls back to the plain AWQ
    kernel, against the group size; GPTQ run with `--quantization gptq` against its group size.
    Not judged: GPTQ on Marlin, whose linear layers go to the first kernel (Machete, Marlin,
    Exllama, ...) that takes the shape on this GPU; AWQ experts; FP8 experts in releases that
    refine the MoE block grid to the shard (0.30+).

    ## Why is this bad?
    The worker refuses while it creates the weights, after the engine config is built: "The
    input size is not aligned with the quantized weight shape. This can be caused by too large
    tensor parallel size.", "Weight input_size_per_partition = 14784 is not divisible by
    min_thread_k = 128. Consider reducing tensor_parallel_size or running with --quantization
    gptq.", "The output_size of gate's and up's weight = 192 is not divisible by weight
    quantization block_n = 128.".

    ## Fix
    Use a tensor-parallel size whose shards fit (the finding lists them), spread the rest with
    pipeline parallelism, enable expert parallelism for MoE experts, or use a checkpoint
    padded for the size you need.
    """

    code = "PO715"
    name = "quantized-shard-breaks-kernel-tile"
    severity = "error"
    versions = ">=0.6"
    stage = "later"
    vllm_message = ("The input size is not aligned with the quantized weight shape. This can be caused by "
                    "too large tensor parallel size.")
    needs = Needs(model=True, optional=("hardware.compute_capability",))
    VALID = [
        Example(TP.format(m="Qwen/Qwen2.5-72B-Instruct-AWQ", tp=8), model=QWEN_72B_AWQ_PADDED),
        Example(TP.format(m="Qwen/Qwen3-235B-A22B-FP8", tp=4), vllm="0.10.1.1", model=QWEN3_MOE_FP8),
        Example(TP.format(m="Qwen/Qwen3-235B-A22B-FP8", tp=8) + "  enable-expert-parallel: true\n",
                vllm="0.10.1.1", model=QWEN3_MOE_FP8),
    ]
    INVALID = [
        Example(TP.format(m="Qwen/Qwen2.5-72B-Instruct-AWQ", tp=8), model=QWEN_72B_AWQ, at=(3, 3)),
        Example(TP.format(m="Qwen/Qwen2.5-72B-Instruct-AWQ", tp=2), vllm="0.6.3.post1", model=QWEN_72B_AWQ,
                at=(3, 3)),
        Example(TP.format(m="Qwen/Qwen3-235B-A22B-FP8", tp=8), vllm="0.10.1.1", model=QWEN3_MOE_FP8, at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        found = inputs.setting(cfg, "tensor_parallel_size")
        tp = inputs.to_int(found.value) if found is not None else None
        if model is None or tp is None or tp < 2 or not facts.kernel_tiles:
            return
        quant = quantized_shapes.quant_config(model.text_config, model.path)
        asked = inputs.setting(cfg, "quantization")
        cc = inputs.compute_capability(cfg)
        kwargs = dict(stated=str(asked.value).lower() if asked is not None and isinstance(asked.value, str)
                      else None, capability=cc[0] * 10 + cc[1] if cc is not None else None,
                      expert_parallel=bool(inputs.bool_value(cfg, "enable_expert_parallel")))
        breach = quantized_shapes.breach(model.text_config, quant, tp, facts.kernel_tiles, **kwargs).value
        if breach is None:
            return
        shard = breach.shard
        whole = shard.full_in if breach.side == "inputs" else breach.size * tp
        fits = [n for n in quantized_shapes.working_sizes(model.text_config, quant, facts.kernel_tiles,
                                                          max(tp * 2, 8), **kwargs) if n != 1]
        fits = [n for n in fits if n < tp][-2:] or fits[:2]   # the nearest below, else above
        fix = ("use tensor_parallel_size " + " or ".join(map(str, fits)) if fits else
               "use tensor_parallel_size 1 with pipeline parallelism, or a checkpoint padded for this size")
        if shard.parallel == "experts" and not kwargs["expert_parallel"]:
            fix += ", or --enable-expert-parallel"
        yield self.diagnostic(
            cfg, found, f"tensor_parallel_size {tp} leaves {shard.layer} {breach.size} {breach.side} per GPU, "
            f"not a multiple of {breach.kernel} {breach.tile}",
            explanation=f"{shard.parallel} parallel: {shard.layer}'s {whole} {breach.side} split {tp} ways; vLLM "
            f"{facts.version}'s worker refuses while it creates the weights",
            fields=("tensor_parallel_size",), fix=fix, vllm_message=breach.message)
