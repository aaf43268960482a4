"""PO715 quantized-shard-breaks-kernel-tile: what it says, on each release's own checks."""

from __future__ import annotations

import dataclasses

from patchops.lint.rule import Example
from patchops.lint.rules.quantized_shard_breaks_kernel_tile import (QWEN3_MOE_FP8, QWEN_72B_AWQ, TP,
                                                                    QuantizedShardBreaksKernelTile)
from patchops.lint.runner import lint_example


def _found(example: Example):
    return [d for d in lint_example(example) if d.code == QuantizedShardBreaksKernelTile.code]


def test_names_layer_shard_tile_and_tp_with_vllms_message():
    d, = _found(Example(TP.format(m="org/qwen-awq", tp=8), vllm="0.33.0", model=QWEN_72B_AWQ))
    assert d.message == ("tensor_parallel_size 8 leaves down_proj 3696 inputs per GPU, "
                         "not a multiple of AWQ group size 128")
    assert d.explanation.startswith("row parallel: down_proj's 29568 inputs split 8 ways")
    assert d.vllm_message.startswith("The input size is not aligned with the quantized weight shape")
    assert (d.line, d.column, d.severity) == (3, 3, "error")


def test_marlin_without_fallback_quotes_min_thread_k():
    d, = _found(Example(TP.format(m="org/qwen-awq", tp=2), vllm="0.6.3.post1", model=QWEN_72B_AWQ))
    assert d.vllm_message == ("Weight input_size_per_partition = 14784 is not divisible by min_thread_k = 128. "
                              "Consider reducing tensor_parallel_size or running with --quantization gptq.")


def test_fp8_experts_fix_suggests_sizes_that_fit_and_expert_parallel():
    d, = _found(Example(TP.format(m="org/qwen3-fp8", tp=8), vllm="0.12.0", model=QWEN3_MOE_FP8))
    assert d.message.startswith("tensor_parallel_size 8 leaves experts 192 outputs per GPU")
    assert d.fix == "use tensor_parallel_size 2 or 4, or --enable-expert-parallel"


def test_fp8_block_checks_absent_before_0_7_and_experts_refined_from_0_30():
    example = Example(TP.format(m="org/qwen3-fp8", tp=8), model=QWEN3_MOE_FP8)
    assert _found(dataclasses.replace(example, vllm="0.6.3.post1")) == []
    assert _found(dataclasses.replace(example, vllm="0.25.0")) != []
    assert _found(dataclasses.replace(example, vllm="0.30.0")) == []
    assert _found(dataclasses.replace(example, vllm="0.33.0")) == []
