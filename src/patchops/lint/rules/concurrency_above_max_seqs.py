"""PO204 concurrency-above-max-seqs."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, routing, scheduler, wording

SPEC = "model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-seqs: 2\nworkload:\n  concurrency: %s\n"


class ConcurrencyAboveMaxSeqs(Rule):
    """
    ## What it does
    Flags `workload.concurrency` levels above the number of sequences vLLM schedules per step
    (`max_num_seqs`, set or the version's default), and names the levels that will queue.

    ## Why is this bad?
    vLLM runs at most max_num_seqs requests at once; the others wait in the queue until a
    running one finishes, so their time to first token grows by a whole request's decode time
    and throughput stops rising. Nothing is logged. A field log: 4 x 32 GB cards, `-tp 4`,
    `max-num-seqs 2`, concurrency 4: TTFT P90 51.6 s.

    ## Fix
    Raise max-num-seqs to the largest concurrency you serve (and check the KV cache holds that
    many requests, kv-cache-too-small), or benchmark only up to max_num_seqs.
    """

    code = "PO204"
    name = "concurrency-above-max-seqs"
    severity = "warning"
    versions = ">=0"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model",
                            "workload.concurrency"))
    vllm_message = None     # vLLM queues without a word
    stage = "later"         # a serving-time effect, not a start-up failure
    VALID = [
        Example(SPEC % "[1, 2]"),
        # The V0 default is 256.
        Example("model: /models/Qwen2.5-7B-Instruct\nworkload:\n  concurrency: [256]\n", vllm="0.6.3.post1"),
    ]
    INVALID = [
        Example(SPEC % "[1, 2, 3, 4]", at=(5, 3)),
        Example("model: /models/Qwen2.5-7B-Instruct\nworkload:\n  concurrency: [1, 257]\n", vllm="0.6.3.post1",
                at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        levels = inputs.concurrency_levels(cfg)
        if not levels:
            return
        eng = routing.engine(cfg, facts)
        if eng.error:
            return
        seqs = scheduler.max_num_seqs(cfg, facts, eng)
        if not isinstance(seqs.value, int) or seqs.value <= 0:
            return
        over = [n for n in levels if n > seqs.value]
        if not over:
            return
        cap = seqs.value
        top = over[-1]
        possibly = "" if seqs.certain else "possibly "
        message = (f"workload concurrency {wording.and_list(over)} > max_num_seqs {possibly}{cap}: "
                   "requests queue")
        explanation = (f"{seqs.reason}; vLLM {facts.version} runs {cap} requests at once and queues the rest "
                       f"({top - cap} of {top} at the top level), so their time to first token grows by a "
                       "whole request's decode time and throughput stops rising")
        yield self.diagnostic(cfg, inputs.ctx_setting(cfg, "workload.concurrency"), message,
                              explanation=explanation,
                              fields=("workload.concurrency",) + tuple(seqs.fields),
                              fix=f"raise max-num-seqs to {top}, or benchmark only up to {cap}")
