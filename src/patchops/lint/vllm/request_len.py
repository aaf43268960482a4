"""What a release's OpenAI server does with a request whose prompt plus max_tokens exceed max_model_len.

The check runs per request, after the server is up, and its wording changed three times:
`serving_engine._validate_input` (0.6.3-0.10.0, and split into two checks from 0.10.1),
`renderers/params.py` TokenizeParams (0.20-0.30), and from 0.32 `get_max_tokens`, which
shortens max_tokens instead of refusing. Boundaries: releases.REQUEST_LEN_*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from patchops.lint.vllm.releases import (REQUEST_LEN_MAX_TOKENS_WORDING, REQUEST_LEN_RENDERER,
                                         REQUEST_MAX_TOKENS_CLAMPED, release)

# Below this many output tokens a reasoning model often ends inside its thinking: in a field log
# max_tokens 200 left 4 of 6 streamed answers empty; 1024 and above gave answers.
MIN_REASONING_TOKENS = 1024


@dataclass(frozen=True)
class RequestOutcome:
    """What vLLM does with one request: refuses it (`message`) or serves it with fewer output tokens."""

    refused: bool
    message: Optional[str]            # vLLM's text, exactly (None: it says nothing)
    max_tokens_served: Optional[int]  # the max_tokens vLLM uses when it shortens the request


def request_outcome(version, prompt: int, max_tokens: int, max_model_len: int) -> Optional[RequestOutcome]:
    """Return what `version` does with a `prompt`-token request asking `max_tokens`; None when it fits.

    The prompt is taken as text tokenized by vLLM: from 0.20 the tokenizer stops at the largest
    allowed length + 1, so any longer prompt is reported as "at least" that many tokens.
    """
    v = release(version)
    if prompt + max_tokens <= max_model_len:
        return None
    if v < REQUEST_LEN_MAX_TOKENS_WORDING:
        # vllm/entrypoints/openai/serving_engine.py:627 (0.10.0), :275 (0.6.3.post1)
        return RequestOutcome(True, (
            f"This model's maximum context length is {max_model_len} tokens. However, you requested "
            f"{prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in the completion). "
            "Please reduce the length of the messages or completion."), None)
    if v < REQUEST_LEN_RENDERER:
        # vllm/entrypoints/openai/serving_engine.py:623,632 (0.10.1.1); engine/serving.py (0.15.0)
        if prompt >= max_model_len:
            return RequestOutcome(True, (
                f"This model's maximum context length is {max_model_len} tokens. However, your request has "
                f"{prompt} input tokens. Please reduce the length of the input messages."), None)
        return RequestOutcome(True, (
            f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This model's maximum "
            f"context length is {max_model_len} tokens and your request has {prompt} input tokens "
            f"({max_tokens} > {max_model_len} - {prompt})."), None)
    if v < REQUEST_MAX_TOKENS_CLAMPED:
        # vllm/renderers/params.py:207 and :419 (0.20.0); the f-string `{max_total_tokens=}`
        # really prints "max_total_tokens=N".
        if max_tokens > max_model_len:
            return RequestOutcome(True, (
                f"max_tokens={max_tokens} cannot be greater than max_model_len=max_total_tokens="
                f"{max_model_len}. Please request fewer output tokens."), None)
        allowed = max_model_len - max_tokens
        seen = min(prompt, allowed + 1)
        qualifier = "at least " if seen == allowed + 1 else ""   # vLLM cannot tell N + 1 from more
        return RequestOutcome(True, (
            f"This model's maximum context length is {max_model_len} tokens. However, you requested "
            f"{max_tokens} output tokens and your prompt contains {qualifier}{seen} input tokens, for a "
            f"total of {qualifier}{seen + max_tokens} tokens. Please reduce the length of the input prompt "
            "or the number of requested output tokens."), None)
    # vllm/renderers/params.py:273,540 and entrypoints/serve/utils/api_utils.py:234 (0.33.0; 0.32.0 alike)
    if max_tokens > max_model_len:
        return RequestOutcome(True, (
            f"max_tokens={max_tokens} cannot be greater than max_model_len={max_model_len}. "
            "Please request fewer output tokens."), None)
    if prompt > max_model_len:
        seen = min(prompt, max_model_len + 1)
        qualifier = "at least " if seen == max_model_len + 1 else ""
        return RequestOutcome(True, (
            f"This model's maximum context length is {max_model_len} tokens. However, your prompt contains "
            f"{qualifier}{seen} input tokens, which exceeds this limit even without any output tokens. "
            "Please reduce the length of the input prompt."), None)
    if prompt == max_model_len:
        # get_max_tokens leaves 0 output tokens; SamplingParams refuses them (sampling_params.py:693)
        return RequestOutcome(True, "max_tokens must be at least 1, got 0.", None)
    return RequestOutcome(False, None, max_model_len - prompt)
