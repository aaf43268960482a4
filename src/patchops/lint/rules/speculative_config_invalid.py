"""PO803 speculative-config-invalid."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from patchops.lint.config import ServeConfig
from patchops.lint.facts import Facts
from patchops.lint.rule import Diagnostic, Example, Rule

NGRAM = ("ngram", "[ngram]", "ngram_gpu")
MISSING_TOKENS = ("num_speculative_tokens must be provided with speculative model unless the "
                  "draft model config contains an n_predict parameter.")


class SpeculativeConfigInvalid(Rule):
    """
    ## What it does
    Checks the guards `SpeculativeConfig.__post_init__` and `_verify_args` apply to every
    `--speculative-config` (0.8.5+, where the old `--speculative-model` flags became one JSON
    flag): `num_speculative_tokens` present for the n-gram method and greater than zero, and
    `prompt_lookup_min <= prompt_lookup_max` after vLLM fills a missing one from the other
    (both missing: 5 and 5). Bounds that pydantic already states as `Field(ge=1)` are left to
    `nested-config-invalid`.

    ## Why is this bad?
    vLLM refuses to build its config: "prompt_lookup_min=5 must be <= prompt_lookup_max=3",
    "num_speculative_tokens must be provided with speculative model unless the draft model
    config contains an n_predict parameter."

    ## Fix
    Give `num_speculative_tokens` (a positive count) and an n-gram window with min <= max.
    """

    code = "PO803"
    name = "speculative-config-invalid"
    severity = "error"
    versions = ">=0.8.5"
    VALID = [
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"prompt_lookup_min\": 2}'\n", kind="command"),
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"prompt_lookup_min\": 4, \"prompt_lookup_max\": 4}'\n", kind="command", vllm="0.33.0"),
    ]
    INVALID = [
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"prompt_lookup_min\": 5, \"prompt_lookup_max\": 3}'\n", kind="command", at=(1, 14)),
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"prompt_lookup_max\": 3}'\n",
                kind="command", vllm="0.10.1.1", at=(1, 14)),
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 0}'\n",
                kind="command", vllm="0.8.5", at=(1, 14)),
    ]

    def check(self, cfg: ServeConfig, facts: Facts) -> Iterator[Diagnostic]:
        spec = facts.nested_configs.get("speculative_config")
        found = cfg.args.get("speculative_config")
        if spec is None or found is None or not isinstance(found.value, dict) or \
                ("speculative_config" in cfg.ignored and cfg.ignored["speculative_config"][0] == found):
            return
        value = found.value
        fields = spec["fields"]
        problem = _problem(value, fields)
        if problem is not None:
            text, vllm_text = problem
            yield self.diagnostic(cfg, found, f"speculative_config {text}; vLLM {facts.version} refuses it",
                                  fields=("speculative_config",), vllm_message=vllm_text,
                                  fix="give num_speculative_tokens > 0 and prompt_lookup_min <= prompt_lookup_max")


def _bounded(fields: dict, name: str) -> bool:
    """Whether pydantic states a bound for `name` (then nested-config-invalid reports it)."""
    return bool(fields.get(name, {}).keys() & {"gt", "ge"})


def _int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _problem(value: dict, fields: dict) -> Optional[tuple]:
    tokens = _int(value.get("num_speculative_tokens"))
    ngram = value.get("method") in NGRAM or (value.get("method") is None and value.get("model") in NGRAM)
    if ngram and value.get("num_speculative_tokens") is None:
        return "uses the n-gram method without num_speculative_tokens", MISSING_TOKENS
    if tokens is not None and tokens <= 0 and not _bounded(fields, "num_speculative_tokens"):
        return (f"num_speculative_tokens ({tokens}) must be greater than zero",
                f"Expected num_speculative_tokens to be greater than zero ({tokens}).")
    if not ngram:
        return None
    low, high = _int(value.get("prompt_lookup_min")), _int(value.get("prompt_lookup_max"))
    if low is None and high is None:
        low = high = 5
    low = high if low is None else low
    high = low if high is None else high
    for name, number in (("prompt_lookup_min", low), ("prompt_lookup_max", high)):
        if number < 1 and not _bounded(fields, name):
            return f"{name} ({number}) must be > 0", f"{name}={number} must be > 0"
    if low > high:
        return (f"prompt_lookup_min ({low}) is above prompt_lookup_max ({high})",
                f"prompt_lookup_min={low} must be <= prompt_lookup_max={high}")
    return None
