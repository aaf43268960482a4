"""PO813 and PO808 where vLLM does not look at `--quantization`: overrides and online methods (0.3x)."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.rule import Example
from patchops.lint.runner import lint_example

GPT_OSS = {"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"], "num_attention_heads": 64,
           "num_key_value_heads": 8, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
           "quantization_config": {"quant_method": "mxfp4"}}
PLAIN = {"model_type": "qwen2", "num_attention_heads": 28, "max_position_embeddings": 32768,
         "torch_dtype": "bfloat16"}
A100 = "hardware: {gpus: 1, compute_capability: 8.0, memory_gib: 80}\n"
T4 = "hardware: {gpus: 1, compute_capability: 7.5, memory_gib: 16}\n"


def codes(model: dict, hardware: str, quantization: str, vllm: str):
    text = f"model: org/m\n{hardware}args:\n  quantization: {quantization}\n"
    return [d.code for d in lint_example(Example(text, vllm=vllm, model=model)) if d.severity == "error"]


@pytest.mark.parametrize("vllm, refused", [("0.33.0", False), ("0.32.0", False), ("0.10.1.1", True)])
def test_a_gpt_oss_mxfp4_checkpoint_takes_over_any_quantization(vllm, refused):
    assert ("PO813" in codes(GPT_OSS, A100, "awq", vllm)) is refused


def test_a_taken_over_checkpoint_never_has_its_quantization_name_looked_up():
    assert "PO808" not in codes(GPT_OSS, A100, "bitsandbytes", "0.33.0")
    assert "PO808" in codes(PLAIN, A100, "bitsandbytes", "0.33.0")     # removed in 0.33


@pytest.mark.parametrize("vllm, refused", [("0.33.0", False), ("0.10.1.1", True)])
def test_an_online_method_on_an_unquantized_checkpoint_is_not_held_to_the_checkpoint_limits(vllm, refused):
    assert ("PO813" in codes(PLAIN, T4, "mxfp4", vllm)) is refused


def test_the_facts_say_which_overrides_take_over_and_which_names_are_online():
    new, old = facts_for_version("0.33.0").quantization_limits, facts_for_version("0.10.1.1").quantization_limits
    assert "mxfp4" in new["gpt_oss_mxfp4"].takes_over and new["mxfp4"].online is True
    assert not any("mxfp4" in (e.takes_over or ()) or e.online for e in old.values())
    assert facts_for_version("0.8.5").quantization_limits["ipex"].takes_over is None  # asks the platform


def test_online_names_are_no_variants_a_checkpoint_may_move_to():
    fp8 = {**PLAIN, "quantization_config": {"quant_method": "fp8"}}
    v100 = "hardware: {gpus: 1, compute_capability: 7.0, memory_gib: 32}\n"
    text = f"model: org/m\n{v100}args:\n  dtype: half\n"
    assert [d.code for d in lint_example(Example(text, vllm="0.33.0", model=fp8)) if d.code == "PO813"] == ["PO813"]
