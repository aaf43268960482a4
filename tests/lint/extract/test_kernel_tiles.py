"""extract/kernel_tiles.py on real trees: Marlin's constants, AWQ's fallback, the FP8 block checks."""

from __future__ import annotations

import pytest

from patchops.lint.extract.kernel_tiles import kernel_tile_facts
from patchops.lint.extract.source_tree import Source

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def tiles_of(vllm_site):
    memo = {}

    def get(version: str):
        if version not in memo:
            memo[version] = kernel_tile_facts(Source(vllm_site(version)))
        return memo[version]

    return get


def test_marlin_constants_and_messages_as_the_copy_holds_them(tiles_of):
    marlin = tiles_of("0.6.3.post1")["marlin"]
    assert (marlin["min_thread_n"], marlin["min_thread_k"], marlin["tile"]) == (64, 128, 16)
    assert marlin["k_message"].format(14784, 128) == (
        "Weight input_size_per_partition = 14784 is not divisible by min_thread_k = 128. Consider "
        "reducing tensor_parallel_size or running with --quantization gptq.")
    # 0.6's group message lacks the space 0.8 adds; 0.12+ words it in verify_group_size_divides_partition
    assert "group_size = {}.Consider" in marlin["group_message"]
    assert "group_size = {}. Consider" in tiles_of("0.8.5")["marlin"]["group_message"]


def test_awq_falls_back_from_marlin_from_0_7_3_only(tiles_of):
    assert "marlin_falls_back" not in tiles_of("0.6.3.post1")["awq"]
    assert tiles_of("0.8.5")["awq"]["marlin_falls_back"] is True
    assert tiles_of("0.33.0")["awq"]["marlin_falls_back"] is True   # auto_awq.py's AutoAWQConfig
    assert tiles_of("0.33.0")["awq"]["input_message"].startswith("The input size is not aligned")


def test_fp8_block_checks_absent_in_0_6_and_read_inline_or_from_the_helper(tiles_of):
    assert "fp8_block" not in tiles_of("0.6.3.post1")
    inline, helper = tiles_of("0.8.5")["fp8_block"], tiles_of("0.12.0")["fp8_block"]
    for fp8 in (inline, helper):
        assert fp8["linear_k_message"] == ("Weight input_size_per_partition = {} is not divisible by weight "
                                           "quantization block_k = {}.")
        assert fp8["moe_n_message"].startswith("The output_size of gate's and up's weight = {}")
    assert "merged_last_exempt" not in inline and helper["merged_last_exempt"] is True
    assert "merged_mismatch_allowed" not in helper
    assert tiles_of("0.33.0")["fp8_block"]["merged_mismatch_allowed"] is True
    assert "moe_refined" not in tiles_of("0.25.0")["fp8_block"]
    assert tiles_of("0.30.0")["fp8_block"]["moe_refined"] is True


def test_gptq_plain_kernel_read_until_auto_gptq_chooses_kernels(tiles_of):
    assert tiles_of("0.8.5")["gptq"]["input_message"].startswith("The input size is not aligned")
    assert "gptq" not in tiles_of("0.33.0")
