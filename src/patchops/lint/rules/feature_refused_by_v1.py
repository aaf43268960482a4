"""PO307 feature-refused-by-v1."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import messages, routing


class FeatureRefusedByV1(Rule):
    """
    ## What it does
    Flags, from vLLM 0.12 (V1 only), the settings that 0.8.5-0.11 sent to V0 and that the V1
    engine still lacks: `--logits-processor-pattern`, partial-prefill concurrency
    (`max_num_partial_prefills` / `max_long_partial_prefills` above 1) and pipeline
    parallelism with an executor other than ray, mp or external_launcher (`uni`). Which of
    them a copy checks is read from its `EngineArgs._check_feature_supported`.

    ## Why is this bad?
    With no V0 left to fall back to, vLLM refuses to start while it builds its configuration:
    "NotImplementedError: Concurrent Partial Prefill is not supported. We recommend to remove
    Concurrent Partial Prefill from your config." (0.12.0-0.30; 0.33.0 keeps only the
    pipeline-parallel check, the other flags are gone and PO101 reports them).

    ## Fix
    Remove the setting; for pipeline parallelism use `--distributed-executor-backend mp` (or
    ray).
    """

    code = "PO307"
    name = "feature-refused-by-v1"
    severity = "error"
    versions = ">=0.12"
    vllm_message = "<feature> is not supported. We recommend to remove <feature> from your config."
    explains = (messages.V1_FORCED_CHECK,)
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 2}\nargs:\n  pipeline-parallel-size: 2\n"
                "  distributed-executor-backend: mp\n", vllm="0.33.0"),
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-partial-prefills: 1\n", vllm="0.12.0"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 2}\nargs:\n  pipeline-parallel-size: 2\n"
                "  distributed-executor-backend: uni\n", vllm="0.33.0", at=(4, 3)),
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-partial-prefills: 2\n", vllm="0.12.0",
                at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for trigger in routing.refused_features(cfg, facts):
            shown = "" if trigger.at is None else f" ({trigger.at.key}: {trigger.at.value!s})"
            yield self.diagnostic(
                cfg, trigger.at,
                f"no V1 support for {trigger.feature if trigger.at is None else f'{trigger.at.key}: {trigger.at.value!s}'}: "
                f"vLLM {facts.version} refuses to start",
                explanation=f"the V1 engine does not support {trigger.feature}{shown}, and vLLM "
                f"{facts.version} has no V0 to fall back to",
                fields=trigger.fields, vllm_message=trigger.refused_message,
                fix="remove it" + (" (or use --distributed-executor-backend mp)"
                                   if trigger.feature == routing.PP_FEATURE else ""))
            return  # vLLM raises at the first
