"""PO801 value-out-of-range."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from patchops.lint.config import ServeConfig
from patchops.lint.facts import Facts
from patchops.lint.rule import Diagnostic, Example, Rule

# pydantic's wording for each bound (pydantic_core error messages).
PYDANTIC_TEXT = {"gt": "greater than", "ge": "greater than or equal to",
                 "lt": "less than", "le": "less than or equal to"}
_OK = {"gt": lambda v, b: v > b, "ge": lambda v, b: v >= b,
       "lt": lambda v, b: v < b, "le": lambda v, b: v <= b}


class ValueOutOfRange(Rule):
    """
    ## What it does
    Flags a flag value that argparse accepts but vLLM's config classes refuse: a number
    outside the bounds of a pydantic `Field(gt=0, le=1)` (0.12+), outside a guard such as
    `if self.gpu_memory_utilization > 1.0: raise` (0.6.3-0.11), or a string outside the
    choices a `field_validator` enforces (`--kv-cache-dtype` in 0.33, whose help lists the
    choices without argparse enforcing them). Bounds and choices are read from the copy.

    ## Why is this bad?
    vLLM refuses to build its config: "GPU memory utilization must be less than 1.0. Got 1.5."
    (0.8.5), or a pydantic ValidationError "Input should be greater than 0" for
    `gpu_memory_utilization: 0` (0.12+; 0.11 and older accept 0 here and fail later).

    ## Fix
    Use a value inside the range or one of the choices vLLM lists.
    """

    code = "PO801"
    name = "value-out-of-range"
    severity = "error"
    versions = ">=0"
    VALID = [
        Example("model: m\nargs:\n  gpu-memory-utilization: 1.0\n", vllm="0.8.5"),
        Example("model: m\nargs:\n  gpu-memory-utilization: 0\n", vllm="0.10.1.1"),  # not checked before 0.12
        Example("model: m\nargs:\n  kv-cache-dtype: fp8_e5m2\n", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  gpu-memory-utilization: 1.01\n", vllm="0.8.5", at=(3, 3)),
        Example("vllm serve m --gpu-memory-utilization 0\n", kind="command", vllm="0.33.0", at=(1, 14)),
        Example("model: m\nargs:\n  kv-cache-dtype: fp9\n", vllm="0.33.0", at=(3, 3)),
    ]

    def check(self, cfg: ServeConfig, facts: Facts) -> Iterator[Diagnostic]:
        for dest, check in sorted(facts.value_ranges.items()):
            found = cfg.args.get(dest)
            if found is None or (dest in cfg.ignored and cfg.ignored[dest][0] == found):
                continue
            problem = _problem(found.value, check)
            if problem is None:
                continue
            text, vllm_text = problem
            yield self.diagnostic(
                cfg, found, f"{dest} {text}; vLLM {facts.version} refuses it while building "
                f"{check.get('class', 'its config')}", fields=(dest,),
                fix="use a value vLLM accepts", vllm_message=vllm_text)


def _problem(value: Any, check: dict) -> Optional[tuple]:
    """Return (what is wrong, vLLM's message) or None when `value` passes `check`."""
    if "choices" in check:
        if not isinstance(value, str) or value in check["choices"]:
            return None
        listed = ", ".join(check["choices"])
        return (f"{value!r} is not one of the values this vLLM accepts ({listed})",
                f"{check.get('message') or ''}{value!r}. Valid values are: {check['choices']}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    for bound, limit in check.items():
        if bound in _OK and not _OK[bound](value, limit):
            if check.get("how") == "guard":
                vllm_text = (check.get("message") or "").replace("{value}", str(value)) or None
            else:
                vllm_text = f"Input should be {PYDANTIC_TEXT[bound]} {limit}"
            return f"({value}) must be {PYDANTIC_TEXT[bound]} {limit}", vllm_text
    return None
