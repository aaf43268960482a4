"""Rules and rule shapes added for vLLM 0.33's config-time checks: both sides of each boundary."""

from __future__ import annotations

import pytest

from tests.lint.lintkit import findings, said

BF16_MODEL = {"model_type": "qwen2", "torch_dtype": "bfloat16", "num_attention_heads": 28}
FP16_MODEL = {"model_type": "llama", "torch_dtype": "float16", "num_attention_heads": 32}


def errors(code, text, vllm, kind="spec", **kw):
    return [(d.severity, d.line, d.column) for d in findings(code, text, vllm, kind, **kw)]


@pytest.mark.parametrize("value,bad", [(-1, False), (0, True), (1, False), ("auto", False)])
def test_max_model_len_after_resolution(value, bad):
    found = errors("PO111", f"model: m\nargs:\n  max-model-len: {value}\n", "0.33.0")
    assert found == ([("error", 3, 3)] if bad else [])


@pytest.mark.parametrize("threshold,bad", [(4095, False), (4096, False), (4097, True)])
def test_long_prefill_threshold_against_max_model_len(threshold, bad):
    text = f"model: m\nargs:\n  max-model-len: 4096\n  long-prefill-token-threshold: {threshold}\n"
    assert errors("PO111", text, "0.33.0") == ([("error", 4, 3)] if bad else [])
    assert errors("PO111", text, "0.10.1.1") == []     # only under max_num_partial_prefills > 1 there


@pytest.mark.parametrize("vllm,count,bad", [("0.10.1.1", 1, False), ("0.10.1.1", 2, True),
                                            ("0.33.0", 0, False), ("0.33.0", 1, True)])
def test_api_servers_with_headless(vllm, count, bad):
    text = f"vllm serve m --headless --api-server-count {count}\n"
    assert errors("PO111", text, vllm, "command") == ([("error", 1, 25)] if bad else [])
    assert errors("PO111", f"vllm serve m --api-server-count {count + 4}\n", vllm, "command") == []


@pytest.mark.parametrize("kv,model,bad", [("bfloat16", BF16_MODEL, False), ("float16", BF16_MODEL, True),
                                          ("float16", FP16_MODEL, False), ("bfloat16", FP16_MODEL, True),
                                          ("fp8", BF16_MODEL, False), ("auto", FP16_MODEL, False)])
def test_float_kv_cache_against_model_dtype(kv, model, bad):
    from patchops.lint.rule import Example
    from patchops.lint.runner import lint_example

    text = f"model: m\nargs:\n  kv-cache-dtype: {kv}\n"
    found = [d for d in lint_example(Example(text, vllm="0.33.0", model=model)) if d.code == "PO604"]
    assert [(d.severity, d.line) for d in found] == ([("error", 3)] if bad else [])
    if bad:
        assert found[0].vllm_message.startswith(f'kv_cache_dtype="{kv}" is incompatible with dtype="')


def test_bfloat16_checkpoint_is_served_as_float16_below_ampere():
    from patchops.lint.vllm.memory import served_dtype
    from patchops.lint.input.model_config import model_facts_from_dict

    model = model_facts_from_dict(BF16_MODEL)
    assert served_dtype("auto", model, (7, 5)) == "float16"
    assert served_dtype("auto", model, (8, 0)) == "bfloat16"
    assert served_dtype("half", None, None) == "float16"
    assert served_dtype("auto", model_facts_from_dict({"torch_dtype": "float32"}), (9, 0)) is None


def test_chat_template_relative_to_the_input(tmp_path):
    (tmp_path / "chat.jinja").write_text("{{ messages }}")
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nargs:\n  chat-template: chat.jinja\n")
    from patchops import api

    assert [d for d in api.lint(spec, vllm_version="0.8.5").diagnostics if d.code == "PO905"] == []
    spec.write_text("model: m\nargs:\n  chat-template: chats/chat.jinja\n")
    assert [d.code for d in api.lint(spec, vllm_version="0.8.5").diagnostics if d.code == "PO905"] == ["PO905"]


def test_bare_template_name_may_be_builtin_only_from_02x():
    text = "model: m\nargs:\n  chat-template: template_chatml.jinja\n"
    assert errors("PO905", text, "0.8.5") == [("error", 3, 3)]
    assert errors("PO905", text, "0.33.0") == []


@pytest.mark.parametrize("vllm", ["0.10.1.1", "0.33.0"])
def test_unknown_quantization_lower_cased(vllm):
    assert errors("PO808", "model: m\nargs:\n  quantization: FP8\n", vllm) == []
    assert errors("PO808", "model: m\nargs:\n  quantization: fp9\n", vllm) == [("error", 3, 3)]
    assert errors("PO808", "model: m\nargs:\n  quantization: fp9\n", "0.8.5") == []   # argparse: PO107


def test_deprecated_quantization_needs_the_allow_flag():
    text = "model: m\nargs:\n  quantization: fbgemm_fp8\n"
    assert errors("PO808", text, "0.33.0") == [("error", 3, 3)]
    assert errors("PO808", text + "  allow-deprecated-quantization: true\n", "0.33.0") == []
    assert errors("PO808", text, "0.10.1.1") == []     # not deprecated there


def test_executor_import_path_needs_a_dot():
    assert errors("PO710", "model: m\nargs:\n  distributed-executor-backend: bogus\n", "0.33.0") == [("error", 3, 3)]
    assert errors("PO710", "model: m\nargs:\n  distributed-executor-backend: a.B\n", "0.33.0") == []
    assert errors("PO710", "model: m\nargs:\n  distributed-executor-backend: bogus\n", "0.10.1.1") == []


def test_attention_backend_flag_any_case():
    text = "vllm serve m --attention-backend {}\n"
    assert errors("PO501", text.format("triton_attn"), "0.33.0", "command") == []
    assert errors("PO501", text.format("TRITON_ATTENTION"), "0.33.0", "command") == [("error", 1, 14)]


def test_nested_enum_and_class_fields():
    cmd = "vllm serve m --compilation-config '{}'\n"
    assert errors("PO112", cmd.format('{"cudagraph_mode": "Full"}'), "0.33.0", "command") == []
    assert errors("PO112", cmd.format('{"cudagraph_mode": "FULLY"}'), "0.33.0", "command") == [("error", 1, 14)]
    renamed = cmd.format('{"pass_config": {"enable_noop": true}}')
    assert errors("PO112", renamed, "0.33.0", "command") == [("error", 1, 14)]
    assert errors("PO112", renamed, "0.10.1.1", "command") == []    # the 0.10 name


def test_missing_config_file(tmp_path):
    script = tmp_path / "serve.sh"
    script.write_text("vllm serve m --config serve.yaml\n")
    from patchops import api

    found = [d for d in api.lint(script, vllm_version="0.33.0").diagnostics if d.code == "PO107"]
    assert [(d.severity, d.line) for d in found] == [("error", 1)]
    assert "No such file or directory: 'serve.yaml'" in said(found[0])
    (tmp_path / "serve.yaml").write_text("max-model-len: 4096\n")
    assert [d for d in api.lint(script, vllm_version="0.33.0").diagnostics if d.code == "PO107"] == []
