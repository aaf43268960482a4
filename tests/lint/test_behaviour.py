"""The version behaviour model: engine choice, scheduler defaults, V0 backend, capture sizes."""

from __future__ import annotations

import pytest

from patchops.lint.input.serve_config import ServeConfig, Setting
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import attention, cuda_graphs, inputs, prediction, releases, routing, scheduler, wording


def make(args=None, env=None, ctx=None, ignored=None, unknown=None) -> ServeConfig:
    """Build a read config by hand: canonical names, typed values, one line each."""
    cfg = ServeConfig(path="serve.yaml", kind="spec")
    line = 1
    for name, value in (args or {}).items():
        cfg.args[name] = Setting(key=name.replace("_", "-"), name=name, value=value, line=line,
                                 column=3, raw=None if isinstance(value, (list, dict)) else str(value))
        line += 1
    for name, value in (env or {}).items():
        cfg.env[name] = Setting(key=name, name=name, value=str(value), line=line, column=3, source="env")
        line += 1
    for path, value in (ctx or {}).items():
        cfg.context[path] = Setting(key=path.split(".")[-1], name=path, value=value, line=line, column=3)
        line += 1
    for name, value in (ignored or {}).items():
        cfg.ignored[name] = (Setting(key=name, name=name, value=value, line=line, column=3), "dropped")
        line += 1
    for name, value in (unknown or {}).items():
        cfg.unknown.append(Setting(key=name, name=name, value=value, line=line, column=3))
        line += 1
    return cfg


def facts(version, **kw) -> Facts:
    kw.setdefault("has_flash_attn", True)
    return Facts(version=version, origin="test", **kw)


H100 = {"hardware.memory_gib": 80, "hardware.compute_capability": 9.0}
L40S = {"hardware.memory_gib": 48, "hardware.compute_capability": 8.9}


# --------------------------------------------------------------------------- reading values


def test_release_reads_post_releases_and_local_versions():
    assert releases.release("0.6.3.post1") == releases.Version("0.6.3")
    assert releases.release(facts("0.10.1.1")) == releases.Version("0.10.1.1")
    assert releases.release("0.8.5+corex.4.2") == releases.Version("0.8.5")
    assert releases.release("0.8.5-corex.4.2") == releases.Version("0.8.5")
    assert releases.release("dev") == releases.NEWEST


@pytest.mark.parametrize("raw,expected", [
    (8192, 8192), ("8192", 8192), ("32k", 32000), ("32K", 32768), ("1M", 2**20), (True, None),
    ("auto", None), ([4], 4), (4.0, 4),
])
def test_to_int_reads_human_readable_ints(raw, expected):
    assert inputs.to_int(raw) == expected


@pytest.mark.parametrize("raw,expected", [
    ([1, 2, 4], [1, 2, 4]), ("[1, 2, 4]", [1, 2, 4]), ("1,2,4", [1, 2, 4]), ("1 2 4", [1, 2, 4]),
    (["1", "2"], [1, 2]), (8, [8]), ("[]", []), (["x"], None), (True, None),
])
def test_to_int_list_reads_every_spelling(raw, expected):
    assert inputs.to_int_list(raw) == expected


def test_ignored_settings_count_as_absent():
    cfg = make(args={"enable_chunked_prefill": False})
    cfg.ignored["enable_chunked_prefill"] = (cfg.args["enable_chunked_prefill"], "YAML false dropped")
    assert inputs.setting(cfg, "enable_chunked_prefill") is None
    assert inputs.bool_value(cfg, "enable_chunked_prefill") is None


def test_bool_value_reads_no_spellings():
    assert inputs.bool_value(make(args={"no_enable_chunked_prefill": True}), "enable_chunked_prefill") is False
    assert inputs.bool_value(make(args={"enforce_eager": "true"}), "enforce_eager") is True


