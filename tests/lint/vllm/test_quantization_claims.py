"""lint/vllm/quantization_claims.py: which override of `_verify_quantization` claims a checkpoint."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.vllm import quantization_claims

from handmade import as_read

GPTQ = {"quant_method": "gptq", "bits": 4, "sym": True, "group_size": 128, "desc_act": False}


def config(checkpoint=GPTQ, cc="8.0", platform="cuda", args=""):
    hardware = f"hardware: {{platform: {platform}" + (f", compute_capability: '{cc}'" if cc else "") + "}\n"
    cfg = load_text(f"model: /models/m\nargs:\n  {args or 'seed: 0'}\n{hardware}")
    return as_read(cfg, model_facts_from_dict({"model_type": "llama", "quantization_config": checkpoint}))


def claims(version, **kw):
    return quantization_claims.claiming_override(config(**kw), facts_for_version(version))


def test_the_checkpoints_quantization_config():
    assert quantization_claims.checkpoint_quantization(config()) == GPTQ
    assert quantization_claims.checkpoint_quantization(config(checkpoint="gptq")) == {}
    cfg = dataclasses.replace(config(), model_facts=None)
    assert quantization_claims.checkpoint_quantization(cfg) == {}
    assert quantization_claims.claiming_override(cfg, facts_for_version("0.8.5")) is None


@pytest.mark.parametrize("version", ["0.8.5", "0.10.1.1"])
def test_gptq_marlin_claims_4_bit_gptq_from_compute_capability_8_0(version):
    assert claims(version) == "gptq_marlin"


def test_below_8_0_the_next_override_decides_by_its_own_minimum():
    # gptq_bitblas converts the same checkpoints; its get_min_capability() is 70 in 0.8.5, 80 in 0.10.1.1
    assert claims("0.8.5", cc="7.5") == "gptq_bitblas"
    assert claims("0.8.5", cc="6.1") is None
    assert claims("0.10.1.1", cc="7.5") is None      # ipex next: an override this reading cannot follow


def test_bits_and_group_sizes_the_conversion_does_not_take():
    assert claims("0.8.5", checkpoint=dict(GPTQ, bits=3)) is None
    assert claims("0.8.5", checkpoint=dict(GPTQ, sym=False)) is None
    assert claims("0.8.5", checkpoint=dict(GPTQ, group_size=256)) is None


def test_a_serialized_format_is_claimed_by_the_first_ranked_override():
    assert claims("0.8.5", checkpoint=dict(GPTQ, is_marlin_format=True)) == "marlin"
    assert claims("0.8.5", checkpoint=dict(GPTQ, checkpoint_format="marlin_24")) == "gptq_marlin_24"


def test_an_override_this_reading_cannot_follow_ends_the_prediction():
    # 0.33: auto_gptq ranks first and is not read, so inc's claim on auto-round is never reached
    assert claims("0.33.0", checkpoint={"quant_method": "auto-round", "bits": 4, "group_size": 128}) is None
    # awq_marlin converts AWQ, but which bits it takes is not read
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
    assert claims("0.8.5", checkpoint=awq) is None


def test_a_conversion_for_another_quant_method_does_not_claim():
    assert claims("0.8.5", checkpoint=dict(GPTQ, quant_method="awq"), args="quantization: gptq_marlin") is None


def test_a_missing_key_stops_that_override():
    checkpoint = {k: v for k, v in GPTQ.items() if k != "desc_act"}
    # gptq_marlin and gptq_bitblas need desc_act; awq_marlin needs zero_point; ipex is not followed
    assert claims("0.8.5", checkpoint=checkpoint) is None


def test_a_stated_quantization_follows_only_that_override():
    assert claims("0.8.5", args="quantization: gptq_marlin") == "gptq_marlin"
    assert claims("0.8.5", args="quantization: gptq_bitblas") == "gptq_bitblas"
    assert claims("0.8.5", args="quantization: gptq") is None


def test_no_gpu_facts_no_claim():
    assert claims("0.8.5", cc=None) is None
    assert claims("0.8.5", platform="tpu") is None
