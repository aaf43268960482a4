"""lint/vllm/request_len.py: what the OpenAI server does with prompt + max_tokens above max_model_len."""

from __future__ import annotations

import pytest

from patchops.lint.vllm.request_len import request_outcome


@pytest.mark.parametrize("version", ["0.6.3.post1", "0.10.0", "0.10.1.1", "0.20.0", "0.30.0", "0.32.0", "0.33.0"])
def test_a_request_that_fits_exactly_is_served_as_asked(version):
    assert request_outcome(version, 3000, 1096, 4096) is None
    assert request_outcome(version, 3000, 1097, 4096) is not None


def test_up_to_0_10_0_one_message_for_both_parts():
    found = request_outcome("0.10.0", 3000, 1097, 4096)
    assert found.refused and found.max_tokens_served is None
    assert found.message == ("This model's maximum context length is 4096 tokens. However, you requested 4097 "
                             "tokens (3000 in the messages, 1097 in the completion). Please reduce the length "
                             "of the messages or completion.")


def test_from_0_10_1_a_full_prompt_is_refused_on_its_own():
    assert request_outcome("0.10.1.1", 4096, 1, 4096).message == (
        "This model's maximum context length is 4096 tokens. However, your request has 4096 input tokens. "
        "Please reduce the length of the input messages.")
    assert request_outcome("0.15.0", 4095, 2, 4096).message == (
        "'max_tokens' or 'max_completion_tokens' is too large: 2. This model's maximum context length is "
        "4096 tokens and your request has 4095 input tokens (2 > 4096 - 4095).")


def test_from_0_20_the_renderer_refuses_max_tokens_above_the_length_first():
    assert request_outcome("0.20.0", 10, 4097, 4096).message == (
        "max_tokens=4097 cannot be greater than max_model_len=max_total_tokens=4096. "
        "Please request fewer output tokens.")
    assert request_outcome("0.30.0", 10, 4096, 4096).message.startswith(
        "This model's maximum context length is 4096 tokens. However, you requested 4096 output tokens")


def test_from_0_20_a_prompt_past_the_allowed_length_is_counted_as_at_least():
    # allowed prompt: 4096 - 1000 = 3096; the tokenizer stops at 3097, so any longer prompt reads as 3097
    for prompt in (3097, 5000):
        assert request_outcome("0.30.0", prompt, 1000, 4096).message == (
            "This model's maximum context length is 4096 tokens. However, you requested 1000 output tokens and "
            "your prompt contains at least 3097 input tokens, for a total of at least 4097 tokens. Please reduce "
            "the length of the input prompt or the number of requested output tokens.")


def test_from_0_32_max_tokens_is_cut_to_what_is_left():
    found = request_outcome("0.32.0", 3000, 2000, 4096)
    assert (found.refused, found.message, found.max_tokens_served) == (False, None, 1096)
    assert request_outcome("0.30.0", 3000, 2000, 4096).refused


def test_from_0_32_a_prompt_of_the_full_length_leaves_no_output_token():
    assert request_outcome("0.33.0", 4096, 10, 4096).message == "max_tokens must be at least 1, got 0."
    assert request_outcome("0.33.0", 4095, 10, 4096).max_tokens_served == 1
    assert request_outcome("0.33.0", 9000, 10, 4096).message == (
        "This model's maximum context length is 4096 tokens. However, your prompt contains at least 4097 input "
        "tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input "
        "prompt.")


def test_from_0_32_max_tokens_above_the_length_is_still_refused():
    assert request_outcome("0.32.0", 10, 4097, 4096).message == (
        "max_tokens=4097 cannot be greater than max_model_len=4096. Please request fewer output tokens.")
    assert request_outcome("0.32.0", 0, 4096, 4096) is None
