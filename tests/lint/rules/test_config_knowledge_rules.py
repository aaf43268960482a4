"""The rules built on facts read from the copy (PO108, PO70x, PO80x, PO90x): both sides of each boundary."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.runner import lint_config

from handmade import model_of

QWEN_7B = {"model_type": "qwen2", "num_attention_heads": 28, "num_key_value_heads": 4,
           "max_position_embeddings": 32768, "sliding_window": 131072, "use_sliding_window": False,
           "rope_theta": 1000000.0}
COMMAND_R = {"model_type": "cohere", "num_attention_heads": 64, "max_position_embeddings": 8192,
             "model_max_length": 131072}


def run(text, vllm="0.8.5", kind="spec", model=None, **facts_changes):
    facts = facts_for_version(vllm)
    if facts_changes:
        facts = dataclasses.replace(facts, **facts_changes)
    cfg = load_text(text, path="serve.yaml", kind=kind)
    source = model_of(cfg, model_facts_from_dict(model)) if model is not None else None
    return [(d.code, d.severity, d.line, d.column) for d in lint_config(cfg, facts, model=source)]


def codes(found, prefix="PO"):
    return [f for f in found if f[0].startswith(prefix)]


# The checks that read the model's config.json for the layout, the length and memory.
MODEL_CHECKS = ("PO70", "PO207", "PO309", "PO62")


# --- PO701 / PO207: the model ----------------------------------------------------------------

@pytest.mark.parametrize("vllm", ["0.8.5", "0.10.1.1", "0.33.0"])
@pytest.mark.parametrize("tp,bad", [(4, False), (7, False), (3, True), (8, True)])
def test_heads_divisible(tp, bad, vllm):
    found = codes(run(f"model: q\nargs:\n  tensor-parallel-size: {tp}\n", vllm=vllm, model=QWEN_7B), "PO701")
    assert found == ([("PO701", "error", 3, 3)] if bad else [])


def test_tp_zero():
    text = "model: q\nargs:\n  tensor-parallel-size: 0\n"
    assert codes(run(text, model=QWEN_7B), MODEL_CHECKS) == [("PO701", "error", 3, 3)]   # ZeroDivisionError
    assert codes(run(text, vllm="0.33.0", model=QWEN_7B), "PO11") == [("PO111", "error", 3, 3)]  # Field(ge=1)
    assert codes(run(text, vllm="0.33.0", model=QWEN_7B), MODEL_CHECKS) == []


def test_heads_missing_key_passes_like_vllm():
    # vLLM: getattr(hf_text_config, "num_attention_heads", 0) % tp == 0
    assert codes(run("model: q\nargs:\n  tensor-parallel-size: 3\n", model={"model_type": "x"}), "PO701") == []


def test_duplicate_key_checks_the_winning_value():
    text = "model: q\nargs:\n  tensor-parallel-size: 3\n  tensor-parallel-size: 4\n"
    assert codes(run(text, model=QWEN_7B), "PO701") == []
    text = "model: q\nargs:\n  tensor-parallel-size: 4\n  tensor-parallel-size: 3\n"
    assert codes(run(text, model=QWEN_7B), "PO701") == [("PO701", "error", 4, 3)]


@pytest.mark.parametrize("length,bad", [(32768, False), (32769, True), ("32k", False), ("33k", True)])
def test_max_model_len_boundary(length, bad):
    found = codes(run(f"model: q\nargs:\n  max-model-len: {length}\n", model=QWEN_7B), "PO207")
    assert found == ([("PO207", "error", 3, 3)] if bad else [])


@pytest.mark.parametrize("value,severity", [("'1'", "warning"), ("'true'", "warning"), ("'0'", "error")])
def test_allow_long_env(value, severity):
    text = f"model: q\nenv:\n  VLLM_ALLOW_LONG_MAX_MODEL_LEN: {value}\nargs:\n  max-model-len: 40000\n"
    assert codes(run(text, vllm="0.10.1.1", model=QWEN_7B), "PO207") == [("PO207", severity, 5, 3)]


def test_model_max_length_allows_up_to_itself():
    assert codes(run("model: c\nargs:\n  max-model-len: 131072\n", model=COMMAND_R), "PO207") == []
    assert codes(run("model: c\nargs:\n  max-model-len: 131073\n", model=COMMAND_R), "PO207") != []


def test_no_model_facts_no_model_checks():
    assert codes(run("model: q\nargs:\n  tensor-parallel-size: 3\n  max-model-len: 99999\n"), MODEL_CHECKS) == []


# --- PO703 / PO704: parallelism and Ray -------------------------------------------------------

@pytest.mark.parametrize("vllm,has_ray,expected", [
    ("0.8.5", None, "warning"),      # the wheel depends on Ray: switches to it, fails later
    ("0.8.5", True, "warning"),
    ("0.8.5", False, "error"),       # "Unable to load Ray"
    ("0.33.0", None, "error"),       # "World size (8) is larger than ..."
    ("0.33.0", True, "error"),
])
def test_world_size_above_gpus(vllm, has_ray, expected):
    text = "model: m\nargs:\n  tensor-parallel-size: 8\nhardware: {gpus: 4}\n"
    found = codes(run(text, vllm=vllm, has_ray=has_ray), "PO703")
    assert found == [("PO703", expected, 3, 3)]


def test_world_size_counts_pipeline_stages():
    text = "model: m\nargs:\n  tensor-parallel-size: 2\n  pipeline-parallel-size: {pp}\nhardware: {{gpus: 4}}\n"
    assert codes(run(text.format(pp=2), vllm="0.33.0"), "PO703") == []
    assert codes(run(text.format(pp=3), vllm="0.33.0"), "PO703") == [("PO703", "error", 3, 3)]


def test_explicit_executor_skips_the_choice():
    text = "model: m\nargs:\n  tensor-parallel-size: 8\n  distributed-executor-backend: mp\nhardware: {gpus: 4}\n"
    assert codes(run(text, vllm="0.33.0"), "PO703") == []


@pytest.mark.parametrize("vllm,has_ray,bad", [("0.15.0", None, False), ("0.20.0", None, True),
                                              ("0.20.0", True, False), ("0.8.5", False, True)])
def test_ray_executor_needs_ray(vllm, has_ray, bad):
    found = codes(run("model: m\nargs:\n  distributed-executor-backend: ray\n", vllm=vllm, has_ray=has_ray), "PO704")
    assert found == ([("PO704", "error", 3, 3)] if bad else [])


# --- PO705 / PO621 ----------------------------------------------------------------------------

def test_expert_parallel_needs_experts_from_085():
    text = "model: q\nargs:\n  enable-expert-parallel: true\n"
    assert codes(run(text, model=QWEN_7B), "PO705") == [("PO705", "error", 3, 3)]
    assert codes(run(text, model=dict(QWEN_7B, num_experts=64)), "PO705") == []
    assert codes(run(text, model=dict(QWEN_7B, num_local_experts=0, n_routed_experts=8)), "PO705") == []


def test_prefix_caching_sliding_window_v0_only_from_085():
    mistral = {"model_type": "mistral", "num_attention_heads": 32, "sliding_window": 4096,
               "max_position_embeddings": 32768}
    v0 = "model: m\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n"
    v1 = "model: m\nargs:\n  enable-prefix-caching: true\n"
    assert codes(run(v0, model=mistral), "PO621") == [("PO621", "error", 5, 3)]
    assert codes(run(v1, model=mistral), "PO621") == []
    assert codes(run(v1, vllm="0.7.3", model=mistral), "PO621") == [("PO621", "error", 3, 3)]
    assert codes(run(v0, model=QWEN_7B), "PO621") == []          # use_sliding_window: false
    assert codes(run(v1, vllm="0.12.0", model=mistral), "PO621") == []


def test_a_hybrid_cache_checkpoint_interleaves_its_window_without_layer_types():
    """Gemma 2's config.json has no layer_types (transformers adds them) but says "hybrid"."""
    gemma2 = {"model_type": "gemma2", "num_attention_heads": 16, "sliding_window": 4096,
              "max_position_embeddings": 8192}
    v0 = "model: m\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n"
    assert codes(run(v0, vllm="0.10.1.1", model=gemma2), "PO621") == [("PO621", "error", 5, 3)]
    hybrid = dict(gemma2, cache_implementation="hybrid")
    assert codes(run(v0, vllm="0.10.1.1", model=hybrid), "PO621") == []


