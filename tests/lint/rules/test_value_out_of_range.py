"""PO111's fix names the values vLLM takes, not "use a value vLLM accepts": the fix must be actionable."""

from __future__ import annotations

from tests.lint.lintkit import linter

lint = linter("PO111", kind="command")


def test_a_range_gives_both_of_its_bounds():
    [found] = lint("vllm serve m --gpu-memory-utilization 0\n", vllm="0.33.0")
    assert found.message == "gpu_memory_utilization (0.0) must be greater than 0"
    assert found.fix == "use a value greater than 0 and less than or equal to 1"


def test_a_bound_on_another_setting_names_its_value():
    [found] = lint("vllm serve m --max-model-len 8192 --long-prefill-token-threshold 8193\n", vllm="0.33.0")
    assert found.fix == "use a value of at most max_model_len (8192)"


def test_choices_are_listed():
    [found] = lint("vllm serve m --kv-cache-dtype fp9\n", vllm="0.33.0")
    assert found.fix.startswith("use one of auto, float16, bfloat16, fp8")
