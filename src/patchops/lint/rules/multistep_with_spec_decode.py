"""PO304 multistep-with-spec-decode."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, releases


class MultistepWithSpecDecode(Rule):
    """
    ## What it does
    Flags multi-step scheduling (`num_scheduler_steps` > 1) together with speculative
    decoding (`speculative_model` up to 0.7.3, `speculative_config` from 0.8.5).

    ## Why is this bad?
    `EngineArgs.create_engine_config` refuses the pair before anything loads (vLLM
    0.6.3-0.10.0): "Speculative decoding is not supported with multi-step
    (--num-scheduler-steps > 1)".

    ## Fix
    Choose one: remove `num_scheduler_steps`, or remove the speculative decoding settings.
    """

    code = "PO304"
    name = "multistep-with-spec-decode"
    severity = "error"
    versions = ">=0.6.3,<0.10.1"
    vllm_message = "Speculative decoding is not supported with multi-step (--num-scheduler-steps > 1)"
    VALID = [
        Example("model: /models/Llama-3.1-8B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "args:\n"
                "  speculative-model: '[ngram]'\n"
                "  num-speculative-tokens: 4\n"
                "  ngram-prompt-lookup-max: 4\n", vllm="0.6.3.post1"),
        Example("model: /models/Llama-3.1-8B-Instruct\n"
                "num-scheduler-steps: 8\n"
                "max-model-len: 8192\n", vllm="0.8.5", kind="config"),
    ]
    INVALID = [
        Example("model: /models/Llama-3.1-8B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "args:\n"
                "  num-scheduler-steps: 8\n"
                "  speculative-model: '[ngram]'\n"
                "  num-speculative-tokens: 4\n"
                "  ngram-prompt-lookup-max: 4\n", vllm="0.6.3.post1", at=(5, 3)),
        Example("vllm serve /models/Llama-3.1-8B-Instruct --num-scheduler-steps 8 "
                "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 4, "
                "\"prompt_lookup_max\": 4}'\n", vllm="0.9.2", kind="command", at=(1, 66)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        if inputs.v0_multistep_setting(cfg, facts) is None:
            return
        steps = inputs.num_scheduler_steps(cfg)
        name = "speculative_model" if releases.release(facts) < releases.SPECULATIVE_CONFIG else "speculative_config"
        spec = inputs.setting(cfg, name)
        if spec is None or inputs.speculative_method(cfg, facts) is None:
            return
        yield self.diagnostic(
            cfg, spec,
            f"{name} with num_scheduler_steps ({steps}): vLLM {facts.version} refuses to start",
            explanation="vLLM cannot combine speculative decoding with multi-step scheduling",
            fields=(name, "num_scheduler_steps"),
            fix=f"remove num-scheduler-steps, or remove {spec.key} (and the other speculative "
                "settings)")
