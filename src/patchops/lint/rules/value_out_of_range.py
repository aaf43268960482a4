"""PO111 value-out-of-range."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, messages, value_ranges


class ValueOutOfRange(Rule):
    """
    ## What it does
    Flags a flag value that argparse accepts but vLLM's config classes refuse: a number
    outside the bounds of a pydantic `Field(gt=0, le=1)` (0.12+), outside a guard such as
    `if self.gpu_memory_utilization > 1.0: raise` (0.6.3-0.11), or a string outside the
    choices a `field_validator` enforces (`--kv-cache-dtype` in 0.33, whose help lists the
    choices without argparse enforcing them). Bounds and choices are read from the copy.
    Three more shapes of the same check, also read from the copy: a bound on the value vLLM
    resolved, from a `model_validator(mode="after")` (`max_model_len: 0` in 0.33, where `-1`
    still means "derive it"); a bound against another setting (`long_prefill_token_threshold`
    above `max_model_len`, 0.33); a bound that holds only while a switch is on
    (`--api-server-count 2` with `--headless`, 0.10+, which refuses even 1 from 0.2x).
    A guard counts only where EngineArgs hands the user's value to the class unchanged:
    `--num-lookahead-slots -1` meets SchedulerConfig's guard in 0.10.1-0.11 (0.8.5-0.10.0
    pass on `max(value, num_scheduler_steps - 1)`), and not with a `--speculative-config`,
    whose own lookahead slots replace it.

    ## Why is this bad?
    vLLM refuses to build its config: "GPU memory utilization must be less than 1.0. Got 1.5."
    (0.8.5), or a pydantic ValidationError "Input should be greater than 0" for
    `gpu_memory_utilization: 0` (0.12+; 0.11 and older accept 0 here and fail later);
    "max_model_len must be a positive integer, got int: 0.", "num_lookahead_slots (-1) must be
    greater than or equal to 0." (0.10.1.1), "long_prefill_token_threshold
    (8192) cannot be greater than the max_model_len (4096).", "--api-server-count=2 cannot be
    used with --headless (no API servers are started in headless mode)."

    ## Fix
    Use a value inside the range or one of the choices vLLM lists.
    """

    code = "PO111"
    name = "value-out-of-range"
    severity = "error"
    versions = ">=0"
    explains = (messages.GPU_MEMORY_UTILIZATION_CHECK, messages.CPU_OFFLOAD_CHECK,
                messages.LOOKAHEAD_SLOTS_CHECK, messages.LONG_PREFILL_CHECK,
                messages.SCHEDULER_STEPS_CHECK, messages.API_SERVER_COUNT_CHECK, messages.HEADLESS_CHECK)
    VALID = [
        Example("model: m\nargs:\n  gpu-memory-utilization: 1.0\n", vllm="0.8.5"),
        Example("model: m\nargs:\n  gpu-memory-utilization: 0\n", vllm="0.10.1.1"),  # not checked before 0.12
        Example("model: m\nargs:\n  kv-cache-dtype: fp8_e5m2\n", vllm="0.33.0"),
        Example("model: m\nargs:\n  max-model-len: -1\n", vllm="0.33.0"),    # -1: derive it
        Example("model: m\nargs:\n  max-model-len: 0\n", vllm="0.10.1.1"),
        Example("model: m\nargs:\n  max-model-len: 8192\n  long-prefill-token-threshold: 8192\n",
                vllm="0.33.0"),
        Example("vllm serve m --headless --api-server-count 1\n", kind="command", vllm="0.10.1.1"),
        Example("vllm serve m --api-server-count 2\n", kind="command", vllm="0.33.0"),
        Example("model: m\nargs:\n  num-lookahead-slots: 0\n", vllm="0.10.1.1"),
        Example("model: m\nargs:\n  num-lookahead-slots: -1\n", vllm="0.10.0"),   # max(-1, steps - 1)
        Example("vllm serve m --num-lookahead-slots -1 --speculative-config "
                "'{\"method\": \"ngram\", \"num_speculative_tokens\": 2, \"prompt_lookup_max\": 3}'\n",
                kind="command", vllm="0.10.1.1"),
        Example("model: m\nargs:\n  max-loras: 0\n", vllm="0.33.0"),     # LoRAConfig is built only with LoRA
        Example("vllm serve m -O3\n", kind="command", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  gpu-memory-utilization: 1.01\n", vllm="0.8.5", at=(3, 3)),
        Example("vllm serve m --gpu-memory-utilization 0\n", kind="command", vllm="0.33.0", at=(1, 14)),
        Example("model: m\nargs:\n  kv-cache-dtype: fp9\n", vllm="0.33.0", at=(3, 3)),
        Example("model: m\nargs:\n  max-model-len: 0\n", vllm="0.33.0", at=(3, 3)),
        Example("model: m\nargs:\n  max-model-len: 8192\n  long-prefill-token-threshold: 8193\n",
                vllm="0.33.0", at=(4, 3)),
        Example("vllm serve m --headless --api-server-count 2\n", kind="command", vllm="0.10.1.1",
                at=(1, 25)),
        Example("vllm serve m --headless --api-server-count 1\n", kind="command", vllm="0.33.0",
                at=(1, 25)),
        Example("model: m\nargs:\n  num-lookahead-slots: -1\n", vllm="0.10.1.1", at=(3, 3)),
        Example("model: m\nargs:\n  enable-lora: true\n  max-loras: 0\n", vllm="0.33.0", at=(4, 3)),
        Example("vllm serve m -O5\n", kind="command", vllm="0.33.0", at=(1, 14)),
    ]

    @classmethod
    def explains_check(cls, text: str, facts: Facts) -> bool:
        """Also the guards it reads from the facts' value ranges: their messages start alike."""
        return super().explains_check(text, facts) or any(
            text.startswith(prefix) for prefix in (
                (check.get("message") or "").split("{")[0] for check in facts.value_ranges.values()
                if check.get("how") == "guard") if len(prefix) > 8)

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for dest, check in sorted(facts.value_ranges.items()):
            found = cfg.args.get(dest)
            if found is None or inputs.is_dropped(cfg, dest, found):
                continue
            switch = check.get("when")
            if switch and not inputs.bool_value(cfg, switch):
                continue
            if check.get("unless_set") and inputs.setting(cfg, check["unless_set"]) is not None:
                continue    # EngineArgs hands the class another value then
            problem = value_ranges.problem(cfg, facts, dest, found.value, check)
            if problem is None:
                continue
            during = f" with --{switch.replace('_', '-')}" if switch else ""
            yield self.diagnostic(
                cfg, found, f"{dest} {problem.what}{during}",
                explanation=f"vLLM {facts.version} refuses it while building {check.get('class', 'its config')}",
                fields=(dest,) + ((switch,) if switch else ()),
                fix=f"use {problem.accepted}", vllm_message=problem.vllm_message)
