"""PO201 batched-tokens-below-model-len."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, model_len, routing, scheduler


# Qwen/Qwen2.5-7B-Instruct config.json dimensions (its max_position_embeddings varies per example).
QWEN_7B = {"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
           "num_key_value_heads": 4, "num_hidden_layers": 28, "intermediate_size": 18944,
           "vocab_size": 152064, "torch_dtype": "bfloat16"}


class BatchedTokensBelowModelLen(Rule):
    """
    ## What it does
    Flags chunked prefill off with max_num_batched_tokens below max_model_len (stated, or
    derived from the model's config.json when unset, as vLLM does). Chunked prefill
    is off when the user turns it off and the engine honours that (V0, and 0.12+), or when V0
    leaves it off by default (max_model_len up to 32768, or a model V0 will not chunk). The
    V1 engine of 0.8.5-0.11 always chunks, so it cannot produce this, unless the config falls
    back to V0 (multi-step scheduling does).

    ## Why is this bad?
    `SchedulerConfig` refuses to start: "max_num_batched_tokens (8192) is smaller than
    max_model_len (100000)". On V0 0.6.3 this surfaces only after the weights have loaded.

    ## Fix
    Turn chunked prefill on, or raise max_num_batched_tokens to at least max_model_len, or
    lower max_model_len to max_num_batched_tokens.
    """

    code = "PO201"
    name = "batched-tokens-below-model-len"
    severity = "error"
    versions = ">=0.6.3"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    vllm_message = messages.BATCHED_TOKENS_BELOW_MODEL_LEN
    explains = (messages.BATCHED_TOKENS_CHECK,)
    VALID = [
        # Unset, max_model_len is what vLLM derives from config.json: 8192 fits the budget.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-num-batched-tokens: 8192\n", vllm="0.6.3.post1", kind="config",
                model=dict(QWEN_7B, max_position_embeddings=8192)),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-model-len: 4096\n"
                "max-num-batched-tokens: 8192\n", vllm="0.6.3.post1", kind="config"),
        # V1 always chunks: the same numbers are fine on 0.8.5.
        Example("model: /models/Qwen2.5-32B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "args:\n"
                "  max-model-len: 100000\n"
                "  max-num-batched-tokens: 8192\n", vllm="0.8.5"),
        # max_model_len unknown (from the model's config.json): nothing to compare.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "enable-chunked-prefill: false\n"
                "max-num-batched-tokens: 8192\n", vllm="0.6.3.post1", kind="config"),
    ]
    INVALID = [
        # Seed incident 1.
        Example("model: /models/Qwen2.5-32B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "args:\n"
                "  num-scheduler-steps: 4\n"
                "  enable-chunked-prefill: false\n"
                "  max-model-len: 100000\n"
                "  max-num-batched-tokens: 8192\n"
                "hardware: {gpus: 4, compute_capability: 8.0}\n", vllm="0.6.3.post1", at=(7, 3)),
        # V0 leaves chunked prefill off at 32K.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-model-len: 32768\n"
                "max-num-batched-tokens: 8192\n", vllm="0.7.3", kind="config", at=(3, 1)),
        # 0.12 respects an explicit off.
        Example("vllm serve /models/Qwen2.5-7B-Instruct --no-enable-chunked-prefill "
                "--max-model-len 32768 --max-num-batched-tokens 4096\n",
                vllm="0.12.0", kind="command", at=(1, 90)),
        # Multi-step sends 0.9.2 to V0, which leaves chunked prefill off at 16K.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "num-scheduler-steps: 8\n"
                "max-model-len: 16384\n"
                "max-num-batched-tokens: 8192\n", vllm="0.9.2", kind="config", at=(4, 1)),
        # Unset, max_model_len is derived from config.json (16384); V0 leaves chunked prefill off.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-num-batched-tokens: 8192\n", vllm="0.6.3.post1", kind="config",
                model=dict(QWEN_7B, max_position_embeddings=16384), at=(2, 1)),
        # VLLM_USE_V1=0 runs V0, which honours an explicit off (0.8-0.10.x)
        Example("VLLM_USE_V1=0 vllm serve m --no-enable-chunked-prefill --max-model-len 16384 "
                "--max-num-batched-tokens 8192\n", vllm="0.10.2", kind="command", at=(1, 78)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        mml = model_len.max_model_len(cfg, facts)
        if mml.value is None:
            return
        eng = routing.config_engine(cfg, facts)  # SchedulerConfig's check
        if eng.error:
            return
        chunked = scheduler.chunked_prefill(cfg, facts, eng)
        if False not in chunked.candidates:
            return
        found = inputs.setting(cfg, "max_num_batched_tokens")
        budget = inputs.to_int(found.value) if found is not None else None
        source = "set"
        if budget is None:
            # Unset, every version defaults it to at least max_model_len when chunked prefill is
            # off; only a fork's literal EngineArgs default can be smaller.
            budget = inputs.to_int(facts.field_defaults.get("max_num_batched_tokens"))
            source = "this vLLM build's default"
        if budget is None or budget >= mml.value:
            return
        certain = chunked.value is False and chunked.certain
        ver = facts.version
        message = f"max_num_batched_tokens {budget} < max_model_len {mml.value}"
        if certain:
            message += " with chunked prefill off"
            explanation = f"vLLM {ver} will refuse to start; chunked prefill is off: {chunked.reason}"
        else:
            message += f": vLLM {ver} possibly refuses to start"
            explanation = f"{chunked.reason}, and with chunked prefill off this is an error"
        if source != "set":
            explanation = f"max_num_batched_tokens {budget} is {source}; {explanation}"
        fix = (f"turn chunked prefill on, or raise max-num-batched-tokens to {mml.value}, or lower "
               f"max-model-len to {budget}")
        yield self.diagnostic(
            cfg, found or inputs.setting(cfg, "max_model_len"), message, explanation=explanation,
            severity=None if certain else "warning",
            fields=tuple(dict.fromkeys(("max_num_batched_tokens", "max_model_len") + chunked.fields
                                       + (("enable_chunked_prefill",) if not chunked.fields else ()))),
            fix=fix,
            vllm_message=messages.BATCHED_TOKENS_BELOW_MODEL_LEN.replace("{max_num_batched_tokens}", str(budget))
                                     .replace("{max_model_len}", str(mml.value)))