@pytest.mark.parametrize("raw,expected", [
    (8.0, (8, 0)), ("8.6", (8, 6)), ("sm_90", (9, 0)), (75, (7, 5)), ("12.1", (12, 1)), (None, None),
])
def test_compute_capability_spellings(raw, expected):
    assert inputs.compute_capability(make(ctx={"hardware.compute_capability": raw})) == expected


@pytest.mark.parametrize("value", [
    {"cudagraph_capture_sizes": [1, 2]},
    '{"cudagraph_capture_sizes": [1, 2]}',
    "{'cudagraph_capture_sizes': [1, 2]}",
])
def test_compilation_value_reads_dict_json_and_repr(value):
    cfg = make(args={"compilation_config": value})
    got, where = inputs.compilation_value(cfg, "cudagraph_capture_sizes")
    assert got == [1, 2] and where is cfg.args["compilation_config"]
    assert inputs.compilation_value(cfg, "level") == (None, None)


def test_compilation_value_reads_dotted_keys_and_levels():
    cfg = make(args={"compilation_config": '{"level": 3}',
                     "compilation_config.cudagraph_capture_sizes": "[1, 2, 4]"})
    got, where = inputs.compilation_value(cfg, "cudagraph_capture_sizes")
    assert got == [1, 2, 4] and where.name == "compilation_config.cudagraph_capture_sizes"
    assert inputs.compilation_value(cfg, "level")[0] == 3
    assert inputs.compilation_value(make(args={"compilation_config": "3"}), "level")[0] == 3
    assert inputs.compilation_value(make(), "level") == (None, None)


def test_num_scheduler_steps_counts_a_removed_key():
    assert inputs.num_scheduler_steps(make(unknown={"num_scheduler_steps": "8"})) == 8
    assert inputs.num_scheduler_steps(make(args={"num_scheduler_steps": 4})) == 4
    assert inputs.num_scheduler_steps(make()) is None


# --------------------------------------------------------------------------- engine


@pytest.mark.parametrize("version,env,expected", [
    ("0.6.3.post1", {}, "V0"), ("0.6.3.post1", {"VLLM_USE_V1": 1}, "V0"),
    ("0.7.3", {}, "V0"), ("0.7.3", {"VLLM_USE_V1": 1}, "V1"),
    ("0.8.5", {}, "V1"), ("0.8.5", {"VLLM_USE_V1": 0}, "V0"), ("0.10.2", {}, "V1"),
    ("0.11.0", {}, "V1"), ("0.12.0", {"VLLM_USE_V1": 0}, "V1"), ("0.33.0", {}, "V1"),
])
def test_engine_by_version_and_env(version, env, expected):
    got = routing.engine(make(env=env), facts(version))
    assert got.value == expected and got.error is None and got.certain


def test_multistep_falls_back_to_v0_with_vllm_message():
    got = routing.engine(make(args={"num_scheduler_steps": 8}), facts("0.8.5"))
    assert got.value == "V0" and got.error is None
    assert "--num-scheduler-steps is not supported by the V1 engine" in got.reason
    assert got.fields == ("num_scheduler_steps",)
    [trigger] = routing.oracle_triggers(make(args={"num_scheduler_steps": 8}), facts("0.9.2"))
    assert trigger.fallback_message == (
        "--num-scheduler-steps is not supported by the V1 Engine. Falling back to V0. We recommend "
        "to remove --num-scheduler-steps from your config in favor of the V1 Engine.")


def test_forced_v1_with_a_fallback_trigger_is_an_error():
    got = routing.engine(make(args={"num_scheduler_steps": 8}, env={"VLLM_USE_V1": 1}), facts("0.10.0"))
    assert got.value == "V1"
    assert got.error == "VLLM_USE_V1=1 is not supported with --num-scheduler-steps."


def test_oracle_runs_checks_in_vllms_order():
    cfg = make(args={"num_scheduler_steps": 8, "preemption_mode": "swap",
                     "logits_processor_pattern": "x.*"})
    features = [t.feature for t in routing.oracle_triggers(cfg, facts("0.8.5"))]
    assert features == ["--logits-processor-pattern", "--preemption-mode", "--num-scheduler-steps"]
    assert "first" not in routing.engine(cfg, facts("0.8.5")).reason
    assert routing.engine(cfg, facts("0.8.5")).reason.startswith("--logits-processor-pattern")


