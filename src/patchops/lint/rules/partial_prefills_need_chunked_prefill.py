"""PO308 partial-prefills-need-chunked-prefill."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.config import ServeConfig
from patchops.lint.facts import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, routing, scheduler
from patchops.lint.vllm.model_len import derived_max_len

# SchedulerConfig.__post_init__ (vllm/config.py 0.8.5:2057, config/scheduler.py 0.10.1.1:287).
MESSAGE = "Chunked prefill must be enabled to set max_num_partial_prefills > 1."


class PartialPrefillsNeedChunkedPrefill(Rule):
    """
    ## What it does
    Flags `max_num_partial_prefills` above 1 where the V0 engine runs with chunked prefill off:
    V0 chosen with `VLLM_USE_V1=0`, or reached by the V1 oracle's fallback (partial-prefill
    concurrency is itself a V1 fallback trigger, PO306), on vLLM 0.8.5-0.10.

    ## Why is this bad?
    V0 turns chunked prefill on by itself only above max_model_len 32768; below that,
    SchedulerConfig refuses to start: "Chunked prefill must be enabled to set
    max_num_partial_prefills > 1.". So the setting that sent the launch to V0 also stops it.

    ## Fix
    Remove `max_num_partial_prefills` (V1 schedules prefills its own way), or turn chunked
    prefill on with `--enable-chunked-prefill`.
    """

    code = "PO308"
    name = "partial-prefills-need-chunked-prefill"
    severity = "error"
    versions = ">=0.8.5,<0.11"
    vllm_message = MESSAGE
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nenv:\n  VLLM_USE_V1: \"0\"\nargs:\n"
                "  max-num-partial-prefills: 2\n  enable-chunked-prefill: true\n"),
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-partial-prefills: 1\n  max-model-len: 4096\n"),
        # V0 turns chunked prefill on by itself above 32768
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-partial-prefills: 2\n",
                model={"max_position_embeddings": 131072}),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-partial-prefills: 2\n  max-model-len: 4096\n",
                at=(3, 3)),
        Example("model: /models/Qwen2.5-7B-Instruct\nenv:\n  VLLM_USE_V1: \"0\"\nargs:\n"
                "  max-num-partial-prefills: 2\n  max-model-len: 8192\n", vllm="0.10.1.1", at=(5, 3)),
        # max_model_len derived from config.json (32768 for Qwen2.5-7B), not above 32768
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-partial-prefills: 2\n",
                model={"max_position_embeddings": 32768}, at=(3, 3)),
    ]

    def check(self, cfg: ServeConfig, facts: Facts) -> Iterator[Diagnostic]:
        partial = inputs.int_value(cfg, "max_num_partial_prefills")
        if partial is None or partial <= 1:
            return
        eng = routing.engine(cfg, facts)
        if eng.value != routing.V0 or eng.error:
            return
        chunked = scheduler.chunked_prefill(cfg, facts, eng)
        if chunked.value is not False:
            return
        reason = chunked.reason
        if not chunked.certain and inputs.max_model_len(cfg).value is None and cfg.model_facts is not None:
            derived = derived_max_len(cfg.model_facts, facts.max_len)
            if derived is None or derived.value > scheduler.LONG_CONTEXT:
                return
            reason = (f"V0 leaves chunked prefill off for the max_model_len {int(derived.value)} derived from "
                      "config.json, which is not above 32768")
        elif not chunked.certain:
            return
        yield self.diagnostic(
            cfg, inputs.setting(cfg, "max_num_partial_prefills"),
            f"max_num_partial_prefills ({partial}) needs chunked prefill, but {eng.reason} and {reason}: "
            f"vLLM {facts.version} will refuse to start",
            fields=("max_num_partial_prefills",) + chunked.fields + eng.fields,
            fix="remove max-num-partial-prefills, or add --enable-chunked-prefill")
