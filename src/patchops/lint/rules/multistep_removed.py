"""PO301 multistep-removed."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, wording
from patchops.lint.vllm.scheduler import MULTISTEP_FLAGS


class MultistepRemoved(Rule):
    """
    ## What it does
    Flags `num_scheduler_steps` (and `multi_step_stream_outputs`) on vLLM 0.10.1 and later.

    ## Why is this bad?
    Multi-step scheduling was removed with the V0 engine in vLLM 0.10.1. The flags no longer
    exist, so `vllm serve` stops at argument parsing: "vllm: error: unrecognized arguments:
    --num-scheduler-steps 8". Configs carried over from 0.6-0.10 benchmarks hit this first.

    ## Fix
    Remove the key. The V1 engine overlaps scheduling with execution (async scheduling) and
    needs no multi-step setting. To keep multi-step scheduling, pin vLLM below 0.10.1.
    """

    code = "PO301"
    name = "multistep-removed"
    severity = "error"
    versions = ">=0.10.1"
    vllm_message = "unrecognized arguments: --num-scheduler-steps {n}"
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.10.2}\n"
                "args:\n"
                "  max-model-len: 8192\n"
                "  async-scheduling: true\n", vllm="0.10.2"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-model-len: 8192\n", vllm="0.11.0", kind="config"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-32B-Instruct\n"
                "vllm: {version: 0.10.2}\n"
                "hardware: {gpus: 4, compute_capability: 8.0}\n"
                "args:\n"
                "  tensor-parallel-size: 4\n"
                "  num-scheduler-steps: 8\n"
                "  max-model-len: 32768\n", vllm="0.10.2", at=(6, 3)),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --max-model-len 8192 --num-scheduler-steps 4\n",
                vllm="0.11.0", kind="command", at=(1, 61)),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "num_scheduler_steps: 8\n"
                "multi_step_stream_outputs: true\n", vllm="0.12.0", kind="config", at=(2, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for name in MULTISTEP_FLAGS:
            if facts.flags and name in facts.flags:
                continue  # a fork that kept multi-step: the flag still parses
            found = inputs.setting(cfg, name) or inputs.unknown_setting(cfg, name)
            if found is None:
                continue
            option = "--" + name.replace("_", "-")
            shown = wording.shown(found)
            token = wording.as_token(found, option)
            what = ("multi-step scheduling" if name == "num_scheduler_steps"
                    else "multi-step output streaming")
            yield self.diagnostic(
                cfg, found,
                f"{name} ({shown}) no longer exists in vLLM {facts.version}: vLLM refuses to start",
                explanation=f"{what} was removed with the V0 engine in 0.10.1, so vLLM will refuse "
                f"to start with \"unrecognized arguments: {token}\"",
                fields=(name,),
                fix=f"remove {found.key}: the V1 engine schedules asynchronously and needs no "
                    "multi-step setting (or pin vLLM < 0.10.1 to keep multi-step)",
                vllm_message=f"unrecognized arguments: {token}")