def test_v0_fallback_on_0_11_crashes():
    cfg = make(env={"VLLM_ATTENTION_BACKEND": "FLASH_ATTN_VLLM_V1"})
    got = routing.engine(cfg, facts("0.11.0"))
    assert got.value == "V0" and "AssertionError" in got.error
    assert routing.engine(cfg, facts("0.10.2")).value == "V1"  # still on 0.10.2's list
    xformers = make(env={"VLLM_ATTENTION_BACKEND": "XFORMERS"})
    assert routing.engine(xformers, facts("0.10.2")).value == "V0"
    assert routing.engine(xformers, facts("0.10.2")).error is None
    assert routing.engine(make(env={"VLLM_ATTENTION_BACKEND": "XFORMERS"}), facts("0.11.0")).value == "V1"


def test_old_gpus_fall_back_until_0_10_1():
    cfg = make(ctx={"hardware.compute_capability": 7.5})
    assert routing.engine(cfg, facts("0.8.5")).value == "V0"
    assert routing.engine(cfg, facts("0.10.1.1")).value == "V0"
    assert routing.engine(cfg, facts("0.10.2")).value == "V1"


def test_fp8_kv_cache_depends_on_the_gpu():
    kv = {"kv_cache_dtype": "fp8"}
    unknown = routing.engine(make(args=kv), facts("0.8.5"))
    assert unknown.value == "V1" and not unknown.certain and unknown.alternatives == ("V0",)
    assert routing.engine(make(args=kv, ctx=H100), facts("0.8.5")).value == "V1"
    assert routing.engine(make(args=kv, ctx={"hardware.compute_capability": 8.0}), facts("0.8.5")).value == "V0"
    assert routing.engine(make(args=kv, ctx={"hardware.compute_capability": 10.0}), facts("0.10.0")).value == "V1"


def test_speculative_methods_by_version():
    ngram = {"speculative_config": {"method": "ngram", "num_speculative_tokens": 4}}
    assert routing.engine(make(args=ngram), facts("0.8.5")).value == "V0"       # experimental: falls back
    assert routing.engine(make(args=ngram, env={"VLLM_USE_V1": 1}), facts("0.8.5")).value == "V1"
    assert routing.engine(make(args=ngram), facts("0.9.2")).value == "V1"
    medusa = {"speculative_config": '{"method": "medusa", "model": "x"}'}
    assert routing.engine(make(args=medusa), facts("0.8.5")).value == "V0"
    assert routing.engine(make(args=medusa), facts("0.9.2")).value == "V1"


# --------------------------------------------------------------------------- hardware tier


