"""PO202 batched-tokens-below-max-seqs."""

from __future__ import annotations

from typing import Iterator, List, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, releases, routing, scheduler, wording


class BatchedTokensBelowMaxSeqs(Rule):
    """
    ## What it does
    Flags a token budget per step (max_num_batched_tokens, set or defaulted) below the number
    of sequences per step (max_num_seqs, set or defaulted). The defaults depend on the engine
    and, for V1 under `vllm serve`, on the GPU: 2048 tokens / 256 sequences below 70 GiB or on
    an A100, 8192 / 1024 above. When the hardware is not stated both tiers are checked.

    ## Why is this bad?
    `SchedulerConfig` refuses to start: "max_num_batched_tokens (2048) must be greater than or
    equal to max_num_seqs (4096)." The classic trap is raising max_num_seqs for a throughput
    test and leaving the budget at its tier default; or lowering the budget on a >= 70 GiB
    GPU where V1 0.8.5-0.10.0 defaults max_num_seqs to 1024.

    ## Fix
    Set max_num_batched_tokens to at least max_num_seqs, or lower max_num_seqs.
    """

    code = "PO202"
    name = "batched-tokens-below-max-seqs"
    severity = "error"
    versions = ">=0.6.3"
    needs = Needs(optional=("hardware.compute_capability", "hardware.memory_gib", "hardware.name",
                            "hardware.platform", "model"))
    vllm_message = messages.BATCHED_TOKENS_BELOW_MAX_SEQS
    explains = (messages.BATCHED_TOKENS_CHECK,)
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.9.2}\n"
                "hardware: {gpus: 1, memory_gib: 80, compute_capability: 9.0}\n"
                "args:\n"
                "  max-num-seqs: 4096\n"
                "  max-num-batched-tokens: 8192\n", vllm="0.9.2"),
        # 0.10.1+ caps an unset max_num_seqs at the budget.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-num-batched-tokens: 512\n", vllm="0.11.0", kind="config"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-num-seqs: 512\n", vllm="0.8.5", kind="config"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.9.2}\n"
                "hardware: {gpus: 1, memory_gib: 48, compute_capability: 8.9}\n"
                "args:\n"
                "  max-model-len: 8192\n"
                "  max-num-seqs: 4096\n", vllm="0.9.2", at=(6, 3)),
        # The hardware is not stated: 2048 on small GPUs and A100, 8192 elsewhere.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "max-num-seqs: 4096\n", vllm="0.11.0", kind="config", at=(2, 1), severity="warning"),
        # An H100 on 0.8.5 defaults max_num_seqs to 1024.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "hardware: {gpus: 1, memory_gib: 80, compute_capability: 9.0}\n"
                "args:\n"
                "  max-num-batched-tokens: 512\n", vllm="0.8.5", at=(5, 3)),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --max-num-batched-tokens 128 --max-num-seqs 256\n",
                vllm="0.6.3.post1", kind="command", at=(1, 69)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        eng = routing.config_engine(cfg, facts)  # SchedulerConfig's check
        if eng.error:
            return
        budget_at = inputs.setting(cfg, "max_num_batched_tokens")
        seqs_at = inputs.setting(cfg, "max_num_seqs")
        literal = any(inputs.to_int(facts.field_defaults.get(n)) is not None
                      for n in ("max_num_batched_tokens", "max_num_seqs")
                      if n != "max_num_seqs" or releases.release(facts) >= releases.SEQS_DEFAULT_AT_LAUNCH)
        if budget_at is None and seqs_at is None and not literal:
            return  # vLLM's own defaults always agree with each other
        budget = scheduler.max_num_batched_tokens(cfg, facts, eng)
        seqs = scheduler.max_num_seqs(cfg, facts, eng)
        pairs: List[Tuple[object, int]] = []
        if budget_at is None and seqs_at is None:
            pairs = [(budget.value, seqs.value)]
        else:
            pairs = [(b, s) for b in budget.candidates for s in seqs.candidates]
        failing = [(b, s) for b, s in pairs if isinstance(b, int) and isinstance(s, int) and b < s]
        unknown_budget = [s for b, s in pairs
                          if b is None and isinstance(s, int) and s > scheduler.DEFAULT_BATCHED_TOKENS_V0]
        if not failing and not unknown_budget:
            return
        ver = facts.version
        at = seqs_at if seqs_at is not None else budget_at
        fields = ("max_num_batched_tokens", "max_num_seqs") + budget.fields + seqs.fields
        if failing:
            b, s = failing[0]
            certain = len(failing) == len(pairs)
            b_text = f"{b}" if budget_at is not None else f"{b}, the default"
            s_text = f"{s}" if seqs_at is not None else f"{s}, the default"
            explanation = None
            if certain:
                message = (f"max_num_batched_tokens ({b_text}) < max_num_seqs ({s_text}): "
                           f"vLLM {ver} refuses to start")
                if budget_at is None:
                    explanation = budget.reason
                elif seqs_at is None:
                    explanation = seqs.reason
            elif budget_at is None:
                others = [x for x in budget.candidates if isinstance(x, int) and x != b]
                message = f"max_num_batched_tokens ({b_text}) is possibly below max_num_seqs ({s_text})"
                explanation = (f"{budget.reason}, otherwise {wording.and_list(others).replace(' and ', ' or ')}; "
                               f"with {b} vLLM {ver} refuses to start")
            else:
                message = f"max_num_batched_tokens ({b_text}) is possibly below max_num_seqs ({s_text})"
                explanation = f"{seqs.reason}; with {s} sequences vLLM {ver} refuses to start"
            yield self.diagnostic(
                cfg, at, message, explanation=explanation, severity=None if certain else "warning",
                fields=tuple(dict.fromkeys(fields)),
                fix=f"set max-num-batched-tokens to at least {s}, or lower max-num-seqs to {b}",
                vllm_message=messages.BATCHED_TOKENS_BELOW_MAX_SEQS.replace("{max_num_batched_tokens}", str(b))
                                         .replace("{max_num_seqs}", str(s)))
            return
        s = unknown_budget[0]
        yield self.diagnostic(
            cfg, at,
            f"max_num_seqs ({s}) is above 2048: vLLM {ver} possibly refuses to start",
            explanation="on V0 the default max_num_batched_tokens is max(max_model_len, 2048), so "
            f"vLLM {ver} refuses to start unless the model's max_model_len is at least {s}",
            severity="warning", fields=tuple(dict.fromkeys(fields + ("max_model_len",))),
            fix=f"set max-num-batched-tokens to at least {s}, or lower max-num-seqs",
            vllm_message=messages.BATCHED_TOKENS_BELOW_MAX_SEQS.replace("{max_num_seqs}", str(s)))
