"""PO902 parser-flag-missing."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.config import ServeConfig
from patchops.lint.facts import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs

# switch -> (the parser flag it needs, vLLM's TypeError text)
NEEDS = {
    "enable_auto_tool_choice": ("tool_call_parser",
                                "Error: --enable-auto-tool-choice requires --tool-call-parser"),
    "enable_reasoning": ("reasoning_parser", "Error: --enable-reasoning requires --reasoning-parser"),
}


class ParserFlagMissing(Rule):
    """
    ## What it does
    Flags `--enable-auto-tool-choice` without `--tool-call-parser`, and (on releases that
    have it, 0.7.3-0.9.2) `--enable-reasoning` without `--reasoning-parser`.

    ## Why is this bad?
    `validate_parsed_serve_args` raises before the model loads: `TypeError: Error:
    --enable-auto-tool-choice requires --tool-call-parser`.

    ## Fix
    Name the parser for your model's tool-call (or reasoning) format, such as
    `--tool-call-parser hermes` or `--reasoning-parser deepseek_r1`.
    """

    code = "PO902"
    name = "parser-flag-missing"
    severity = "error"
    versions = ">=0"
    vllm_message = NEEDS["enable_auto_tool_choice"][1]
    VALID = [
        Example("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: hermes\n"),
        Example("model: m\nargs:\n  enable-reasoning: true\n  reasoning-parser: deepseek_r1\n"),
    ]
    INVALID = [
        Example("vllm serve m --enable-auto-tool-choice\n", kind="command", vllm="0.33.0", at=(1, 14)),
        Example("model: m\nargs:\n  enable-reasoning: true\n", vllm="0.8.5", at=(3, 3)),
    ]

    def check(self, cfg: ServeConfig, facts: Facts) -> Iterator[Diagnostic]:
        for switch, (needed, vllm_text) in NEEDS.items():
            found = inputs.bool_setting(cfg, switch)
            if found is None or not inputs.bool_value(cfg, switch) or switch not in facts.flags:
                continue
            if inputs.value(cfg, needed):
                continue
            flag, parser = "--" + switch.replace("_", "-"), "--" + needed.replace("_", "-")
            yield self.diagnostic(
                cfg, found, f"{flag.lstrip('-')} is on without {parser}; vLLM {facts.version} exits "
                "before loading the model",
                fields=(switch, needed), fix=f"add {parser} naming your model's parser",
                vllm_message=vllm_text)
