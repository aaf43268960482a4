"""PO903 reasoning-budget-too-small."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs
from patchops.lint.vllm.request_len import MIN_REASONING_TOKENS

SPEC = "model: /models/QwQ-32B\nargs:\n  reasoning-parser: deepseek_r1\nworkload:\n  max_tokens: %d\n"


class ReasoningBudgetTooSmall(Rule):
    """
    ## What it does
    Flags a `workload.max_tokens` below 1024 when a reasoning parser is on (`reasoning_parser`,
    and on 0.7.3-0.9.2 `enable_reasoning` as well).

    ## Why is this bad?
    A reasoning model spends its first hundreds of tokens thinking; the parser moves them to
    `reasoning_content`, so a request that stops at max_tokens before the thinking ends comes
    back with an empty `content` and no error. A field log: max_tokens 200, 4 of 6 streamed
    answers empty.

    ## Fix
    Give reasoning requests max_tokens of 1024 or more, or turn thinking off for short answers.
    """

    code = "PO903"
    name = "reasoning-budget-too-small"
    severity = "warning"
    versions = ">=0.7.3"    # --reasoning-parser first exists in 0.7.3
    needs = Needs(optional=("workload.max_tokens",))
    vllm_message = None     # the answer is empty, nothing is logged
    stage = "later"
    VALID = [
        Example(SPEC % 1024, vllm="0.11.0"),
        Example("model: /models/QwQ-32B\nworkload:\n  max_tokens: 200\n"),
        # 0.7.3-0.9.2 parse reasoning only with --enable-reasoning.
        Example(SPEC % 200, vllm="0.9.2"),
    ]
    INVALID = [
        Example(SPEC % 1023, vllm="0.11.0", at=(5, 3)),
        Example("model: /models/QwQ-32B\nargs:\n  enable-reasoning: true\n  reasoning-parser: deepseek_r1\n"
                "workload:\n  max_tokens: 200\n", vllm="0.9.2", at=(6, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        parser = inputs.setting(cfg, "reasoning_parser")
        if parser is None or not parser.value:
            return
        if "enable_reasoning" in facts.flags and not inputs.bool_value(cfg, "enable_reasoning"):
            return   # 0.7.3-0.9.2: the parser runs only with --enable-reasoning
        at = inputs.ctx_setting(cfg, "workload.max_tokens")
        budget = inputs.to_int(at.value) if at is not None else None
        if budget is None or budget >= MIN_REASONING_TOKENS:
            return
        yield self.diagnostic(
            cfg, at,
            f"workload max_tokens {budget} < {MIN_REASONING_TOKENS} with reasoning parser "
            f"{parser.value!r}: answers may come back empty",
            explanation="a request that stops before the model ends its thinking returns an empty "
            f"answer (the thinking goes to reasoning_content), and vLLM {facts.version} says nothing",
            fields=("workload.max_tokens", "reasoning_parser"),
            fix=f"give reasoning requests max_tokens of {MIN_REASONING_TOKENS} or more")
