"""PO209 request-longer-than-model-len."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, model_len
from patchops.lint.vllm.request_len import request_outcome

# Qwen/Qwen2.5-7B-Instruct config.json: max_position_embeddings 32768, no rope scaling.
QWEN_7B = {"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
           "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28,
           "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}
SPEC = ("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 8192\n"
        "workload:\n  prompt_tokens: %d\n  max_tokens: %d\n")
DERIVED = "model: /models/Qwen2.5-7B-Instruct\nworkload:\n  prompt_tokens: %d\n  max_tokens: 1024\n"


class RequestLongerThanModelLen(Rule):
    """
    ## What it does
    Adds `workload.prompt_tokens` and `workload.max_tokens` and compares the sum with the
    max_model_len the server runs with (set, or derived from the model's config.json as the
    version derives it), and says what that vLLM version does with such a request.

    ## Why is this bad?
    vLLM starts fine and refuses every such request at request time, with a 400 whose wording
    depends on the version: "This model's maximum context length is 8192 tokens. However, you
    requested 8193 tokens (7169 in the messages, 1024 in the completion)." (0.6.3-0.10.0),
    "'max_tokens' or 'max_completion_tokens' is too large: 1024. ..." (0.10.1-0.15),
    "... However, you requested 1024 output tokens and your prompt contains at least 7169
    input tokens, for a total of at least 8193 tokens." (0.20-0.30). From 0.32 vLLM serves it
    and silently cuts max_tokens to max_model_len - prompt, so a benchmark measures shorter
    answers than it asked for (a prompt of max_model_len tokens or more is still refused).

    ## Fix
    Raise max-model-len to prompt_tokens + max_tokens (if the model and the KV cache allow it),
    or send shorter prompts or a smaller max_tokens.
    """

    code = "PO209"
    name = "request-longer-than-model-len"
    severity = "error"
    versions = ">=0"
    needs = Needs(optional=("model", "workload.max_tokens", "workload.prompt_tokens"))
    vllm_message = None     # by version: request_len.request_outcome()
    stage = "later"         # the server refuses the request, not the launch
    VALID = [
        Example(SPEC % (7168, 1024)),
        # 32768 from config.json's max_position_embeddings: 31744 + 1024 fits.
        Example(DERIVED % 31744, vllm="0.10.1.1", model=QWEN_7B),
        # Without max_tokens nothing is reserved for the answer: not this rule's business.
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 8192\n"
                "workload:\n  prompt_tokens: 8000\n"),
    ]
    INVALID = [
        Example(SPEC % (7169, 1024), at=(6, 3)),
        Example(DERIVED % 31745, vllm="0.10.1.1", model=QWEN_7B, at=(4, 3)),
        Example(SPEC % (7169, 1024), vllm="0.25.0", at=(6, 3)),
        # 0.33 serves it with max_tokens cut to 1023.
        Example(SPEC % (7169, 1024), vllm="0.33.0", at=(6, 3), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        prompt_at = inputs.ctx_setting(cfg, "workload.prompt_tokens")
        output_at = inputs.ctx_setting(cfg, "workload.max_tokens")
        if prompt_at is None or output_at is None:
            return
        prompt, output = inputs.to_int(prompt_at.value), inputs.to_int(output_at.value)
        length = model_len.max_model_len(cfg, facts)
        if not prompt or not output or not isinstance(length.value, int) or length.value <= 0:
            return
        origin = f"{length.reason} (set by you)" if length.fields else length.reason
        outcome = request_outcome(facts, prompt, output, length.value)
        if outcome is None:
            return
        total = prompt + output
        message = (f"workload prompt_tokens {prompt} + max_tokens {output} = {total} > max_model_len "
                   f"{length.value}")
        if outcome.refused:
            explanation = f"{origin}: vLLM {facts.version} starts, then refuses every such request"
            severity = None
        else:
            explanation = (f"{origin}: vLLM {facts.version} serves such a request with max_tokens cut to "
                           f"{outcome.max_tokens_served} and says nothing, so answers are shorter than asked")
            severity = "warning"
        yield self.diagnostic(
            cfg, output_at if prompt < length.value else prompt_at, message, explanation=explanation,
            severity=severity,
            fields=("workload.prompt_tokens", "workload.max_tokens") + tuple(length.fields),
            fix=f"raise max-model-len to {total}, or send prompts of at most {max(length.value - output, 0)} "
                f"tokens with this max_tokens",
            vllm_message=outcome.message)
