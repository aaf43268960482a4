"""lint/vllm/quantized_shapes.py: each layer's shard as vLLM splits it, each kernel's boundary."""

from __future__ import annotations

import json
from dataclasses import replace

from patchops.lint.facts.groups import KernelTiles
from patchops.lint.vllm.quantized_shapes import breach, quant_config, shards, working_sizes

K_MSG = "Weight input_size_per_partition = {} is not divisible by min_thread_k = {}."
RAW_TILES = {
    "marlin": {"min_thread_n": 64, "min_thread_k": 128, "n_message": "n {} {}", "k_message": K_MSG,
               "group_message": "g {} {}"},
    "awq": {"input_message": "The input size is not aligned", "output_message": "The output size is not aligned",
            "marlin_falls_back": True},
    "gptq": {"input_message": "The input size is not aligned", "output_message": "out"},
    "fp8_block": {"linear_k_message": "k {} {}", "linear_n_message": "n {} {}", "merged_last_exempt": True,
                  "moe_k_message": "moe k {} {}", "moe_n_message": "moe n {} {}"},
}
TILES = KernelTiles.from_dict(RAW_TILES)
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
FP8 = {"quant_method": "fp8", "weight_block_size": [128, 128]}
DENSE = {"hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 29568}
MOE = {"hidden_size": 4096, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
       "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_experts": 128}


def _layers(config, tp, **kw):
    return {s.layer: s for s in shards(config, tp, **kw)}


def test_column_layers_split_outputs_row_layers_inputs():
    got = _layers(DENSE, 8)
    assert got["qkv_proj"].parts == (8 * 128, 128, 128) and got["qkv_proj"].part_in == 8192
    assert got["o_proj"].part_in == 1024 and got["down_proj"].part_in == 3696
    assert got["gate_up_proj"].parts == (3696, 3696)
    # fewer KV heads than ranks: each rank holds one copy
    assert _layers(MOE, 8)["qkv_proj"].parts == (1024, 128, 128)


def test_moe_experts_split_unless_expert_parallel_and_no_dense_mlp():
    assert "down_proj" not in _layers(MOE, 8)
    assert _layers(MOE, 8)["experts"].part_in == 192
    assert _layers(MOE, 8, expert_parallel=True)["experts"].part_in == 1536
    deepseek = dict(MOE, kv_lora_rank=512, first_k_dense_replace=3, n_shared_experts=1)
    got = _layers(deepseek, 8)
    assert "qkv_proj" not in got and got["down_proj"].part_in == 12288 // 8
    assert got["shared_experts.down_proj"].part_in == 1536 // 8


def test_heads_not_divisible_split_nothing():
    assert shards(DENSE, 3) == []


def test_awq_group_size_boundary_with_fallback():
    found = breach(DENSE, AWQ, 8, TILES).value   # 3696 % 128 == 112
    assert (found.shard.layer, found.size, found.tile, found.kernel) == ("down_proj", 3696, 128, "AWQ group size")
    assert found.message == "The input size is not aligned"
    padded = dict(DENSE, intermediate_size=29696)   # 3712 == 29 * 128
    assert breach(padded, AWQ, 8, TILES).value is None
    # group 64 divides 3696 / 2 ... while Marlin's min_thread_k would not: the fallback takes it
    assert breach(dict(DENSE, intermediate_size=29184), dict(AWQ, group_size=64), 8, TILES).value is None


def test_awq_without_fallback_meets_marlin_min_thread_k():
    tiles = replace(TILES, awq=replace(TILES.awq, marlin_falls_back=None))
    config, quant = dict(DENSE, intermediate_size=29184), dict(AWQ, group_size=64)   # 3648 = 57 * 64
    found = breach(config, quant, 8, tiles).value
    assert found.kernel == "Marlin k tile" and found.message == K_MSG.format(3648, 128)
    assert breach(config, quant, 8, tiles, capability=75).value is None   # below Marlin: plain AWQ
    assert breach(config, quant, 8, tiles, stated="awq").value is None
    assert breach(config, quant, 4, tiles).value is None                  # 7296 = 57 * 128


def test_fp8_experts_block_n_and_expert_parallel():
    found = breach(MOE, FP8, 8, TILES).value
    assert (found.shard.layer, found.size, found.message) == ("experts", 192, "moe n 192 128")
    assert breach(MOE, FP8, 4, TILES).value is None                       # 384 = 3 * 128
    assert breach(MOE, FP8, 8, TILES, expert_parallel=True).value is None
    refined = replace(TILES, fp8_block=replace(TILES.fp8_block, moe_refined=True))
    assert breach(MOE, FP8, 8, refined).value is None


def test_fp8_row_layer_block_k_and_merged_mismatch_allowed():
    config = dict(DENSE, intermediate_size=28672 + 1536)   # 30208 / 8 = 3776 = 29.5 * 128
    found = breach(config, FP8, 8, TILES).value
    assert (found.shard.layer, found.message) == ("gate_up_proj", "n 3776 128")
    allowed = replace(TILES, fp8_block=replace(TILES.fp8_block, merged_mismatch_allowed=True))
    found = breach(config, FP8, 8, allowed).value
    assert (found.shard.layer, found.message) == ("down_proj", "k 3776 128")
    assert breach(dict(DENSE, intermediate_size=28672), FP8, 8, TILES).value is None


def test_gptq_judged_only_on_the_plain_kernel():
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128}
    assert breach(DENSE, gptq, 8, TILES).value is None
    assert breach(DENSE, gptq, 8, TILES, stated="gptq").value.kernel == "GPTQ group size"


def test_working_sizes_and_quantize_config_beside(tmp_path):
    assert working_sizes(MOE, FP8, TILES, 8) == [1, 2, 4]
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "quantize_config.json").write_text(json.dumps({"bits": 4, "group_size": 128}))
    assert quant_config({}, str(tmp_path / "config.json"))["group_size"] == 128
    assert quant_config({"quantization_config": AWQ}, str(tmp_path / "config.json")) is AWQ
    # a multimodal config.json: quantization_config beside text_config, not in it
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {}, "quantization_config": AWQ}))
    assert quant_config({}, str(tmp_path / "config.json")) == AWQ


def test_another_method_stated_is_left_to_the_config_check():
    assert breach(DENSE, AWQ, 8, TILES, stated="gptq").value is None
    assert breach(DENSE, AWQ, 8, TILES, stated="awq_marlin").value is not None
