"""PO302 multistep-falls-back-to-v0."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, releases, routing


class MultistepFallsBackToV0(Rule):
    """
    ## What it does
    Flags `num_scheduler_steps` above 1 where the V1 engine is the default or forced
    (vLLM 0.7.3 with `VLLM_USE_V1=1`, and 0.8.5-0.10.0).

    ## Why is this bad?
    Multi-step scheduling exists only in the V0 engine. From 0.8.5 vLLM silently switches the
    whole launch back to V0, with one log line ("--num-scheduler-steps is not supported by the
    V1 Engine. Falling back to V0."): the V1 scheduler, its defaults (chunked prefill, prefix
    caching, larger batches) and torch.compile are all lost. With `VLLM_USE_V1=1` set
    explicitly vLLM refuses to start instead (NotImplementedError).

    ## Fix
    Remove `num_scheduler_steps`: V1 overlaps scheduling with execution and does not need it.
    If you do want multi-step on V0, say so with `VLLM_USE_V1=0`.
    """

    code = "PO302"
    name = "multistep-falls-back-to-v0"
    severity = "warning"
    versions = ">=0.7.3,<0.10.1"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    vllm_message = messages.MULTISTEP_FALLS_BACK
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "args:\n"
                "  max-model-len: 8192\n", vllm="0.8.5"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.9.2}\n"
                "env:\n"
                "  VLLM_USE_V1: \"0\"\n"
                "args:\n"
                "  num-scheduler-steps: 8\n"
                "  max-model-len: 8192\n", vllm="0.9.2"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "num-scheduler-steps: 8\n"
                "max-model-len: 8192\n", vllm="0.7.3", kind="config"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "num-scheduler-steps: 1\n", vllm="0.10.0", kind="config"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "hardware: {gpus: 1, memory_gib: 80, compute_capability: 9.0}\n"
                "args:\n"
                "  num-scheduler-steps: 8\n"
                "  max-model-len: 8192\n", vllm="0.8.5", at=(5, 3)),
        Example("VLLM_USE_V1=1 vllm serve /models/Qwen2.5-7B-Instruct --num-scheduler-steps 8\n",
                vllm="0.10.0", kind="command", at=(1, 54), severity="error"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.7.3}\n"
                "env:\n"
                "  VLLM_USE_V1: \"1\"\n"
                "args:\n"
                "  num-scheduler-steps: 4\n", vllm="0.7.3", at=(6, 3), severity="error"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.multistep_setting(cfg)
        if found is None:
            return
        steps = inputs.num_scheduler_steps(cfg)
        env = inputs.use_v1_env(cfg)
        ver = facts.version
        fields = ("num_scheduler_steps",) + (("VLLM_USE_V1",) if env is not None else ())
        if releases.release(facts) < releases.V1_DEFAULT:
            if env:
                yield self.diagnostic(
                    cfg, found,
                    f"num_scheduler_steps ({steps}) with VLLM_USE_V1=1: vLLM {ver} refuses to start",
                    explanation="multi-step scheduling exists only in the V0 engine",
                    severity="error", fields=fields, vllm_message=messages.MULTISTEP_FORCED_V1_073,
                    fix="remove num-scheduler-steps to run V1, or drop VLLM_USE_V1=1 to keep "
                        "multi-step on V0")
            return
        if env is False:
            return
        for trigger in routing.oracle_triggers(cfg, facts):
            if not trigger.certain or (trigger.experimental and env):
                continue
            if trigger.feature != "--num-scheduler-steps":
                return  # V0 (or the error) comes from an earlier check that vLLM names instead
            break
        if env:
            yield self.diagnostic(
                cfg, found,
                f"num_scheduler_steps ({steps}) with VLLM_USE_V1=1: vLLM {ver} refuses to start",
                explanation="the V1 engine has no multi-step scheduling",
                severity="error", fields=fields, vllm_message=messages.MULTISTEP_FORCED_V1,
                fix="remove num-scheduler-steps (V1 does not need it), or set VLLM_USE_V1=0 to keep "
                    "multi-step on V0")
            return
        yield self.diagnostic(
            cfg, found,
            f"num_scheduler_steps ({steps}) makes vLLM {ver} fall back from V1 to the V0 engine",
            explanation="vLLM says so in a log warning only; V0 has other defaults (chunked prefill "
            "off up to 32K context, max_num_seqs 256, prefix caching off) and does not compile the model",
            fields=fields,
            fix="remove num-scheduler-steps to run on V1, which needs no multi-step scheduling "
                "(or set VLLM_USE_V1=0 to choose V0 on purpose)")
