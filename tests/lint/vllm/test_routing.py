"""lint/vllm/routing.py: which engine runs a config, the V1 oracle's fallbacks, and 0.12's refusals."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import prediction, routing

from handmade import H100_CTX, as_read, hand_config, hand_facts


def config(*args, env="", hardware="platform: cuda, compute_capability: '9.0'"):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return as_read(load_text(f"model: /models/m\nargs:\n{body}hardware: {{{hardware}}}\n" + (f"env: {{{env}}}\n" if env else "")))


def engine(version, *args, env=""):
    return routing.engine(config(*args, env=env), facts_for_version(version))


@pytest.mark.parametrize("version, plain, opted_in", [("0.6.3.post1", "V0", "V0"), ("0.7.3", "V0", "V1"),
                                                      ("0.8.5", "V1", "V1"), ("0.12.0", "V1", "V1")])
def test_the_default_engine_and_vllm_use_v1_by_release(version, plain, opted_in):
    assert engine(version).value == plain
    assert engine(version, env="VLLM_USE_V1: 1").value == opted_in


def test_v0_asked_for_after_v0_was_removed_crashes_the_server():
    kept = engine("0.10.1.1", env="VLLM_USE_V1: 0")
    gone = engine("0.11.0", env="VLLM_USE_V1: 0")
    assert (kept.value, kept.error) == ("V0", None)
    assert (gone.value, gone.error) == ("V0", routing.NO_V0_ERROR)
    assert engine("0.12.0", env="VLLM_USE_V1: 0").value == "V1"


def test_an_unsupported_feature_falls_back_unless_v1_is_forced():
    fallback = engine("0.8.5", "num-scheduler-steps: 8")
    assert (fallback.value, fallback.fields) == ("V0", ("num_scheduler_steps",))
    forced = engine("0.8.5", "num-scheduler-steps: 8", env="VLLM_USE_V1: 1")
    assert (forced.value, forced.error) == ("V1", "VLLM_USE_V1=1 is not supported with --num-scheduler-steps.")
    assert engine("0.10.1.1", "num-scheduler-steps: 8").value == "V1"           # the check is gone


def test_the_fallback_message_is_the_line_vllm_logs():
    [trigger] = routing.oracle_triggers(config("num-scheduler-steps: 8"), facts_for_version("0.8.5"))
    assert trigger.fallback_message == (
        "--num-scheduler-steps is not supported by the V1 Engine. Falling back to V0. We recommend to remove "
        "--num-scheduler-steps from your config in favor of the V1 Engine.")
    assert trigger.refused_message == ("--num-scheduler-steps is not supported. We recommend to remove "
                                       "--num-scheduler-steps from your config.")


def test_0_11_builds_a_v0_choice_with_v1_defaults():
    assert routing.config_engine(config(env="VLLM_USE_V1: 0"), facts_for_version("0.11.0")).value == "V1"
    assert routing.config_engine(config(env="VLLM_USE_V1: 0"), facts_for_version("0.10.1.1")).value == "V0"


def test_the_oracles_backend_list_by_release():
    assert routing.v1_oracle_backends("0.7.3") is None and routing.v1_oracle_backends("0.12.0") is None
    assert "FLASH_ATTN_VLLM_V1" in routing.v1_oracle_backends("0.8.5")
    assert "TORCH_SDPA_VLLM_V1" not in routing.v1_oracle_backends("0.8.5")
    assert "TORCH_SDPA_VLLM_V1" in routing.v1_oracle_backends("0.9.2")
    assert "ROCM_ATTN" in routing.v1_oracle_backends("0.11.0")
    assert "FLASH_ATTN_VLLM_V1" not in routing.v1_oracle_backends("0.11.0")


def test_from_0_12_the_surviving_checks_refuse():
    pattern = config("logits-processor-pattern: 'x.*'")
    assert routing.refused_features(pattern, facts_for_version("0.11.0")) == []
    [refused] = routing.refused_features(pattern, facts_for_version("0.12.0"))
    assert refused.feature == "--logits-processor-pattern" and refused.at.line == 3
    pp = facts_for_version("0.12.0")
    assert routing.refused_features(config("pipeline-parallel-size: 2", "distributed-executor-backend: uni"), pp)
    assert routing.refused_features(config("pipeline-parallel-size: 2", "distributed-executor-backend: ray"), pp) == []


def test_a_fork_without_a_check_is_linted_as_it_is():
    facts = facts_for_version("0.8.5")
    assert routing.in_copy("--load_format tensorizer", facts)          # a template: "--load_format {}"
    assert not routing.in_copy("--not-an-oracle-check", facts)
    assert routing.in_copy("--not-an-oracle-check", dataclasses.replace(facts, v1_oracle=None))


def test_the_platform_module():
    assert [routing.platform_module(config(hardware=f"platform: {p}")) for p in ("cuda", "rocm", "tpu", "gaudi", "corex")] == \
        ["cuda", "rocm", "tpu", "hpu", "cuda"]
    assert routing.platform_module(config(hardware="gpus: 1")) is None


# The engine a hand-built config gets.


@pytest.mark.parametrize("version,env,expected", [
    ("0.6.3.post1", {}, "V0"), ("0.6.3.post1", {"VLLM_USE_V1": 1}, "V0"),
    ("0.7.3", {}, "V0"), ("0.7.3", {"VLLM_USE_V1": 1}, "V1"),
    ("0.8.5", {}, "V1"), ("0.8.5", {"VLLM_USE_V1": 0}, "V0"), ("0.10.2", {}, "V1"),
    ("0.11.0", {}, "V1"), ("0.12.0", {"VLLM_USE_V1": 0}, "V1"), ("0.33.0", {}, "V1"),
])
def test_engine_by_version_and_env(version, env, expected):
    got = routing.engine(hand_config(env=env), hand_facts(version))
    assert got.value == expected and got.error is None and got.certain


def test_multistep_falls_back_to_v0_with_vllm_message():
    got = routing.engine(hand_config(args={"num_scheduler_steps": 8}), hand_facts("0.8.5"))
    assert got.value == "V0" and got.error is None
    assert "--num-scheduler-steps is not supported by the V1 engine" in got.reason
    assert got.fields == ("num_scheduler_steps",)
    [trigger] = routing.oracle_triggers(hand_config(args={"num_scheduler_steps": 8}), hand_facts("0.9.2"))
    assert trigger.fallback_message == (
        "--num-scheduler-steps is not supported by the V1 Engine. Falling back to V0. We recommend "
        "to remove --num-scheduler-steps from your config in favor of the V1 Engine.")


def test_forced_v1_with_a_fallback_trigger_is_an_error():
    got = routing.engine(hand_config(args={"num_scheduler_steps": 8}, env={"VLLM_USE_V1": 1}), hand_facts("0.10.0"))
    assert got.value == "V1"
    assert got.error == "VLLM_USE_V1=1 is not supported with --num-scheduler-steps."


def test_oracle_runs_checks_in_vllms_order():
    cfg = hand_config(args={"num_scheduler_steps": 8, "preemption_mode": "swap",
                     "logits_processor_pattern": "x.*"})
    features = [t.feature for t in routing.oracle_triggers(cfg, hand_facts("0.8.5"))]
    assert features == ["--logits-processor-pattern", "--preemption-mode", "--num-scheduler-steps"]
    assert "first" not in routing.engine(cfg, hand_facts("0.8.5")).reason
    assert routing.engine(cfg, hand_facts("0.8.5")).reason.startswith("--logits-processor-pattern")


def test_v0_fallback_on_0_11_crashes():
    cfg = hand_config(env={"VLLM_ATTENTION_BACKEND": "FLASH_ATTN_VLLM_V1"})
    got = routing.engine(cfg, hand_facts("0.11.0"))
    assert got.value == "V0" and "AssertionError" in got.error
    assert routing.engine(cfg, hand_facts("0.10.2")).value == "V1"  # still on 0.10.2's list
    xformers = hand_config(env={"VLLM_ATTENTION_BACKEND": "XFORMERS"})
    assert routing.engine(xformers, hand_facts("0.10.2")).value == "V0"
    assert routing.engine(xformers, hand_facts("0.10.2")).error is None
    assert routing.engine(hand_config(env={"VLLM_ATTENTION_BACKEND": "XFORMERS"}), hand_facts("0.11.0")).value == "V1"


def test_old_gpus_fall_back_until_0_10_1():
    cfg = hand_config(ctx={"hardware.compute_capability": 7.5})
    assert routing.engine(cfg, hand_facts("0.8.5")).value == "V0"
    assert routing.engine(cfg, hand_facts("0.10.1.1")).value == "V0"
    assert routing.engine(cfg, hand_facts("0.10.2")).value == "V1"


def test_fp8_kv_cache_depends_on_the_gpu():
    kv = {"kv_cache_dtype": "fp8"}
    unknown = routing.engine(hand_config(args=kv), hand_facts("0.8.5"))
    assert unknown.value == "V1" and not unknown.certain and unknown.alternatives == ("V0",)
    assert routing.engine(hand_config(args=kv, ctx=H100_CTX), hand_facts("0.8.5")).value == "V1"
    assert routing.engine(hand_config(args=kv, ctx={"hardware.compute_capability": 8.0}), hand_facts("0.8.5")).value == "V0"
    assert routing.engine(hand_config(args=kv, ctx={"hardware.compute_capability": 10.0}), hand_facts("0.10.0")).value == "V1"


def test_speculative_methods_by_version():
    ngram = {"speculative_config": {"method": "ngram", "num_speculative_tokens": 4}}
    assert routing.engine(hand_config(args=ngram), hand_facts("0.8.5")).value == "V0"       # experimental: falls back
    assert routing.engine(hand_config(args=ngram, env={"VLLM_USE_V1": 1}), hand_facts("0.8.5")).value == "V1"
    assert routing.engine(hand_config(args=ngram), hand_facts("0.9.2")).value == "V1"
    medusa = {"speculative_config": '{"method": "medusa", "model": "x"}'}
    assert routing.engine(hand_config(args=medusa), hand_facts("0.8.5")).value == "V0"
    assert routing.engine(hand_config(args=medusa), hand_facts("0.9.2")).value == "V1"


def test_prediction_unpacks_as_value_and_reason():
    value, reason = routing.engine(hand_config(), hand_facts("0.6.3.post1"))
    assert value == "V0" and "only the V0 engine" in reason
    assert prediction.Prediction(1, "r", alternatives=(2, 1)).candidates == (1, 2)
