"""Whether a flag's value passes the bounds and choices vLLM's config classes put on it (facts
`value_ranges`, read by extract/config_guards.py and config_fields.py).

Four shapes of the same check, each as the copy states it: a pydantic bound or a guard on the
value as given (`Field(gt=0, le=1)`, `if self.gpu_memory_utilization > 1.0: raise`), a choice
a validator enforces, a bound a `model_validator(mode="after")` puts on the value vLLM
resolved, and a bound against another setting (`long_prefill_token_threshold <=
max_model_len`). PO111 words what this finds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import inputs, model_len, scheduler
from patchops.lint.vllm.nested_values import BOUND_HOLDS, BOUND_WORDS


@dataclass(frozen=True)
class RangeProblem:
    """What is wrong with a value, vLLM's message (None when the copy words none) and what it takes."""

    what: str
    vllm_message: Optional[str]
    accepted: str


def problem(cfg: ReadConfig, facts: Facts, dest: str, value: Any, check: dict) -> Optional[RangeProblem]:
    """Return the first of the check's shapes `value` fails, or None when it passes them all."""
    return _as_given(value, check) or _as_resolved(value, check, facts.flags.get(dest)) \
        or _against_other(cfg, facts, value, check)


def _as_given(value: Any, check: dict) -> Optional[RangeProblem]:
    if check.get("how") == "enum field":
        # pydantic takes an enum member by its value, from the CLI's string too ("3" -> O3)
        choices = check["choices"]
        if isinstance(value, bool) or not isinstance(value, (int, str)) or str(value) in map(str, choices):
            return None
        listed = ", ".join(map(repr, choices[:-1])) + f" or {choices[-1]!r}"
        return RangeProblem(f"{value!r} is not one of {listed}", f"Input should be {listed}", f"one of {listed}")
    if "choices" in check:
        if not isinstance(value, str) or value in check["choices"]:
            return None
        return RangeProblem(f"{value!r} is not one of the {len(check['choices'])} values this vLLM accepts",
                            f"{check.get('message') or ''}{value!r}. Valid values are: {check['choices']}",
                            f"one of {', '.join(check['choices'])}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    for bound, limit in check.items():
        if bound in BOUND_HOLDS and not BOUND_HOLDS[bound](value, limit):
            if check.get("how") == "guard":
                vllm_text = (check.get("message") or "").replace("{value}", str(value)) or None
            else:
                vllm_text = f"Input should be {BOUND_WORDS[bound]} {limit}"
            return RangeProblem(f"({value}) must be {BOUND_WORDS[bound]} {limit}", vllm_text, _range(check))
    return None


def _range(bounds: dict) -> str:
    """Return every bound of a range in words: `a value greater than 0 and less than or equal to 1`."""
    return "a value " + " and ".join(f"{BOUND_WORDS[b]} {limit}" for b, limit in bounds.items()
                                     if b in BOUND_HOLDS)


def _as_resolved(value: Any, check: dict, flag) -> Optional[RangeProblem]:
    """Check the bound a model_validator(mode="after") puts on the value vLLM resolved.

    A type ending in `_or_auto` (0.33 `human_readable_int_or_auto`) maps `-1`/`auto` to
    "derive it", which the validator never sees.
    """
    after = check.get("after")
    if not after or isinstance(value, bool) or not isinstance(value, int):
        return None
    if value == -1 and flag is not None and str(flag.type or "").endswith("_or_auto"):
        return None
    for bound, limit in after.items():
        if bound in BOUND_HOLDS and not BOUND_HOLDS[bound](value, limit):
            vllm_text = (after.get("message") or "").replace("{type}", type(value).__name__) \
                .replace("{value}", repr(value)) or None
            return RangeProblem(f"({value}) must be {BOUND_WORDS[bound]} {limit}", vllm_text, _range(after))
    return None


def _limit(cfg: ReadConfig, facts: Facts, other: str) -> Any:
    """Return the value of `other` vLLM compares against: stated, predicted, else its literal default."""
    stated = inputs.value(cfg, other)
    if stated is not None:
        return stated
    # Settings whose unset value lint can still predict: the length vLLM derives from config.json,
    # the hardware tier's max_num_seqs.
    resolved = {"max_model_len": model_len.max_model_len, "max_num_seqs": scheduler.max_num_seqs}
    if other in resolved:
        predicted = resolved[other](cfg, facts)
        if predicted.certain and predicted.value is not None:
            return predicted.value
    return inputs.literal_default(facts, other)


def _against_other(cfg: ReadConfig, facts: Facts, value: Any, check: dict) -> Optional[RangeProblem]:
    """Check `value <= <other setting>` (stated, else predicted, else its literal default)."""
    other = check.get("le_field")
    if not other or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    limit = _limit(cfg, facts, other)
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or value <= limit:
        return None
    vllm_text = (check.get("le_field_message") or "").replace("{value}", str(value)) \
        .replace("{other}", str(limit)) or None
    return RangeProblem(f"({value}) must not be greater than {other} ({limit})", vllm_text,
                        f"a value of at most {other} ({limit})")