# --- PO111 value ranges -----------------------------------------------------------------------

@pytest.mark.parametrize("vllm,value,bad", [
    ("0.8.5", "1.0", False), ("0.8.5", "1.001", True), ("0.8.5", "0", False), ("0.8.5", "-1", False),
    ("0.11.0", "0", False), ("0.12.0", "0", True), ("0.12.0", "1", False), ("0.12.0", "1.5", True),
])
def test_gpu_memory_utilization(vllm, value, bad):
    found = codes(run(f"model: m\nargs:\n  gpu-memory-utilization: {value}\n", vllm=vllm), "PO111")
    assert found == ([("PO111", "error", 3, 3)] if bad else [])


def test_kv_cache_dtype_checked_by_argparse_then_by_the_config():
    text = "model: m\nargs:\n  kv-cache-dtype: fp9\n"
    assert codes(run(text, vllm="0.30.0"), ("PO11", "PO604")) == [] and codes(run(text, vllm="0.30.0"), "PO107")
    assert codes(run(text, vllm="0.33.0"), "PO111") == [("PO111", "error", 3, 3)]
    assert codes(run("model: m\nargs:\n  kv-cache-dtype: nvfp4\n", vllm="0.33.0"), "PO111") == []


# --- PO112 / PO321 nested configs -------------------------------------------------------------

