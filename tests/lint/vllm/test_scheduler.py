"""lint/vllm/scheduler.py: the hardware tier, chunked prefill and batch budgets vLLM fills in."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import scheduler

H100 = "platform: cuda, compute_capability: '9.0', memory_gib: 80"


def config(*args, hardware=H100):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return load_text(f"model: /models/m\nargs:\n{body}hardware: {{{hardware}}}\n")


def tier(version, hardware):
    return scheduler.hardware_tier(config(hardware=hardware), facts_for_version(version)).value


@pytest.mark.parametrize("memory, expected", [(69, "small"), (70, "large")])
def test_from_0_8_the_tier_follows_device_memory(memory, expected):
    assert tier("0.8.5", f"platform: cuda, compute_capability: '9.0', memory_gib: {memory}") == expected


def test_0_7_keys_the_tier_on_the_device_name():
    assert tier("0.7.3", "name: NVIDIA H100 80GB HBM3, memory_gib: 80") == "large"
    assert tier("0.7.3", "name: NVIDIA L40S, memory_gib: 80") == "small"


@pytest.mark.parametrize("version, expected", [("0.8.5", "large"), ("0.9.2", "small")])
def test_an_a100_keeps_the_small_tier_from_0_9(version, expected):
    assert tier(version, "name: NVIDIA A100-SXM4-80GB, compute_capability: '8.0', memory_gib: 80") == expected


@pytest.mark.parametrize("version, memory, expected", [("0.25.0", 160, "large"), ("0.30.0", 159, "large"),
                                                       ("0.30.0", 160, "huge")])
def test_a_huge_tier_from_0_30_at_160_gib(version, memory, expected):
    assert tier(version, f"platform: cuda, compute_capability: '9.0', memory_gib: {memory}") == expected


def test_tiers_set_the_unset_budgets_and_a_stated_value_wins():
    facts = facts_for_version("0.33.0")
    assert scheduler.max_num_batched_tokens(config(), facts).value == 8192
    assert scheduler.max_num_seqs(config(), facts).value == 1024
    small = config(hardware="platform: cuda, compute_capability: '8.9', memory_gib: 48")
    assert (scheduler.max_num_batched_tokens(small, facts).value, scheduler.max_num_seqs(small, facts).value) == \
        (2048, 256)
    assert scheduler.max_num_seqs(config("max-num-seqs: 8"), facts).value == 8


@pytest.mark.parametrize("length, on", [(32768, False), (32769, True)])
def test_v0_turns_chunked_prefill_on_above_32k(length, on):
    found = scheduler.chunked_prefill(config(f"max-model-len: {length}"), facts_for_version("0.6.3.post1"))
    assert found.value is on


def test_v0_chunked_budget_is_512_until_0_7_then_2048():
    long = config("max-model-len: 40000")
    assert scheduler.max_num_batched_tokens(long, facts_for_version("0.6.3.post1")).value == 512
    assert scheduler.max_num_batched_tokens(long, facts_for_version("0.7.3")).value == 2048


@pytest.mark.parametrize("version, on", [("0.11.0", True), ("0.12.0", False)])
def test_v1_honours_chunked_prefill_off_from_0_12(version, on):
    assert scheduler.chunked_prefill(config("enable-chunked-prefill: false"), facts_for_version(version)).value is on


def test_cpu_and_tpu_platforms_set_their_own_defaults():
    cpu = config("tensor-parallel-size: 2", hardware="platform: cpu")
    assert scheduler.platform_defaults(cpu, facts_for_version("0.8.5"))[:2] == (None, None)
    assert scheduler.platform_defaults(cpu, facts_for_version("0.9.2"))[:2] == (2048, 32)
    assert scheduler.platform_defaults(cpu, facts_for_version("0.10.1.1"))[:2] == (4096, 256)
    tpu = config(hardware="platform: tpu, name: TPU v6e")
    assert scheduler.platform_defaults(tpu, facts_for_version("0.9.2"))[:2] == (1024, None)
