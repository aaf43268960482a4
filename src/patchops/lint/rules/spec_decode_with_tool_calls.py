"""PO906 spec-decode-with-tool-calls."""

from __future__ import annotations

from typing import Iterator, List

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs

NGRAM = "  speculative-config: '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}'\n"
TOOLS = "  enable-auto-tool-choice: true\n  tool-call-parser: hermes\n"


class SpecDecodeWithToolCalls(Rule):
    """
    ## What it does
    Flags speculative decoding (`speculative_config` with any method: ngram, MTP, EAGLE, a
    draft model; `speculative_model` before 0.8.5) on a server that answers tool calls
    (`enable_auto_tool_choice`, or `workload.tools: true` for a workload that sends tools).

    ## Why is this bad?
    It is a correctness risk, not a speed one. Speculative decoding is meant to be lossless,
    but the draft-and-verify path and the streaming tool-call parsers meet in code that few
    tests cover: in a field run with ngram and MTP speculative decoding the acceptance rate
    looked healthy while every tool call came out wrong (malformed or wrong arguments). vLLM
    logs nothing about it, and throughput numbers look better, so the failure hides behind a
    benchmark that only measures speed.

    ## Fix
    Run the workload's tool calls once with speculative decoding off and compare the parsed
    calls, before trusting them with it on; or serve tool calls from an instance without
    `speculative_config`.
    """

    code = "PO906"
    name = "spec-decode-with-tool-calls"
    severity = "warning"
    versions = ">=0"
    needs = Needs(optional=("workload.tools",))
    vllm_message = None     # the tool calls are wrong, nothing is logged
    stage = "later"
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n" + TOOLS),
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n" + NGRAM, vllm="0.10.1.1"),
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n" + NGRAM + "workload:\n  tools: false\n",
                vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n" + NGRAM + TOOLS, vllm="0.10.1.1", at=(3, 3)),
        # A workload that sends tools (the parser may be set elsewhere).
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n" + NGRAM + "workload:\n  tools: true\n",
                vllm="0.33.0", at=(3, 3)),
        # Before 0.8.5 speculative decoding has its own flags.
        Example("vllm serve /models/Qwen2.5-7B-Instruct --speculative-model '[ngram]' --num-speculative-tokens 4 "
                "--ngram-prompt-lookup-max 4 --enable-auto-tool-choice --tool-call-parser hermes\n",
                kind="command", vllm="0.6.3.post1", at=(1, 40)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        method = inputs.speculative_method(cfg, facts)
        at = inputs.speculative_setting(cfg, facts)
        if method is None or at is None:
            return
        why: List[str] = []
        fields: List[str] = []
        if inputs.bool_value(cfg, "enable_auto_tool_choice"):
            why.append("enable_auto_tool_choice is on")
            fields.append("enable_auto_tool_choice")
        if inputs.ctx_value(cfg, "workload.tools") is True:
            why.append("the workload sends tools")
            fields.append("workload.tools")
        if not why:
            return
        tokens = inputs.num_speculative_tokens(cfg, facts)
        spec = f"{method}, {tokens} speculative token{'s' if tokens != 1 else ''}" if tokens else method
        yield self.diagnostic(
            cfg, at,
            f"speculative decoding ({spec}) with tool calls risks wrong tool calls",
            explanation=f"tool calls: {' and '.join(why)}. This is a correctness risk, not a speed one: in "
            "field runs the acceptance rate looked healthy while every tool call came out wrong, and vLLM "
            f"{facts.version} logs nothing",
            fields=(at.name,) + tuple(fields),
            fix="check the parsed tool calls against a run with speculative decoding off, or serve tool "
                "calls without speculative_config")
