"""lint/vllm/value_ranges.py: bounds and choices vLLM's config classes put on a flag's value."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm.value_ranges import problem

from handmade import as_read


def judged(version, dest, value, *args):
    facts = facts_for_version(version)
    cfg = as_read(load_text("model: /models/m\nargs:\n" + "".join(f"  {a}\n" for a in args or ("seed: 0",))))
    return problem(cfg, facts, dest, value, facts.value_ranges[dest])


def test_a_guard_bound_holds_up_to_its_limit_and_words_vllms_message():
    assert judged("0.8.5", "gpu_memory_utilization", 1.0) is None
    found = judged("0.8.5", "gpu_memory_utilization", 1.01)
    assert found.what == "(1.01) must be less than or equal to 1.0"
    assert found.vllm_message == "GPU memory utilization must be less than 1.0. Got 1.01."
    assert found.accepted == "a value less than or equal to 1.0"


def test_a_pydantic_bound_is_exclusive_where_the_field_says_gt():
    assert judged("0.33.0", "gpu_memory_utilization", 0.01) is None
    found = judged("0.33.0", "gpu_memory_utilization", 0)
    assert found.vllm_message == "Input should be greater than 0"
    assert found.accepted == "a value greater than 0 and less than or equal to 1"


def test_an_enum_field_takes_a_members_value_from_a_string_too():
    assert judged("0.33.0", "optimization_level", "3") is None
    assert judged("0.33.0", "optimization_level", 3) is None
    found = judged("0.33.0", "optimization_level", 4)
    assert found.vllm_message == "Input should be 0, 1, 2 or 3"
    assert judged("0.33.0", "optimization_level", True) is None    # pydantic's own bool check, not this one


def test_a_validator_choice_lists_the_copys_values():
    assert judged("0.33.0", "kv_cache_dtype", "fp8_e5m2") is None
    found = judged("0.33.0", "kv_cache_dtype", "fp9")
    assert found.what.startswith("'fp9' is not one of the") and "fp8_e5m2" in found.accepted


def test_the_resolved_bound_spares_minus_one_which_means_derive_it():
    assert judged("0.33.0", "max_model_len", -1) is None
    assert judged("0.33.0", "max_model_len", 1) is None
    found = judged("0.33.0", "max_model_len", 0)
    assert found.vllm_message == ("max_model_len must be a positive integer, got int: 0. "
                                  "Example: max_model_len=2048")


@pytest.mark.parametrize("threshold, refused", [(8192, False), (8193, True)])
def test_a_bound_against_another_setting_reads_that_setting(threshold, refused):
    found = judged("0.33.0", "long_prefill_token_threshold", threshold, "max-model-len: 8192")
    assert (found is not None) is refused
    if refused:
        assert found.vllm_message == ("long_prefill_token_threshold (8193) cannot be greater than the "
                                      "max_model_len (8192).")


def test_another_setting_vllm_cannot_predict_decides_nothing():
    # no max_model_len stated, and no config.json to derive it from
    assert judged("0.33.0", "long_prefill_token_threshold", 10 ** 9) is None