def cmd(flag, value):
    return f"vllm serve m {flag} '{value}'\n"


@pytest.mark.parametrize("vllm,severity", [("0.8.5", "warning"), ("0.10.1.1", "warning"), ("0.33.0", "error")])
def test_compilation_unknown_field_by_extra_policy(vllm, severity):
    found = codes(run(cmd("--compilation-config", '{"bogus": 1}'), vllm=vllm, kind="command"), "PO112")
    assert found == [("PO112", severity, 1, 14)]


@pytest.mark.parametrize("vllm,severity", [("0.8.5", "error"), ("0.10.1.1", "warning"), ("0.33.0", "error")])
def test_speculative_unknown_field_by_extra_policy(vllm, severity):
    text = cmd("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 2, "bogus": 1}')
    assert codes(run(text, vllm=vllm, kind="command"), "PO112") == [("PO112", severity, 1, 14)]


def test_method_literal_enforced_only_where_pydantic_validates():
    text = cmd("--speculative-config", '{"method": "bogus", "model": "x", "num_speculative_tokens": 2}')
    assert codes(run(text, vllm="0.8.5", kind="command"), "PO112") == []   # plain dataclass
    assert codes(run(text, vllm="0.10.1.1", kind="command"), "PO112") == [("PO112", "error", 1, 14)]


def test_field_types_where_pydantic_validates():
    text = cmd("--compilation-config", '{"cudagraph_capture_sizes": "1,2"}')
    assert codes(run(text, vllm="0.8.5", kind="command"), "PO112") == [("PO112", "error", 1, 14)]
    text = cmd("--compilation-config", '{"cudagraph_capture_sizes": [1, 2]}')
    assert codes(run(text, vllm="0.8.5", kind="command"), "PO112") == []


def test_bare_int_compilation_config():
    assert codes(run("vllm serve m --compilation-config 3\n", vllm="0.8.5", kind="command"), "PO112") == []
    assert codes(run("vllm serve m --compilation-config 3\n", vllm="0.33.0", kind="command"), "PO112") == \
        [("PO112", "error", 1, 14)]


@pytest.mark.parametrize("lookup,bad", [('"prompt_lookup_min": 3, "prompt_lookup_max": 3', False),
                                        ('"prompt_lookup_min": 4, "prompt_lookup_max": 3', True),
                                        ('"prompt_lookup_min": 6', False),      # max taken from min
                                        ('"prompt_lookup_max": 2', False)])
def test_ngram_window(lookup, bad):
    text = cmd("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, ' + lookup + "}")
    found = codes(run(text, kind="command"), "PO321")
    assert found == ([("PO321", "error", 1, 14)] if bad else [])


def test_method_without_draft_model():
    text = cmd("--speculative-config", '{"method": "eagle", "num_speculative_tokens": 2}')
    assert codes(run(text, kind="command"), "PO321") == [("PO321", "error", 1, 14)]
    text = cmd("--speculative-config", '{"method": "eagle", "model": "org/eagle-head", "num_speculative_tokens": 2}')
    assert codes(run(text, kind="command"), "PO321") == []


def test_draft_model_refused_in_010_only():
    text = cmd("--speculative-config", '{"model": "org/small", "num_speculative_tokens": 2}')
    assert codes(run(text, vllm="0.10.1.1", kind="command"), "PO321") == [("PO321", "error", 1, 14)]
    assert codes(run(text, vllm="0.8.5", kind="command"), "PO321") == []
    assert codes(run(text, vllm="0.11.0", kind="command"), "PO321") == []


def test_spec_decode_on_v0_refused_from_010():
    text = ("VLLM_USE_V1=0 vllm serve m --speculative-config "
            "'{\"method\": \"ngram\", \"num_speculative_tokens\": 2}'\n")
    assert codes(run(text, vllm="0.10.1.1", kind="command"), "PO321") == [("PO321", "error", 1, 28)]
    assert codes(run(text, vllm="0.9.2", kind="command"), "PO321") == []


def test_zero_tokens_reported_once_per_version():
    text = cmd("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 0}')
    assert codes(run(text, vllm="0.8.5", kind="command"), ("PO11", "PO32")) == [("PO321", "error", 1, 14)]
    assert codes(run(text, vllm="0.33.0", kind="command"), ("PO11", "PO32")) == [("PO112", "error", 1, 14)]  # Field(gt=0)


# --- PO901 / PO902 parsers --------------------------------------------------------------------

def test_tool_parser_registry_by_version():
    text = "model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: qwen3_coder\n"
    assert codes(run(text, vllm="0.8.5"), "PO901") == [("PO901", "error", 4, 3)]
    assert codes(run(text, vllm="0.33.0"), "PO901") == []


def test_plugin_turns_the_unknown_parser_into_a_warning(tmp_path):
    (tmp_path / "mine.py").write_text("")
    text = ("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: mine\n"
            "  tool-parser-plugin: %s\n")
    assert codes(run(text % (tmp_path / "mine.py"), vllm="0.10.1.1"), "PO901") == [("PO901", "warning", 4, 3)]
    # A plugin file that is not there registers nothing (parser-plugin-not-found).
    assert codes(run(text % (tmp_path / "other.py"), vllm="0.10.1.1"), "PO901") == [("PO901", "error", 4, 3)]


def test_reasoning_parser_names_by_version():
    text = "model: m\nargs:\n  reasoning-parser: bogus\n"
    # 0.8.5-0.10 build argparse choices from the registry: a parse error
    assert codes(run(text, vllm="0.8.5"), "PO107") == [("PO107", "error", 3, 3)]
    assert codes(run(text, vllm="0.8.5"), "PO901") == []
    assert codes(run("model: m\nargs:\n  reasoning-parser: qwen3\n", vllm="0.10.1.1"), "PO107") == []
    # 0.33 checks the registry after parsing
    assert codes(run(text, vllm="0.33.0"), "PO901") == [("PO901", "error", 3, 3)]
    assert codes(run("model: m\nargs:\n  reasoning-parser: qwen3\n", vllm="0.33.0"), "PO901") == []


def test_auto_tool_choice_needs_parser():
    assert codes(run("model: m\nargs:\n  enable-auto-tool-choice: true\n"), "PO902") == [("PO902", "error", 3, 3)]
    assert codes(run("model: m\nargs:\n  enable-auto-tool-choice: false\n", vllm="0.10.1.1"), "PO902") == []
    # --enable-reasoning is gone from 0.10: the unknown flag is PO101's, not this rule's
    assert codes(run("model: m\nargs:\n  enable-reasoning: true\n", vllm="0.10.1.1"), "PO902") == []


def test_companion_refused_by_the_parser_is_not_missing():
    # gen/deploy-063: 0.8.5's --reasoning-parser choices lack qwen3; the parse error is the
    # cause, and a PO902 at the same --config token would hide it
    given = run("model: m\nargs:\n  enable-reasoning: true\n  reasoning-parser: qwen3\n")
    assert codes(given, "PO902") == [] and codes(given, "PO107") == [("PO107", "error", 4, 3)]
    accepted = run("model: m\nargs:\n  enable-reasoning: true\n  reasoning-parser: deepseek_r1\n")
    assert codes(accepted, "PO902") == [] and codes(accepted, "PO107") == []


# --- PO108 abbreviations ----------------------------------------------------------------------

def test_abbreviation_warns_where_accepted_and_errors_where_ambiguous():
    accepted = run("vllm serve m --enable-chunked\n", vllm="0.10.1.1", kind="command")
    assert codes(accepted, "PO108") == [("PO108", "warning", 1, 14)] and not codes(accepted, "PO107")
    refused = run("vllm serve m --enable-chunked\n", vllm="0.33.0", kind="command")
    assert codes(refused, "PO107") == [("PO107", "error", 1, 14)] and not codes(refused, "PO108")


def test_paired_disable_flag_is_known_only_in_033():
    assert codes(run("vllm serve m --disable-chunked-prefill\n", vllm="0.33.0", kind="command"), "PO101") == []
    assert codes(run("vllm serve m --disable-chunked-prefill\n", vllm="0.30.0", kind="command"), "PO101") != []


def test_full_name_is_not_an_abbreviation():
    assert codes(run("vllm serve m --enable-chunked-prefill --max-model-len 4096\n", kind="command"), "PO108") == []


def test_log_outputs_needs_log_requests_from_011():
    text = "vllm serve m --enable-log-outputs\n"
    assert codes(run(text, vllm="0.10.1.1", kind="command"), "PO902") == []   # flag exists, no check
    assert codes(run(text, vllm="0.11.0", kind="command"), "PO902") == [("PO902", "error", 1, 14)]
    assert codes(run("vllm serve m --enable-log-outputs --enable-log-requests\n", vllm="0.33.0", kind="command"),
                 "PO902") == []


# --- PO621 and interleaved sliding windows ------------------------------------------------------

MISTRAL_WINDOW = {"model_type": "mistral", "num_attention_heads": 32, "max_position_embeddings": 32768,
                  "sliding_window": 4096}
V0_PREFIX_CACHING = "model: m\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n"


@pytest.mark.parametrize("vllm", ["0.8.5", "0.10.1.1"])
def test_interleaved_window_never_reaches_the_cache_config(vllm):
    # gen/deploy-086: vLLM keeps an interleaved window out of CacheConfig (is_interleaved)
    interleaved = dict(MISTRAL_WINDOW, layer_types=["sliding_attention", "full_attention"] * 16)
    assert codes(run(V0_PREFIX_CACHING, vllm=vllm, model=interleaved), "PO621") == []
    every_layer = dict(MISTRAL_WINDOW, layer_types=["sliding_attention"] * 32)
    assert codes(run(V0_PREFIX_CACHING, vllm=vllm, model=every_layer), "PO621") == [("PO621", "error", 5, 3)]


def test_interleaved_model_types_are_the_copys():
    gemma2 = dict(MISTRAL_WINDOW, model_type="gemma2")   # 0.8.5's interleaved_attn_models names it
    assert codes(run(V0_PREFIX_CACHING, vllm="0.8.5", model=gemma2), "PO621") == []
    assert codes(run(V0_PREFIX_CACHING, vllm="0.8.5", model=MISTRAL_WINDOW), "PO621") == [("PO621", "error", 5, 3)]


# --- PO603 float16 refused by the model type ------------------------------------------------------

GEMMA2 = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "num_attention_heads": 16,
          "num_key_value_heads": 8, "max_position_embeddings": 8192}


@pytest.mark.parametrize("dtype, expected", [("half", [("PO603", "error", 3, 3)]), ("float16", [("PO603", "error", 3, 3)]),
                                             ("bfloat16", []), ("float32", []), ("auto", [])])
def test_float16_refused_for_the_copys_model_types(dtype, expected):
    text = f"model: m\nargs:\n  dtype: {dtype}\n"
    assert codes(run(text, vllm="0.33.0", model=GEMMA2), "PO603") == expected
    assert codes(run(text, vllm="0.33.0", model=dict(GEMMA2, model_type="llama")), "PO603") == []


def test_float16_table_is_the_top_level_model_type():
    # hf_config.model_type: Gemma 3's multimodal config is "gemma3", its text config "gemma3_text"
    gemma3 = {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "num_attention_heads": 8}}
    assert codes(run("model: m\nargs:\n  dtype: half\n", vllm="0.10.1.1", model=gemma3), "PO603") == [("PO603", "error", 3, 3)]
