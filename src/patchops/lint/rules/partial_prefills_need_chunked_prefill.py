"""PO205 partial-prefills-need-chunked-prefill."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, routing, scheduler


class PartialPrefillsNeedChunkedPrefill(Rule):
    """
    ## What it does
    Flags `max_num_partial_prefills` above 1 where chunked prefill ends up off: turned off and
    honoured (V0, 0.12+), or left off by V0 (max_model_len up to 32768). The V1 engine of
    0.8-0.10 does not support concurrent partial prefills, so the setting itself sends the
    launch to V0, where chunked prefill is off by default. Read from the copy's guard in
    `SchedulerConfig` (0.7.3-0.25).

    ## Why is this bad?
    `SchedulerConfig` refuses to start: "Chunked prefill must be enabled to set
    max_num_partial_prefills > 1."

    ## Fix
    Set `enable-chunked-prefill: true`, or drop `max-num-partial-prefills`.
    """

    code = "PO205"
    name = "partial-prefills-need-chunked-prefill"
    severity = "error"
    # SchedulerConfig._verify_args has the guard in 0.7.3-0.25; 0.11 has only V1, which always chunks.
    versions = ">=0.7.3,!=0.11.*,<0.30"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    vllm_message = messages.PARTIAL_PREFILLS_NEED_CHUNKED_PREFILL
    explains = (messages.CHUNKED_PREFILL_NEEDED_CHECK,)
    VALID = [
        Example("model: m\nargs:\n  max-num-partial-prefills: 2\n  enable-chunked-prefill: true\n"
                "  max-model-len: 4096\n"),
        Example("model: m\nargs:\n  max-num-partial-prefills: 1\n  max-model-len: 4096\n"),
        # 0.30 dropped partial prefills with the guard (the flag is unknown there: PO101).
        Example("model: m\nargs:\n  max-num-partial-prefills: 2\n  no-enable-chunked-prefill: true\n",
                vllm="0.30.0"),
    ]
    INVALID = [
        # Partial prefills send 0.8.5 to V0, which leaves chunked prefill off at 4096.
        Example("model: m\nargs:\n  max-num-partial-prefills: 2\n  max-model-len: 4096\n", at=(3, 3)),
        Example("VLLM_USE_V1=0 vllm serve m --max-num-partial-prefills 2 --no-enable-chunked-prefill "
                "--max-model-len 4096\n", kind="command", vllm="0.10.1.1", at=(1, 28)),
        # Unknown max_model_len: V0 may turn chunked prefill on (above 32K), so a warning.
        Example("model: m\nargs:\n  max-num-partial-prefills: 2\n", at=(3, 3), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, "max_num_partial_prefills")
        partial = inputs.to_int(found.value) if found is not None else None
        if facts.guards.partial_prefills_need_chunked is None or partial is None or partial <= 1:
            return
        eng = routing.config_engine(cfg, facts)  # SchedulerConfig's check
        if eng.error:
            return
        chunked = scheduler.chunked_prefill(cfg, facts, eng)
        if False not in chunked.candidates:
            return
        certain = chunked.value is False and chunked.certain
        outcome = "will refuse to start" if certain else "refuses to start if it stays off"
        yield self.diagnostic(
            cfg, found, f"max_num_partial_prefills ({partial}) needs chunked prefill, which is "
            f"{'off' if certain else 'possibly off'}",
            explanation=f"vLLM {facts.version} {outcome}; chunked prefill: {chunked.reason}",
            severity=None if certain else "warning",
            fields=("max_num_partial_prefills", "enable_chunked_prefill") + chunked.fields,
            fix="set enable-chunked-prefill: true, or drop max-num-partial-prefills")
