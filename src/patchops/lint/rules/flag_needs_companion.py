"""PO902 flag-needs-companion."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, messages

class FlagNeedsCompanion(Rule):
    """
    ## What it does
    Flags a switch the serve front end refuses without its companion flag:
    `--enable-auto-tool-choice` without `--tool-call-parser`, `--enable-reasoning` without
    `--reasoning-parser` (0.7.3-0.9.2) and `--enable-log-outputs` without
    `--enable-log-requests` (0.11+). The pairs are read from the copy's
    `validate_parsed_serve_args` (`if args.x and not args.y: raise TypeError(...)`), plus
    `--enable-prompt-adapter` without `--max-prompt-adapter-token` (its default 0 is refused by
    `PromptAdapterConfig`: "max_prompt_adapter_token must be set.", 0.6.3-0.9).

    ## Why is this bad?
    `validate_parsed_serve_args` raises before the model loads: `TypeError: Error:
    --enable-auto-tool-choice requires --tool-call-parser`.

    ## Fix
    Add the companion: the parser for your model's tool-call (or reasoning) format, such as
    `--tool-call-parser hermes` or `--reasoning-parser deepseek_r1`, or `--enable-log-requests`.
    """

    code = "PO902"
    name = "flag-needs-companion"
    severity = "error"
    versions = ">=0"
    vllm_message = "Error: --enable-auto-tool-choice requires --tool-call-parser"
    explains = (messages.TOOL_PARSER_NEEDED_CHECK, messages.REASONING_PARSER_NEEDED_CHECK,
                messages.LOG_REQUESTS_NEEDED_CHECK, messages.PROMPT_ADAPTER_TOKENS_CHECK,
                messages.EXCLUSIVE_FLAGS_CHECK)
    VALID = [
        Example("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: hermes\n"),
        Example("model: m\nargs:\n  enable-reasoning: true\n  reasoning-parser: deepseek_r1\n"),
        Example("model: m\nargs:\n  enable-prompt-adapter: true\n  max-prompt-adapter-token: 64\n"),
    ]
    INVALID = [
        Example("vllm serve m --enable-auto-tool-choice\n", kind="command", vllm="0.33.0", at=(1, 14)),
        Example("model: m\nargs:\n  enable-reasoning: true\n", vllm="0.8.5", at=(3, 3)),
        Example("vllm serve m --enable-log-outputs\n", kind="command", vllm="0.33.0", at=(1, 14)),
        Example("model: m\nargs:\n  enable-prompt-adapter: true\n", vllm="0.8.5", at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for switch, (needed, vllm_text) in sorted(facts.companions.items()):
            found = inputs.bool_setting(cfg, switch)
            if found is None or not inputs.bool_value(cfg, switch):
                continue
            if inputs.value(cfg, needed) or cfg.refusal(needed) is not None:
                continue  # a companion the parser refuses fails there first (PO107), not here
            flag, companion = "--" + switch.replace("_", "-"), "--" + needed.replace("_", "-")
            yield self.diagnostic(
                cfg, found, f"{flag.lstrip('-')} is on without {companion}",
                explanation=f"vLLM {facts.version} exits before loading the model",
                fields=(switch, needed), fix=f"add {companion}",
                vllm_message=vllm_text)