@pytest.mark.parametrize("version,ctx,tier,certain", [
    ("0.8.5", H100, "large", True),
    ("0.8.5", {"hardware.memory_gib": 80, "hardware.compute_capability": 8.0}, "large", True),
    ("0.9.2", {"hardware.memory_gib": 80, "hardware.compute_capability": 8.0}, "small", False),
    ("0.9.2", {"hardware.memory_gib": 80, "hardware.name": "NVIDIA A100-SXM4-80GB"}, "small", True),
    ("0.9.2", {"hardware.memory_gib": 80, "hardware.name": "NVIDIA A800-SXM4-80GB"}, "large", True),
    ("0.11.0", H100, "large", True),
    ("0.11.0", L40S, "small", True),
    ("0.11.0", {}, "small", False),
    ("0.7.3", {"hardware.name": "NVIDIA H100 80GB HBM3"}, "large", True),
    ("0.7.3", L40S, "small", True),
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
    got = scheduler.hardware_tier(make(ctx=ctx), facts(version))
    assert (got.value, got.certain) == (tier, certain)
    if not certain:
        assert got.alternatives == ("large",)


# --------------------------------------------------------------------------- scheduler defaults


def test_chunked_prefill_v0_rules():
    f = facts("0.6.3.post1")
    assert scheduler.chunked_prefill(make(args={"enable_chunked_prefill": False, "max_model_len": 100000}), f).value is False
    auto = scheduler.chunked_prefill(make(args={"max_model_len": 100000}), f)
    assert auto.value is True and not auto.certain and auto.alternatives == (False,)
    assert "32768" in auto.reason
    short = scheduler.chunked_prefill(make(args={"max_model_len": 4096}), f)
    assert short.value is False and short.certain
    unknown = scheduler.chunked_prefill(make(), f)
    assert unknown.value is False and unknown.alternatives == (True,)
    lora = scheduler.chunked_prefill(make(args={"max_model_len": 100000, "enable_lora": True}), f)
    assert lora.value is False and lora.certain and "LoRA" in lora.reason
    rocm = make(args={"max_model_len": 100000}, ctx={"hardware.platform": "rocm"})
    assert scheduler.chunked_prefill(rocm, facts("0.7.3")).value is False
    assert scheduler.chunked_prefill(rocm, f).value is True


def test_chunked_prefill_v1_and_0_12():
    off = make(args={"enable_chunked_prefill": False, "max_model_len": 4096})
    forced = scheduler.chunked_prefill(off, facts("0.8.5"))
    assert forced.value is True and forced.certain and "ignoring" in forced.reason
    assert scheduler.chunked_prefill(off, facts("0.12.0")).value is False
    assert scheduler.chunked_prefill(make(), facts("0.12.0")).value is True
    # multi-step sends 0.8.5 to V0, where false is honoured again
    steps = make(args={"enable_chunked_prefill": False, "num_scheduler_steps": 8})
    assert scheduler.chunked_prefill(steps, facts("0.8.5")).value is False


def test_chunked_prefill_fork_literal_default():
    got = scheduler.chunked_prefill(make(args={"max_model_len": 100000}),
                             facts("0.6.3.post1", field_defaults={"enable_chunked_prefill": False}))
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
    got = scheduler.max_num_batched_tokens(make(args=args), facts(version))
    assert got.value == expected and got.certain


def test_max_num_batched_tokens_v1_tiers():
    assert scheduler.max_num_batched_tokens(make(ctx=H100), facts("0.8.5")).value == 8192
    assert scheduler.max_num_batched_tokens(make(ctx=L40S), facts("0.10.2")).value == 2048
    unknown = scheduler.max_num_batched_tokens(make(), facts("0.9.2"))
    assert (unknown.value, unknown.alternatives, unknown.certain) == (2048, (8192,), False)
    v0 = scheduler.max_num_batched_tokens(make(ctx={"hardware.name": "H100"}), facts("0.7.3"))
    assert v0.value is None and not v0.certain  # V0: max(max_model_len, 2048), length unknown
    v1 = make(ctx={"hardware.name": "NVIDIA H100"}, env={"VLLM_USE_V1": 1})
    assert scheduler.max_num_batched_tokens(v1, facts("0.7.3")).value == 8192
    big = {"hardware.memory_gib": 180, "hardware.compute_capability": 10.0}
    assert scheduler.max_num_batched_tokens(make(ctx=big), facts("0.33.0")).value == 16384


def test_max_num_batched_tokens_0_12_chunked_off_covers_model_len():
    cfg = make(args={"enable_chunked_prefill": False, "max_model_len": 32768}, ctx=L40S)
    assert scheduler.max_num_batched_tokens(cfg, facts("0.12.0")).value == 32768


@pytest.mark.parametrize("version,args,ctx,expected", [
    ("0.6.3.post1", {}, {}, 256),
    ("0.7.3", {}, {}, 256),
    ("0.8.5", {}, H100, 1024),
    ("0.8.5", {}, L40S, 256),
    ("0.10.0", {"max_num_batched_tokens": 512}, H100, 1024),
    ("0.10.1.1", {"max_num_batched_tokens": 512}, H100, 512),
    ("0.12.0", {"max_num_batched_tokens": 128}, L40S, 128),
    ("0.9.2", {"max_num_seqs": 48}, {}, 48),
])
def test_max_num_seqs(version, args, ctx, expected):
    assert scheduler.max_num_seqs(make(args=args, ctx=ctx), facts(version)).value == expected


def test_max_num_seqs_v1_opt_in_on_0_7_3():
    assert scheduler.max_num_seqs(make(env={"VLLM_USE_V1": 1}), facts("0.7.3")).value == 1024


# --------------------------------------------------------------------------- V0 backend


@pytest.mark.parametrize("version,args,env,ctx,extra,expected,certain", [
    ("0.6.3.post1", {}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.6.3.post1", {}, {}, {}, {}, "FLASH_ATTN", False),
    ("0.6.3.post1", {}, {}, {"hardware.compute_capability": 7.5}, {}, "XFORMERS", True),
    ("0.6.3.post1", {}, {}, {"hardware.compute_capability": 8.0}, {"has_flash_attn": False}, "XFORMERS", True),
    ("0.8.5", {"dtype": "float32"}, {}, {}, {}, "XFORMERS", True),
    ("0.7.3", {"kv_cache_dtype": "fp8"}, {}, H100, {}, "XFORMERS", True),
    ("0.8.5", {"kv_cache_dtype": "fp8"}, {}, H100, {}, "FLASH_ATTN", True),
    ("0.8.5", {"kv_cache_dtype": "fp8"}, {}, {"hardware.compute_capability": 8.0}, {}, "XFORMERS", True),
    ("0.8.5", {"kv_cache_dtype": "fp8"}, {}, {}, {}, "XFORMERS", False),
    ("0.9.2", {"block_size": 8}, {}, {}, {}, "XFORMERS", True),
    ("0.9.2", {"block_size": 32}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.9.2", {"block_size": 16}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.6.3.post1", {"block_size": 16}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.9.2", {"block_size": 24}, {}, {"hardware.compute_capability": 8.0}, {}, "XFORMERS", True),
    ("0.7.3", {}, {"VLLM_ATTENTION_BACKEND": "XFORMERS"}, {}, {}, "XFORMERS", True),
    ("0.7.3", {}, {"VLLM_ATTENTION_BACKEND": "FLASHINFER"}, {"hardware.compute_capability": 7.5}, {}, "FLASHINFER", True),
    ("0.7.3", {}, {"VLLM_ATTENTION_BACKEND": "FLASH_ATTN"}, {"hardware.compute_capability": 7.5}, {}, "XFORMERS", True),
    ("0.6.3.post1", {}, {}, {"hardware.platform": "rocm"}, {}, "ROCM_FLASH", True),
])
def test_v0_attention_backend(version, args, env, ctx, extra, expected, certain):
    got = attention.v0_attention_backend(make(args=args, env=env, ctx=ctx), facts(version, **extra))
    assert (got.value, got.certain) == (expected, certain)


def test_backend_labels_and_multistep_lists():
    old = facts("0.6.3.post1")
    assert attention.backend_label("XFORMERS", old) == "xformers"
    assert attention.backend_label("XFORMERS", facts("0.7.3")) == "XFORMERS"
    assert attention.multistep_backends(old, False) == ("flash-attn", "rocm-flash-attn", "flashinfer")
    assert attention.multistep_backends(old, True) == ("flash-attn",)
    assert attention.multistep_backends(facts("0.9.2"), True) == ("FLASH_ATTN", "FLASHINFER")
    shipped = facts("0.9.2", multistep_backends=("FLASH_ATTN",))
    assert attention.multistep_backends(shipped, False) == ("FLASH_ATTN",)


# --------------------------------------------------------------------------- capture sizes


def test_capture_sizes_empty_when_eager():
    assert cuda_graphs.capture_sizes(make(args={"enforce_eager": True}), facts("0.8.5")).value == ()
    hard = facts("0.8.5", hardcoded={"enforce_eager": "True"})
    got = cuda_graphs.capture_sizes(make(), hard)
    assert got.value == () and "hardcodes" in got.reason
    level0 = make(args={"compilation_config": {"level": 0}})
    assert cuda_graphs.capture_sizes(level0, facts("0.10.1.1")).value == ()
    # up to 0.10.0 V1 sets PIECEWISE itself (vllm/config.py:4563, 0.9.2): level 0 still captures
    assert cuda_graphs.capture_sizes(level0, facts("0.9.2")).value[:3] == (1, 2, 4)
    assert cuda_graphs.capture_sizes(make(args={"optimization_level": "0"}), facts("0.33.0")).value == ()
    assert cuda_graphs.capture_sizes(make(args={"optimization_level": "1"}), facts("0.33.0")).value != ()
    mode = make(args={"compilation_config": '{"cudagraph_mode": "NONE"}'})
    assert cuda_graphs.capture_sizes(mode, facts("0.12.0")).value == ()


def test_capture_sizes_v0_follow_max_num_seqs():
    assert cuda_graphs.capture_sizes(make(), facts("0.6.3.post1")).value[-3:] == (240, 248, 256)
    assert cuda_graphs.capture_sizes(make(args={"max_num_seqs": 100}), facts("0.6.3.post1")).value[-1] == 104
    assert cuda_graphs.capture_sizes(make(args={"max_num_seqs": 3}), facts("0.7.3")).value == (1, 2, 4)
    explicit = make(args={"compilation_config": '{"cudagraph_capture_sizes": [4, 1, 2, 2]}'})
    assert cuda_graphs.capture_sizes(explicit, facts("0.7.3")).value == (1, 2, 4)


def test_capture_sizes_v1_defaults_by_version():
    assert cuda_graphs.capture_sizes(make(), facts("0.7.3")).value[-1] == 256  # V0 is the 0.7.3 default
    v1_073 = cuda_graphs.capture_sizes(make(env={"VLLM_USE_V1": 1}), facts("0.7.3")).value
    assert v1_073[:4] == (1, 2, 4, 8) and v1_073[-1] == 512
    budget = make(args={"max_num_batched_tokens": 256})
    assert cuda_graphs.capture_sizes(budget, facts("0.8.5")).value[-1] == 256
    assert cuda_graphs.capture_sizes(make(args={"cuda_graph_sizes": [64]}), facts("0.9.2")).value[-1] == 64
    assert cuda_graphs.capture_sizes(make(args={"cuda_graph_sizes": [3, 1, 9]}), facts("0.9.2")).value == (1, 3, 9)
    assert cuda_graphs.capture_sizes(make(args={"max_num_seqs": 32}), facts("0.10.2")).value[-1] == 64
    assert cuda_graphs.capture_sizes(make(ctx=L40S), facts("0.11.0")).value[-1] == 512


def test_capture_sizes_0_12():
    default = cuda_graphs.capture_sizes(make(ctx=L40S), facts("0.12.0")).value
    assert default[-1] == 512 and 248 in default and 272 in default and 264 not in default
    assert cuda_graphs.capture_sizes(make(args={"cuda_graph_sizes": [512]}), facts("0.12.0")).value == (512,)
    assert cuda_graphs.capture_sizes(make(args={"max_cudagraph_capture_size": 64}), facts("0.12.0")).value[-1] == 64
    dropped = make(args={"cudagraph_capture_sizes": [1, 2, 4096]}, ctx=L40S)
    assert cuda_graphs.capture_sizes(dropped, facts("0.12.0")).value == (1, 2)
    blackwell = {"hardware.memory_gib": 180, "hardware.compute_capability": 10.0}
    assert cuda_graphs.capture_sizes(make(ctx=blackwell), facts("0.33.0")).value[-1] == 1024


def test_fork_default_capture_sizes():
    fork = facts("0.8.5", capture_sizes_default=(1, 2))
    got = cuda_graphs.capture_sizes(make(), fork)
    assert got.value == (1, 2) and "default capture list" in got.reason
    # 0.9.2-0.11: the CompilationConfig default wins over --cuda-graph-sizes
    assert cuda_graphs.capture_sizes(make(args={"cuda_graph_sizes": [64]}),
                            facts("0.9.2", capture_sizes_default=(1, 2))).value == (1, 2)
    # the user's compilation_config list replaces the fork's default
    mine = make(args={"compilation_config": '{"cudagraph_capture_sizes": [1, 2, 4, 8]}'})
    assert cuda_graphs.capture_sizes(mine, fork).value == (1, 2, 4, 8)


def test_prediction_unpacks_as_value_and_reason():
    value, reason = routing.engine(make(), facts("0.6.3.post1"))
    assert value == "V0" and "only the V0 engine" in reason
    assert prediction.Prediction(1, "r", alternatives=(2, 1)).candidates == (1, 2)


def test_message_helpers():
    assert wording.and_list([4]) == "4" and wording.and_list([4, 8, 16]) == "4, 8 and 16"
    assert wording.sizes_text([1, 2]) == "[1, 2]"
    assert wording.sizes_text(list(range(1, 20))) == "[1, 2, 3, 4, ..., 19]"
    assert cuda_graphs.suggested_sizes(8) == [1, 2, 4, 8] and cuda_graphs.suggested_sizes(3) == [1, 2, 4]
    assert "cudagraph_capture_sizes" in cuda_graphs.capture_fix(facts("0.8.5"), 8)
    assert cuda_graphs.capture_fix(facts("0.12.0"), 8).startswith("set cudagraph-capture-sizes: [1, 2, 4, 8]")
    cli = Setting(key="--x", name="x", value=[1, 2], line=1, column=1, raw="--x", source="cli")
    assert wording.shown(cli) == "[1, 2]" and wording.as_token(cli, "--x") == "--x 1 2"


# --------------------------------------------------------------------------- vLLM's own words


def _string_runs(path) -> str:
    """Return a file's string literals in source order, joined, f-string fields as {x}."""
    import ast
    import re

    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts_of_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    pieces = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{x}" for v in node.values)
            pieces.append((node.lineno, node.col_offset, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in parts_of_fstrings:
            pieces.append((node.lineno, node.col_offset, node.value))
    return re.sub(r"\s+", " ", "".join(text for _, _, text in sorted(pieces)))


def _template(text: str) -> str:
    import re
    return re.sub(r"\s+", " ", re.sub(r"\{[a-z_]+\}", "{x}", text))


def _rule_messages():
    from patchops.lint.rules import batched_tokens_below_max_seqs as po202
    from patchops.lint.rules import batched_tokens_below_model_len as po201
    from patchops.lint.rules import capture_settings_exclusive as po404
    from patchops.lint.rules import chunked_prefill_off_ignored as po203
    from patchops.lint.rules import cuda_graph_sizes_meaning_changed as po403
    from patchops.lint.rules import multistep_chunked_prefill_with_pp as po305
    from patchops.lint.rules import multistep_needs_flash_backend as po303
    from patchops.lint.rules import multistep_with_spec_decode as po304

    scheduler = ("vllm/config.py", "vllm/config/scheduler.py")
    old = ("0.6.3.post1", "0.7.3", "0.8.5", "0.9.2", "0.10.0")
    v1_oracle = ("0.8.5", "0.9.2", "0.10.0")
    fallback = "{x} is not supported by the V1 Engine. Falling back to V0. We recommend to remove {x} " \
               "from your config in favor of the V1 Engine."
    table = [
        (po201.VLLM_MESSAGE, scheduler, old + ("0.10.2", "0.11.0", "0.12.0", "0.33.0")),
        (po202.VLLM_MESSAGE, scheduler, old + ("0.10.2", "0.11.0", "0.12.0", "0.33.0")),
        (po203.WARNING_012, ("vllm/engine/arg_utils.py",), ("0.12.0", "0.33.0")),
        (fallback, ("vllm/engine/arg_utils.py",), v1_oracle + ("0.10.2", "0.11.0")),
        ("VLLM_USE_V1=1 is not supported with {x}.", ("vllm/engine/arg_utils.py",), v1_oracle),
        (po303.MultistepNeedsFlashBackend.vllm_message, ("vllm/worker/multi_step_model_runner.py",), old),
        (po304.MultistepWithSpecDecode.vllm_message, ("vllm/engine/arg_utils.py",), old),
        (po305.MultistepChunkedPrefillWithPp.vllm_message, ("vllm/engine/arg_utils.py",), old),
        (po403.DEPRECATED, ("vllm/engine/arg_utils.py",), ("0.12.0",)),
        (po404.SIZES_EXCLUSIVE.replace("{flag}", "cuda_graph_sizes"), ("vllm/engine/arg_utils.py",), ("0.12.0",)),
        (po404.SIZES_EXCLUSIVE.replace("{flag}", "cudagraph_capture_sizes"), ("vllm/engine/arg_utils.py",),
         ("0.12.0", "0.33.0")),
        (po404.MAX_EXCLUSIVE, ("vllm/engine/arg_utils.py",), ("0.12.0", "0.33.0")),
        (po404.INCONSISTENT, ("vllm/config/vllm.py",), ("0.12.0", "0.33.0")),
        (po404.EMPTY, ("vllm/config/vllm.py",), ("0.12.0", "0.33.0")),
    ]
    from patchops.lint.rules import multistep_falls_back_to_v0 as po302
    table.append((po302.FORCED_V1_073, ("vllm/platforms/cuda.py",), ("0.7.3",)))
    return [(text, files, version) for text, files, versions in table for version in versions]


@pytest.mark.vllm
@pytest.mark.parametrize("text,files,version", _rule_messages(),
                         ids=lambda x: x if isinstance(x, str) and len(x) < 16 else None)
def test_quoted_vllm_messages_are_in_the_source(vllm_site, text, files, version):
    site = vllm_site(version)
    wanted = _template(text)
    found = [f for f in files if (site / f).exists() and wanted in _string_runs(site / f)]
    assert found, f"{wanted!r} not in {files} of vLLM {version}"


@pytest.mark.vllm
@pytest.mark.parametrize("version,chunked,expected", [
    ("0.6.3.post1", False, attention.MULTISTEP_BACKENDS_063), ("0.6.3.post1", True, attention.MULTISTEP_CHUNKED_BACKENDS_063),
    ("0.7.3", False, attention.MULTISTEP_BACKENDS), ("0.10.0", True, attention.MULTISTEP_CHUNKED_BACKENDS),
])
def test_builtin_multistep_lists_match_the_source(vllm_site, version, chunked, expected):
    text = (vllm_site(version) / "vllm/worker/multi_step_model_runner.py").read_text(encoding="utf-8")
    name = "MULTI_STEP_CHUNKED_PREFILL_ATTENTION_BACKENDS" if chunked else "MULTI_STEP_ATTENTION_BACKENDS"
    import ast
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            assert tuple(ast.literal_eval(node.value)) == expected
            return
    raise AssertionError(f"{name} not found in vLLM {version}")


# --------------------------------------------------------------------------- CPU and TPU batch defaults


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
    cfg, f = make(args=args, ctx=ctx), facts(version)
    got_tokens, got_seqs = scheduler.max_num_batched_tokens(cfg, f), scheduler.max_num_seqs(cfg, f)
    assert (got_tokens.value, got_seqs.value) == (tokens, seqs)


def test_platform_batch_defaults_name_the_platform():
    got = scheduler.max_num_seqs(make(args={"tensor_parallel_size": 2}, ctx={"hardware.platform": "cpu"}),
                                 facts("0.10.0"))
    assert got.certain and "CPU platform, x world size 2" in got.reason and got.fields == ("hardware.platform",)
