"""PO206 chunked-prefill-with-pooling-model."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, routing


class ChunkedPrefillWithPoolingModel(Rule):
    """
    ## What it does
    Flags `enable-chunked-prefill: true` with a pooling task (`--task embed`, `classify`,
    `score`, `reward`, or `--runner pooling`) where vLLM refuses the pair: on the V0 engine
    (0.8.5-0.10.x, `EngineArgs._set_default_args_v0`; 0.7.3 checks in `create_engine_config`).
    The V1 engine of 0.8.5 does not run pooling models, so `--task embed` alone sends the launch
    to V0. The copy's guard says whether the check exists and where.

    ## Why is this bad?
    vLLM refuses to start: "Chunked prefill is not supported for pooling models".

    ## Fix
    Drop `enable-chunked-prefill` for pooling models on these releases, or use a release whose
    V1 engine runs pooling models (0.10+).
    """

    code = "PO206"
    name = "chunked-prefill-with-pooling-model"
    severity = "error"
    versions = ">=0.7.3,<0.10.2"   # the guard decides: gone with V0's default-args code in 0.10.2
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    vllm_message = messages.CHUNKED_PREFILL_WITH_POOLING
    VALID = [
        Example("model: m\nargs:\n  task: embed\n"),
        # 0.10.1.1's V1 engine runs pooling models with chunked prefill.
        Example("model: m\nargs:\n  task: embed\n  enable-chunked-prefill: true\n", vllm="0.10.1.1"),
        Example("model: m\nargs:\n  enable-chunked-prefill: true\n"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  task: embed\n  enable-chunked-prefill: true\n", at=(4, 3)),
        Example("VLLM_USE_V1=0 vllm serve m --task classify --enable-chunked-prefill\n",
                kind="command", vllm="0.10.1.1", at=(1, 44)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        guard = facts.guards.pooling_without_chunked_prefill
        found = inputs.bool_setting(cfg, "enable_chunked_prefill")
        if guard is None or found is None or not inputs.bool_value(cfg, "enable_chunked_prefill"):
            return
        if not inputs.is_pooling(cfg):
            return
        why = ""
        if guard == "v0":
            eng = routing.engine(cfg, facts)
            if eng.value != routing.V0 or eng.error:
                return
            why = f"on the V0 engine: {eng.reason}"
        task = inputs.value(cfg, "task") or inputs.value(cfg, "runner")
        yield self.diagnostic(
            cfg, found, f"chunked prefill with a pooling model (task {task}): vLLM {facts.version} "
            "will refuse to start", explanation=why or None, fields=("enable_chunked_prefill", "task"),
            fix="drop enable-chunked-prefill for this pooling model")
