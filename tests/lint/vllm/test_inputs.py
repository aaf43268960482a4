"""lint/vllm/inputs.py: settings, environment and hardware as vLLM will see them."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.reading.read_config import Fate, Outcome, read_config
from patchops.lint.vllm import inputs

from handmade import as_read, hand_config


def spec(*args, env="", hardware="", workload=""):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    extra = "".join(f"{k}: {{{v}}}\n" for k, v in (("env", env), ("hardware", hardware), ("workload", workload)) if v)
    return as_read(load_text(f"model: /models/m\nargs:\n{body}{extra}"))


def command(flags):
    return as_read(load_text(f"vllm serve /models/m {flags}\n", kind="command"))


def test_a_value_the_input_does_not_show_counts_as_unset():
    cfg = command("--kv-cache-dtype $KV --max-model-len 4096")
    assert inputs.setting(cfg, "kv_cache_dtype") is None and inputs.value(cfg, "kv_cache_dtype", "auto") == "auto"
    assert inputs.int_value(cfg, "max_model_len") == 4096


def test_a_boolean_reads_its_no_spelling():
    assert inputs.bool_value(command("--no-enable-prefix-caching"), "enable_prefix_caching") is False
    assert inputs.bool_value(spec("enable-prefix-caching: false"), "enable_prefix_caching") is False
    assert inputs.bool_value(spec("enable-prefix-caching: true"), "enable_prefix_caching") is True
    assert inputs.bool_value(spec(), "enable_prefix_caching") is None


@pytest.mark.parametrize("written, expected", [("8.0", (8, 0)), ("'8.6'", (8, 6)), ("sm_90", (9, 0)),
                                               ("90", (9, 0))])
def test_compute_capability_spellings(written, expected):
    assert inputs.compute_capability(spec(hardware=f"compute_capability: {written}")) == expected
    assert inputs.compute_capability(spec(hardware="gpus: 1")) is None


def test_the_platform_and_whether_it_runs_the_cuda_paths():
    assert [inputs.is_cuda_like(spec(hardware=f"platform: {p}")) for p in ("CUDA", "corex", "rocm", "cpu", "tpu")] == \
        [True, True, True, False, False]
    assert inputs.platform(spec(hardware="platform: ' CUDA '")) == "cuda"
    assert inputs.is_cuda_like(spec(hardware="gpus: 1")) is None


def test_concurrency_levels_ascending_without_repeats():
    assert inputs.concurrency_levels(spec(workload="concurrency: [8, 1, 4, 8]")) == [1, 4, 8]
    assert inputs.concurrency_levels(spec()) == []


@pytest.mark.parametrize("written, stated", [("4096", 4096), ("1", 1), ("0", None), ("-1", None)])
def test_a_stated_max_model_len_above_0(written, stated):
    assert inputs.max_model_len(spec(f"max-model-len: {written}")).value == stated


def test_compilation_config_sub_keys_from_every_form():
    assert inputs.compilation_value(spec("compilation-config: {level: 3}"), "level")[0] == 3
    assert inputs.compilation_value(spec("compilation-config: '{\"level\": 2}'"), "level")[0] == 2
    assert inputs.compilation_value(command("--compilation-config 3"), "level")[0] == 3     # the level alone
    assert inputs.compilation_value(command("-O.level 2"), "level")[0] == 2
    dotted = command("--compilation-config '{\"level\": 3}' --compilation-config.level 1")
    assert inputs.compilation_value(dotted, "level")[0] == 1
    assert inputs.compilation_value(spec(), "level") == (None, None)


def test_vllm_use_v1_is_read_as_an_int():
    assert [inputs.use_v1_env(spec(env=f"VLLM_USE_V1: '{v}'")) for v in ("1", "0", "2", "yes")] == \
        [True, False, True, None]
    assert inputs.use_v1_env(spec()) is None


def test_the_speculative_method_before_and_after_speculative_config():
    old, new = facts_for_version("0.7.3"), facts_for_version("0.8.5")
    assert inputs.speculative_method(spec("speculative-model: '[ngram]'"), old) == "ngram"
    assert inputs.speculative_method(spec("speculative-model: /models/draft"), old) == "draft_model"
    assert inputs.speculative_method(spec("speculative-model: /models/draft"), new) is None
    assert inputs.speculative_method(spec("speculative-config: {method: eagle, model: x}"), new) == "eagle"
    assert inputs.speculative_method(spec("speculative-config: {model: /models/draft}"), new) == "draft_model"
    assert inputs.speculative_method(spec("speculative-config: '[1]'"), new) == "unknown"
    assert inputs.num_speculative_tokens(spec("speculative-config: {method: ngram, num_speculative_tokens: 3}"), new) == 3
    assert inputs.num_speculative_tokens(spec("num-speculative-tokens: 2"), old) == 2


def test_v0_multistep_checks_run_unless_v1_is_forced_from_0_8_5():
    forced = spec("num-scheduler-steps: 8", env="VLLM_USE_V1: '1'")
    assert inputs.v0_multistep_setting(forced, facts_for_version("0.8.5")) is None
    assert inputs.v0_multistep_setting(forced, facts_for_version("0.7.3")).value == 8
    assert inputs.v0_multistep_setting(spec("num-scheduler-steps: 8"), facts_for_version("0.8.5")).value == 8
    assert inputs.multistep_setting(spec("num-scheduler-steps: 1")) is None


def test_enforce_eager_from_the_flag_or_a_hardcoding_fork():
    facts = facts_for_version("0.8.5")
    assert inputs.enforce_eager(spec("enforce-eager: true"), facts).value is True
    off = inputs.enforce_eager(spec("enforce-eager: false"), facts)
    assert (off.value, off.fields) == (False, ("enforce_eager",))
    fork = dataclasses.replace(facts, hardcoded={"enforce_eager": "True"})
    assert inputs.enforce_eager(spec("enforce-eager: false"), fork).value is True


def test_a_checkpoint_an_override_always_claims():
    cfg = as_read(spec().written, model_facts_from_dict({"model_type": "gpt_oss", "quantization_config": {"quant_method": "mxfp4"}}))
    assert inputs.quantization_taken_over(cfg, facts_for_version("0.33.0"))
    assert not inputs.quantization_taken_over(cfg, facts_for_version("0.10.1.1"))


# Values read from a config built by hand.


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
    given = hand_config(args={"enable_chunked_prefill": False})
    dropped = Outcome(Fate.IGNORED, given.args["enable_chunked_prefill"], "enable_chunked_prefill",
                      "YAML false dropped")
    cfg = read_config(given.written, None, given.args, None, [dropped])
    assert inputs.setting(cfg, "enable_chunked_prefill") is None
    assert inputs.bool_value(cfg, "enable_chunked_prefill") is None


def test_bool_value_reads_no_spellings():
    assert inputs.bool_value(hand_config(args={"no_enable_chunked_prefill": True}), "enable_chunked_prefill") is False
    assert inputs.bool_value(hand_config(args={"enforce_eager": "true"}), "enforce_eager") is True


@pytest.mark.parametrize("raw,expected", [
    (8.0, (8, 0)), ("8.6", (8, 6)), ("sm_90", (9, 0)), (75, (7, 5)), ("12.1", (12, 1)), (None, None),
])
def test_compute_capability_from_typed_values(raw, expected):
    assert inputs.compute_capability(hand_config(ctx={"hardware.compute_capability": raw})) == expected


@pytest.mark.parametrize("value", [
    {"cudagraph_capture_sizes": [1, 2]},
    '{"cudagraph_capture_sizes": [1, 2]}',
    "{'cudagraph_capture_sizes': [1, 2]}",
])
def test_compilation_value_reads_dict_json_and_repr(value):
    cfg = hand_config(args={"compilation_config": value})
    got, where = inputs.compilation_value(cfg, "cudagraph_capture_sizes")
    assert got == [1, 2] and where is cfg.args["compilation_config"]
    assert inputs.compilation_value(cfg, "level") == (None, None)


def test_compilation_value_reads_dotted_keys_and_levels():
    cfg = hand_config(args={"compilation_config": '{"level": 3}',
                     "compilation_config.cudagraph_capture_sizes": "[1, 2, 4]"})
    got, where = inputs.compilation_value(cfg, "cudagraph_capture_sizes")
    assert got == [1, 2, 4] and where.name == "compilation_config.cudagraph_capture_sizes"
    assert inputs.compilation_value(cfg, "level")[0] == 3
    assert inputs.compilation_value(hand_config(args={"compilation_config": "3"}), "level")[0] == 3
    assert inputs.compilation_value(hand_config(), "level") == (None, None)


def test_num_scheduler_steps_counts_a_removed_key():
    assert inputs.num_scheduler_steps(hand_config(unknown={"num_scheduler_steps": "8"})) == 8
    assert inputs.num_scheduler_steps(hand_config(args={"num_scheduler_steps": 4})) == 4
    assert inputs.num_scheduler_steps(hand_config()) is None
