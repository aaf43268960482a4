"""lint/vllm/scheduler.py: the hardware tier, chunked prefill and batch budgets vLLM fills in."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import scheduler

from handmade import H100_CTX, L40S_CTX, as_read, hand_config, hand_facts

H100 = "platform: cuda, compute_capability: '9.0', memory_gib: 80"


def config(*args, hardware=H100):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return as_read(load_text(f"model: /models/m\nargs:\n{body}hardware: {{{hardware}}}\n"))


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


# Hardware tiers and scheduler defaults of hand-built configs.


@pytest.mark.parametrize("version,ctx,tier,certain", [
    ("0.8.5", H100_CTX, "large", True),
    ("0.8.5", {"hardware.memory_gib": 80, "hardware.compute_capability": 8.0}, "large", True),
    ("0.9.2", {"hardware.memory_gib": 80, "hardware.compute_capability": 8.0}, "small", False),
    ("0.9.2", {"hardware.memory_gib": 80, "hardware.name": "NVIDIA A100-SXM4-80GB"}, "small", True),
    ("0.9.2", {"hardware.memory_gib": 80, "hardware.name": "NVIDIA A800-SXM4-80GB"}, "large", True),
    ("0.11.0", H100_CTX, "large", True),
    ("0.11.0", L40S_CTX, "small", True),
    ("0.11.0", {}, "small", False),
    ("0.7.3", {"hardware.name": "NVIDIA H100_CTX 80GB HBM3"}, "large", True),
    ("0.7.3", L40S_CTX, "small", True),
    ("0.33.0", {"hardware.memory_gib": 180, "hardware.compute_capability": 10.0}, "huge", True),
    ("0.12.0", {"hardware.memory_gib": 180, "hardware.compute_capability": 10.0}, "large", True),
    # the 70 GiB and 160 GiB boundaries, from both sides
    ("0.8.5", {"hardware.memory_gib": 70, "hardware.compute_capability": 9.0}, "large", True),
    ("0.8.5", {"hardware.memory_gib": 69.9, "hardware.compute_capability": 9.0}, "small", True),
    ("0.11.0", {"hardware.memory_gib": 70, "hardware.compute_capability": 9.0}, "large", True),
    ("0.11.0", {"hardware.memory_gib": 69.9, "hardware.compute_capability": 9.0}, "small", True),
    ("0.33.0", {"hardware.memory_gib": 160, "hardware.compute_capability": 10.0}, "huge", True),
    ("0.33.0", {"hardware.memory_gib": 159.9, "hardware.compute_capability": 10.0}, "large", True),
])
def test_hardware_tier(version, ctx, tier, certain):
    got = scheduler.hardware_tier(hand_config(ctx=ctx), hand_facts(version))
    assert (got.value, got.certain) == (tier, certain)
    if not certain:
        assert got.alternatives == ("large",)


def test_chunked_prefill_v0_rules():
    f = hand_facts("0.6.3.post1")
    assert scheduler.chunked_prefill(hand_config(args={"enable_chunked_prefill": False, "max_model_len": 100000}), f).value is False
    auto = scheduler.chunked_prefill(hand_config(args={"max_model_len": 100000}), f)
    assert auto.value is True and not auto.certain and auto.alternatives == (False,)
    assert "32768" in auto.reason
    short = scheduler.chunked_prefill(hand_config(args={"max_model_len": 4096}), f)
    assert short.value is False and short.certain
    unknown = scheduler.chunked_prefill(hand_config(), f)
    assert unknown.value is False and unknown.alternatives == (True,)
    lora = scheduler.chunked_prefill(hand_config(args={"max_model_len": 100000, "enable_lora": True}), f)
    assert lora.value is False and lora.certain and "LoRA" in lora.reason
    rocm = hand_config(args={"max_model_len": 100000}, ctx={"hardware.platform": "rocm"})
    assert scheduler.chunked_prefill(rocm, hand_facts("0.7.3")).value is False
    assert scheduler.chunked_prefill(rocm, f).value is True


def test_chunked_prefill_v1_and_0_12():
    off = hand_config(args={"enable_chunked_prefill": False, "max_model_len": 4096})
    forced = scheduler.chunked_prefill(off, hand_facts("0.8.5"))
    assert forced.value is True and forced.certain and "ignoring" in forced.reason
    assert scheduler.chunked_prefill(off, hand_facts("0.12.0")).value is False
    assert scheduler.chunked_prefill(hand_config(), hand_facts("0.12.0")).value is True
    # multi-step sends 0.8.5 to V0, where false is honoured again
    steps = hand_config(args={"enable_chunked_prefill": False, "num_scheduler_steps": 8})
    assert scheduler.chunked_prefill(steps, hand_facts("0.8.5")).value is False


def test_chunked_prefill_fork_literal_default():
    got = scheduler.chunked_prefill(hand_config(args={"max_model_len": 100000}),
                             hand_facts("0.6.3.post1", field_defaults={"enable_chunked_prefill": False}))
    assert got.value is False and got.certain


@pytest.mark.parametrize("version,args,expected", [
    ("0.6.3.post1", {"enable_chunked_prefill": True, "max_model_len": 4096}, 512),
    ("0.7.3", {"enable_chunked_prefill": True, "max_model_len": 4096}, 2048),
    ("0.6.3.post1", {"enable_chunked_prefill": False, "max_model_len": 4096}, 4096),
    ("0.6.3.post1", {"enable_chunked_prefill": False, "max_model_len": 1024}, 2048),
    ("0.6.3.post1", {"enable_chunked_prefill": True, "num_scheduler_steps": 8, "max_model_len": 65536}, 65536),
    ("0.6.3.post1", {"max_num_batched_tokens": "16k"}, 16000),
])
def test_max_num_batched_tokens_v0(version, args, expected):
    got = scheduler.max_num_batched_tokens(hand_config(args=args), hand_facts(version))
    assert got.value == expected and got.certain


def test_max_num_batched_tokens_v1_tiers():
    assert scheduler.max_num_batched_tokens(hand_config(ctx=H100_CTX), hand_facts("0.8.5")).value == 8192
    assert scheduler.max_num_batched_tokens(hand_config(ctx=L40S_CTX), hand_facts("0.10.2")).value == 2048
    unknown = scheduler.max_num_batched_tokens(hand_config(), hand_facts("0.9.2"))
    assert (unknown.value, unknown.alternatives, unknown.certain) == (2048, (8192,), False)
    v0 = scheduler.max_num_batched_tokens(hand_config(ctx={"hardware.name": "H100_CTX"}), hand_facts("0.7.3"))
    assert v0.value is None and not v0.certain  # V0: max(max_model_len, 2048), length unknown
    v1 = hand_config(ctx={"hardware.name": "NVIDIA H100_CTX"}, env={"VLLM_USE_V1": 1})
    assert scheduler.max_num_batched_tokens(v1, hand_facts("0.7.3")).value == 8192
    big = {"hardware.memory_gib": 180, "hardware.compute_capability": 10.0}
    assert scheduler.max_num_batched_tokens(hand_config(ctx=big), hand_facts("0.33.0")).value == 16384


def test_max_num_batched_tokens_0_12_chunked_off_covers_model_len():
    cfg = hand_config(args={"enable_chunked_prefill": False, "max_model_len": 32768}, ctx=L40S_CTX)
    assert scheduler.max_num_batched_tokens(cfg, hand_facts("0.12.0")).value == 32768


@pytest.mark.parametrize("version,args,ctx,expected", [
    ("0.6.3.post1", {}, {}, 256),
    ("0.7.3", {}, {}, 256),
    ("0.8.5", {}, H100_CTX, 1024),
    ("0.8.5", {}, L40S_CTX, 256),
    ("0.10.0", {"max_num_batched_tokens": 512}, H100_CTX, 1024),
    ("0.10.1.1", {"max_num_batched_tokens": 512}, H100_CTX, 512),
    ("0.12.0", {"max_num_batched_tokens": 128}, L40S_CTX, 128),
    ("0.9.2", {"max_num_seqs": 48}, {}, 48),
])
def test_max_num_seqs(version, args, ctx, expected):
    assert scheduler.max_num_seqs(hand_config(args=args, ctx=ctx), hand_facts(version)).value == expected


def test_max_num_seqs_v1_opt_in_on_0_7_3():
    assert scheduler.max_num_seqs(hand_config(env={"VLLM_USE_V1": 1}), hand_facts("0.7.3")).value == 1024


@pytest.mark.parametrize("version,args,ctx,tokens,seqs", [
    # 0.8.5 has no platform tables (and sends a CPU launch to V0: PO306)
    ("0.9.2", {}, {"hardware.platform": "cpu"}, 2048, 32),
    ("0.10.0", {}, {"hardware.platform": "cpu"}, 2048, 128),
    ("0.10.0", {"tensor_parallel_size": 2, "pipeline_parallel_size": 2}, {"hardware.platform": "cpu"}, 8192, 512),
    # from 0.10.1 an unset max_num_seqs is capped at the budget
    ("0.11.0", {"tensor_parallel_size": 2}, {"hardware.platform": "cpu"}, 4096, 256),
    ("0.11.0", {"max_num_batched_tokens": 100}, {"hardware.platform": "cpu"}, 100, 100),
    ("0.9.2", {}, {"hardware.platform": "tpu", "hardware.name": "TPU v6e"}, 1024, 256),
    ("0.11.0", {}, {"hardware.platform": "tpu", "hardware.name": "v5p"}, 256, 256),
    ("0.11.0", {}, {"hardware.platform": "tpu", "hardware.name": "TPU V5E", "hardware.memory_gib": 16}, 512, 256),
    # a chip without its own table keeps the memory tier's value
    ("0.11.0", {}, {"hardware.platform": "tpu", "hardware.name": "TPU v4", "hardware.memory_gib": 32}, 2048, 256),
])
def test_platform_batch_defaults(version, args, ctx, tokens, seqs):
    cfg, f = hand_config(args=args, ctx=ctx), hand_facts(version)
    got_tokens, got_seqs = scheduler.max_num_batched_tokens(cfg, f), scheduler.max_num_seqs(cfg, f)
    assert (got_tokens.value, got_seqs.value) == (tokens, seqs)


def test_platform_batch_defaults_name_the_platform():
    got = scheduler.max_num_seqs(hand_config(args={"tensor_parallel_size": 2}, ctx={"hardware.platform": "cpu"}),
                                 hand_facts("0.10.0"))
    assert got.certain and "CPU platform, x world size 2" in got.reason and got.fields == ("hardware.platform",)
