"""PO203 chunked-prefill-off-ignored."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, releases, routing


class ChunkedPrefillOffIgnored(Rule):
    """
    ## What it does
    Flags `enable_chunked_prefill` set to false where vLLM does not do what it says: the V1
    engine (0.7.3 with `VLLM_USE_V1=1`, and 0.8.5-0.11.0) sets chunked prefill on for every
    generative model and drops the setting without a word. From 0.12 the setting is respected
    again, with a warning that the model does not officially support it (reported as a note).

    ## Why is this bad?
    Whatever the `false` was for (a fixed prefill batch, reproducing a V0 benchmark, a model
    that misbehaves with chunking) silently does not happen, and the scheduler, batch sizes
    and latency profile differ from what the config reads like.

    ## Fix
    Remove the setting on V1 0.8.5-0.11.0. If prefill really must not be chunked, run V0 on
    purpose (`VLLM_USE_V1=0`, before 0.11) or move to vLLM 0.12+, which honours it.
    """

    code = "PO203"
    name = "chunked-prefill-off-ignored"
    severity = "warning"
    versions = ">=0.7.3"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    vllm_message = None
    VALID = [
        Example("vllm serve /models/Qwen2.5-7B-Instruct --max-model-len 8192\n",
                vllm="0.9.2", kind="command"),
        # V0 honours it.
        Example("VLLM_USE_V1=0 vllm serve /models/Qwen2.5-7B-Instruct --no-enable-chunked-prefill "
                "--max-model-len 8192\n", vllm="0.9.2", kind="command"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "args:\n"
                "  enable-chunked-prefill: true\n", vllm="0.8.5"),
    ]
    INVALID = [
        Example("vllm serve /models/Qwen2.5-7B-Instruct --no-enable-chunked-prefill "
                "--max-model-len 8192 --max-num-batched-tokens 8192\n",
                vllm="0.9.2", kind="command", at=(1, 40)),
        Example("VLLM_USE_V1=1 vllm serve /models/Qwen2.5-7B-Instruct --enable-chunked-prefill false "
                "--max-model-len 8192\n", vllm="0.7.3", kind="command", at=(1, 54)),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --no-enable-chunked-prefill "
                "--max-model-len 8192\n", vllm="0.12.0", kind="command", at=(1, 40), severity="info"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        if inputs.bool_value(cfg, "enable_chunked_prefill") is not False or inputs.is_pooling(cfg):
            return
        found = inputs.bool_setting(cfg, "enable_chunked_prefill")
        ver = facts.version
        if releases.release(facts) >= releases.CHUNKED_PREFILL_HONOURED:
            yield self.diagnostic(
                cfg, found,
                f"enable_chunked_prefill false is respected by vLLM {ver}, which warns about it",
                explanation="vLLM warns that generative models do not officially support running "
                "without chunked prefill and may crash or produce incorrect outputs",
                severity="info", fields=("enable_chunked_prefill",),
                vllm_message=messages.CHUNKED_PREFILL_OFF_UNSUPPORTED,
                fix="remove it unless the model needs whole-prompt prefill; then keep "
                    "max-num-batched-tokens at least max-model-len")
            return
        eng = routing.engine(cfg, facts)
        if eng.value != routing.V1 or eng.error:
            return
        v = releases.release(facts)
        if v < releases.V1_DEFAULT:
            later = "drop VLLM_USE_V1=1 to run V0 (the 0.7.3 default), which honours it"
        elif v < releases.V0_REMOVED:
            later = "set VLLM_USE_V1=0 to run V0, which honours it"
        else:
            later = "vLLM 0.12+ honours it"
        yield self.diagnostic(
            cfg, found,
            f"enable_chunked_prefill false is ignored by the V1 engine of vLLM {ver}",
            explanation="the V1 engine turns chunked prefill on for every generative model without a warning",
            fields=("enable_chunked_prefill",) + eng.fields,
            fix=f"remove it; if prefill must not be chunked, {later}")
