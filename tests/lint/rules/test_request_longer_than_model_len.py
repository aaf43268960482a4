"""PO209: each release's own refusal (or silent cut) of a request longer than max_model_len."""

from __future__ import annotations

import pytest

from lintkit import linter

lint = linter("PO209")


def spec(prompt: int, output: int, length: int = 8192) -> str:
    return (f"model: m\nargs:\n  max-model-len: {length}\n"
            f"workload:\n  prompt_tokens: {prompt}\n  max_tokens: {output}\n")


@pytest.mark.parametrize("vllm", ["0.8.5", "0.10.1.1", "0.20.0", "0.33.0"])
def test_a_request_of_exactly_max_model_len_is_served(vllm):
    assert lint(spec(7168, 1024), vllm=vllm) == []


def test_a_prompt_of_max_model_len_is_refused_on_its_own_from_0_10_1():
    [hit] = lint(spec(8192, 16), vllm="0.10.1.1")
    assert (hit.severity, hit.line) == ("error", 5)   # at prompt_tokens: the prompt alone is too long
    assert hit.vllm_message == ("This model's maximum context length is 8192 tokens. However, your request has "
                                "8192 input tokens. Please reduce the length of the input messages.")


def test_0_20_refuses_max_tokens_above_max_model_len_first_with_its_f_string_slip():
    [hit] = lint(spec(10, 9000), vllm="0.20.0")
    assert hit.vllm_message == ("max_tokens=9000 cannot be greater than max_model_len=max_total_tokens=8192. "
                                "Please request fewer output tokens.")


def test_0_33_cuts_max_tokens_and_still_refuses_what_cannot_be_cut():
    [cut] = lint(spec(8000, 1024), vllm="0.33.0")
    assert cut.severity == "warning" and "max_tokens cut to 192" in cut.explanation and cut.vllm_message is None
    [over] = lint(spec(10, 9000), vllm="0.33.0")
    assert over.severity == "error" and over.vllm_message.startswith("max_tokens=9000 cannot be greater than "
                                                                     "max_model_len=8192.")
    [long] = lint(spec(9000, 16), vllm="0.33.0")
    assert long.severity == "error" and "your prompt contains at least 8193 input tokens" in long.vllm_message
    [full] = lint(spec(8192, 16), vllm="0.33.0")
    assert full.vllm_message == "max_tokens must be at least 1, got 0."


@pytest.mark.parametrize("vllm, severity", [("0.30.0", "error"), ("0.32.0", "warning"), ("0.33.0", "warning")])
def test_max_tokens_cut_instead_of_refused_from_0_32(vllm, severity):
    [hit] = lint(spec(8000, 1024), vllm=vllm)
    assert hit.severity == severity


def test_every_number_says_where_it_came_from():
    [hit] = lint(spec(7169, 1024))
    assert "prompt_tokens 7169 + max_tokens 1024 = 8193 > max_model_len 8192" in hit.message
    assert hit.explanation.startswith("max_model_len 8192 (set by you)")


def test_a_derived_max_model_len_names_its_config_json_key():
    from patchops.lint.rule import Example
    from patchops.lint.rules.request_longer_than_model_len import DERIVED, QWEN_7B
    from patchops.lint.runner import lint_example

    [hit] = [d for d in lint_example(Example(DERIVED % 31745, vllm="0.10.1.1", model=QWEN_7B)) if d.code == "PO209"]
    assert "max_model_len 32768 (derived from the model's config.json, max_position_embeddings)" in hit.explanation
