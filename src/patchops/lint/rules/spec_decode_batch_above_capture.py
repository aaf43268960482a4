"""PO405 spec-decode-batch-above-capture."""

from __future__ import annotations

from typing import Iterator, List

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import cuda_graphs, inputs, routing, scheduler, wording

NGRAM = "  speculative-config: '{\"method\": \"ngram\", \"num_speculative_tokens\": %d, \"prompt_lookup_max\": 4}'\n"
SPEC = "model: /models/Qwen2.5-7B-Instruct\nargs:\n  max-num-seqs: %d\n" + NGRAM


class SpecDecodeBatchAboveCapture(Rule):
    """
    ## What it does
    With speculative decoding on the V1 engine, multiplies each `workload.concurrency` level
    (capped at `max_num_seqs`) and an explicit `max_num_seqs` by 1 + `num_speculative_tokens`,
    the tokens one decode step runs, and flags those above the largest CUDA graph capture size
    the version derives (the same prediction as concurrency-without-cuda-graphs, which reports
    levels above it even without speculative decoding).

    ## Why is this bad?
    V1 captures CUDA graphs by the number of tokens in a step, not by requests: a decode step
    with speculative decoding verifies 1 + k tokens per request (`num_scheduled_tokens`,
    vllm/v1/worker/gpu_model_runner.py:1023 in 0.8.5, :1747 in 0.10.2), and a step above the
    largest captured size runs without graph replay. So 64 requests with 3 speculative tokens
    need 256-token graphs, four times what the same concurrency needs without them. From 0.15
    the default top size grows with 1 + k, but it is still capped at 512 (1024 on Blackwell);
    0.12+ rounds the sizes to multiples of 1 + k for full decode graphs, which does not change
    which steps fit. Nothing is logged: the speedup from speculation is eaten by eager decode
    steps exactly at the concurrency levels a benchmark cares about.

    ## Fix
    Capture sizes up to concurrency x (1 + num_speculative_tokens) tokens, lower
    num_speculative_tokens, or cap max-num-seqs so that its steps fit.
    """

    code = "PO405"
    name = "spec-decode-batch-above-capture"
    severity = "warning"
    versions = ">=0.8.5"     # V1 runs speculative decoding from 0.8.5 (the speculative_config dict)
    needs = Needs(optional=("hardware.compute_capability", "hardware.memory_gib", "hardware.name",
                            "hardware.platform", "model", "workload.concurrency"))
    vllm_message = None
    stage = "later"
    VALID = [
        # 0.10+: max_num_seqs 32 -> captures up to min(2 x 32, 512) = 64 = 32 x (1 + 1).
        Example(SPEC % (32, 1) + "workload:\n  concurrency: [8, 16, 32]\n", vllm="0.10.1.1"),
        Example("model: /models/Qwen2.5-7B-Instruct\nenv:\n  VLLM_USE_V1: '1'\nargs:\n"
                "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16, 32]}'\n" + NGRAM % 3
                + "workload:\n  concurrency: [1, 8]\n", vllm="0.8.5"),
        # The same on V0 (0.8.5's default for ngram): V0 is not read.
        Example("model: /models/Qwen2.5-7B-Instruct\nargs:\n"
                "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16]}'\n" + NGRAM % 3
                + "workload:\n  concurrency: [1, 8]\n", vllm="0.8.5"),
    ]
    INVALID = [
        # 64 x (1 + 3) = 256 tokens per step, graphs up to min(2 x 64, 512) = 128.
        Example(SPEC % (64, 3) + "workload:\n  concurrency: [16, 32, 64]\n", vllm="0.10.1.1", at=(6, 3)),
        # 0.8.5 runs ngram on V1 only when asked (experimental); 8 x (1 + 3) = 32 > 16.
        Example("model: /models/Qwen2.5-7B-Instruct\nenv:\n  VLLM_USE_V1: '1'\nargs:\n"
                "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16]}'\n" + NGRAM % 3
                + "workload:\n  concurrency: [1, 8]\n", vllm="0.8.5", at=(8, 3)),
        # 0.33: 256 x (1 + 3) = 1024 tokens, the default top size is min(256 x 4 x 2, 512) = 512.
        Example(SPEC % (256, 3), vllm="0.33.0", at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        method = inputs.speculative_method(cfg, facts)
        tokens = inputs.num_speculative_tokens(cfg, facts)
        if method in (None, "unknown") or not tokens or tokens < 1:
            return
        eng = routing.engine(cfg, facts)
        if eng.error or eng.value != routing.V1:
            return   # V0 scores drafts in its own batches; not read
        sizes = cuda_graphs.capture_sizes(cfg, facts)
        if not sizes.value:
            return   # no graphs at all: enforce_eager and friends, reported elsewhere
        largest = max(sizes.value)
        per_request = 1 + tokens
        seqs = scheduler.max_num_seqs(cfg, facts, eng)
        cap = seqs.value if isinstance(seqs.value, int) and seqs.value > 0 else None

        def batch(n: int) -> int:
            return min(n, cap) if cap else n

        # Levels above the largest size are concurrency-without-cuda-graphs' (PO401) already.
        over = [n for n in inputs.concurrency_levels(cfg) if batch(n) <= largest < batch(n) * per_request]
        seqs_at = inputs.setting(cfg, "max_num_seqs")
        seqs_over = seqs_at is not None and cap is not None and cap <= largest < cap * per_request
        if not over and not seqs_over:
            return
        steps: List[str] = []
        if over:
            steps.append(f"workload concurrency {wording.and_list(over)} "
                         f"({wording.and_list([batch(n) * per_request for n in over])} tokens)")
        if seqs_over:
            steps.append(f"full batches of max_num_seqs {cap} (set by you; {cap * per_request} tokens)")
        top = max([batch(n) for n in over] + ([cap] if seqs_over else [])) * per_request
        possibly = "" if sizes.certain else "possibly "
        message = (f"{method} decode steps of up to {top} tokens exceed the largest CUDA graph "
                   f"capture size {largest}")
        explanation = (f"with {method} speculative decoding each request runs 1 + num_speculative_tokens "
                       f"{tokens} (set by you in {inputs.speculative_setting(cfg, facts).name}) = "
                       f"{per_request} tokens per decode step, so the steps of {' and '.join(steps)} are "
                       f"above {largest} ({sizes.reason}): vLLM {facts.version} (V1) {possibly}runs them "
                       "without CUDA graph replay")
        at = inputs.ctx_setting(cfg, "workload.concurrency") if over else seqs_at
        fields = (("workload.concurrency",) if over else ()) + (("max_num_seqs",) if seqs_over else ()) \
            + (inputs.speculative_setting(cfg, facts).name,) + tuple(sizes.fields)
        yield self.diagnostic(cfg, at, message, explanation=explanation, fields=tuple(dict.fromkeys(fields)),
                              fix=cuda_graphs.capture_fix(facts, top, command=cfg.kind == "command") + f" (steps of up to {top} tokens)")
