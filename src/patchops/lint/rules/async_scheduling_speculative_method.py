"""PO322 async-scheduling-speculative-method."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import parse_literal
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs

NGRAM = "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 3}'"


class AsyncSchedulingSpeculativeMethod(Rule):
    """
    ## What it does
    Flags `--async-scheduling` together with a `--speculative-config` whose method the copy's
    async scheduler does not take (n-gram lookup, suffix decoding). The methods allowed are
    read from the copy's `VllmConfig.__post_init__`: EAGLE and MTP in 0.12, then also a draft
    model, GPU n-gram (`ngram_gpu`), DSpark and DFlash. A config that names a draft model is not
    judged, since vLLM takes its method from the draft's checkpoint.

    ## Why is this bad?
    vLLM refuses to build its config and exits: "Currently, async scheduling is only supported
    with EAGLE/MTP/Draft Model/NGram GPU/DSpark/DFlash kind of speculative decoding" (0.32;
    the list of names changes by release). Left unset, async scheduling turns itself off for
    such a method; 0.33 decides by its model runner instead and is not checked here. Before
    0.12, 0.10.x refused any speculative decoding with async scheduling (PO113 reads that).

    ## Fix
    Drop `--async-scheduling`, or use a method it supports (`ngram_gpu` for n-gram lookup).
    """

    code = "PO322"
    name = "async-scheduling-speculative-method"
    severity = "error"
    versions = ">=0.12,<0.33"
    vllm_message = ("Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU/"
                    "DSpark/DFlash kind of speculative decoding")
    VALID = [
        Example(f"vllm serve m --speculative-config {NGRAM}\n", kind="command", vllm="0.32.0"),
        Example(f"vllm serve m --async-scheduling --speculative-config {NGRAM}\n", kind="command",
                vllm="0.33.0"),
    ]
    INVALID = [
        Example(f"vllm serve m --async-scheduling --speculative-config {NGRAM}\n", kind="command",
                vllm="0.32.0", at=(1, 14)),
        Example(f"model: m\nargs:\n  async-scheduling: true\n  speculative-config: {NGRAM}\n",
                vllm="0.32.0", at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        allowed = facts.async_speculative.allowed
        switch = inputs.setting(cfg, "async_scheduling")
        if not allowed or switch is None or inputs.bool_value(cfg, "async_scheduling") is not True:
            return
        raw = inputs.value(cfg, "speculative_config")
        spec = parse_literal(raw) if isinstance(raw, str) else raw
        if not isinstance(spec, dict) or spec.get("model") not in (None, "ngram", "[ngram]"):
            return
        method = inputs.speculative_method(cfg, facts)
        if method in (None, "unknown", "draft_model") or method in allowed:
            return
        yield self.diagnostic(
            cfg, switch, f"async scheduling with {method} speculative decoding: vLLM {facts.version} "
            "refuses to start",
            explanation=f"vLLM runs async scheduling only with "
            f"{', '.join(m for m in allowed if not m.endswith('_mtp'))} speculative decoding",
            fields=("async_scheduling", "speculative_config"),
            fix="drop async-scheduling, or use a speculative method it supports",
            vllm_message=facts.async_speculative.message)
