"""SpeculativeConfig's refusals of a `--speculative-config` dict, as each release checks them.

`SpeculativeConfig.__post_init__` and `_verify_args` (vllm/config.py 0.8.5-0.10, then
vllm/config/speculative.py) fill a missing n-gram window, pick the method from the draft and
refuse what they cannot run; `create_engine_config` adds LoRA's token budget (0.12+). Each
predictor returns (the finding's words, vLLM's message), or None when vLLM accepts the dict.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from patchops.lint.facts.groups import DraftDetection, NestedField
from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import inputs, releases, routing, scheduler

# The n-gram method's names as a method or a model (__post_init__ unifies both to "ngram").
NGRAM = ("ngram", "[ngram]")
# Targets that draft themselves when no draft model is given (0.8.5-0.10.x, by model_type).
SELF_DRAFTING_TARGETS = (("deepseek_v3", None), ("mimo", releases.SPEC_MIMO_TARGET),
                         ("ernie4_5_moe", releases.SPEC_MORE_TARGETS), ("qwen3_next", releases.SPEC_MORE_TARGETS))
SPEC_NEEDS_V1 = "Speculative decoding is not supported on vLLM V0."
DRAFT_UNSUPPORTED = "Speculative decoding with draft model is not supported yet."
# vllm/engine/arg_utils.py:1486 (0.11.0) _is_v1_supported_oracle, :1775 (0.12.0) _check_feature_supported.
DRAFT_METHOD_UNSUPPORTED = "Draft model speculative decoding is not supported yet."
# Draft model names SpeculativeConfig recognises as another method (eagle-, medusa heads).
DETECTED = ("eagle", "medusa", "mlp_speculator", "mlp-speculator")
NO_DRAFT_MODEL = "num_speculative_tokens was provided without speculative model."
NO_DRAFT_MODEL_011 = "num_speculative_tokens was provided but without speculative model."
CUSTOM_CLASS_NEEDS_MODEL = ("method='custom_class' requires 'model' to contain the custom proposer module path "
                            "(e.g., 'my_module.MyProposer').")
MISSING_TOKENS = ("num_speculative_tokens must be provided with speculative model unless the "
                  "draft model config contains an n_predict parameter.")
LORA_BUDGET = "Consider increasing max_num_batched_tokens or decreasing num_speculative_tokens"


def window_methods(version: Any) -> Tuple[str, ...]:
    """Return the methods whose n-gram window `version` fills and checks (prompt_lookup_min/max)."""
    return NGRAM + (("ngram_gpu",) if releases.release(version) >= releases.SPEC_NGRAM_GPU else ())


def self_drafting(version: Any) -> Tuple[str, ...]:
    """Return the methods that need no draft model in `version` (__post_init__ sets `model` for them)."""
    release = releases.release(version)
    later = (("suffix", releases.SPEC_SUFFIX), ("extract_hidden_states", releases.SPEC_EXTRACT_HIDDEN_STATES),
             ("ngram_gpu", releases.SPEC_NGRAM_GPU))
    return NGRAM + tuple(method for method, since in later if release >= since)


def drafts_itself(version: Any, method: Optional[str], model_type: str) -> bool:
    """Whether `version` drafts from the target's own layers: by method from 0.11, by target before."""
    release = releases.release(version)
    if release >= releases.SPEC_MTP_BY_METHOD:
        return bool(method) and (method == "mtp" or method.endswith("_mtp")
                                 or (method == "dspark" and release >= releases.SPEC_DSPARK))
    return any(model_type == target and (since is None or release >= since)
               for target, since in SELF_DRAFTING_TARGETS)


def no_draft_model(version: Any, method: Optional[str]) -> str:
    """Return `version`'s refusal of num_speculative_tokens without a draft model."""
    release = releases.release(version)
    if method == "custom_class" and release >= releases.SPEC_CUSTOM_CLASS:
        return CUSTOM_CLASS_NEEDS_MODEL
    return NO_DRAFT_MODEL_011 if release >= releases.SPEC_NO_MODEL_WORDING else NO_DRAFT_MODEL


def unsupported(cfg: ReadConfig, facts: Facts, value: dict, guess: bool) -> Optional[tuple]:
    """The copy's refusals of a whole kind of speculation: on V0 (0.10-0.11), by draft model (0.10-0.14).

    Without a method, a draft is guessed to be a plain one by its name only when `guess`: the
    copy's detection cannot be run on the draft's config.json.
    """
    engine = routing.engine(cfg, facts)
    if facts.guards.spec_decode_needs_v1 and engine.value == routing.V0 and not engine.error:
        return "is set, and this vLLM runs speculative decoding on V1 only", SPEC_NEEDS_V1
    method, model = value.get("method"), value.get("model")
    draft = method == "draft_model" or (guess and method is None and isinstance(model, str) and model not in NGRAM
                                        and not any(k in model.lower() for k in DETECTED))
    if facts.guards.draft_model_unsupported and draft:
        return "uses a draft model, which this vLLM does not support yet", DRAFT_UNSUPPORTED
    if facts.guards.draft_method_unsupported and method == "draft_model":
        return ("uses method 'draft_model', which this vLLM does not support yet",
                f"draft models run on V1 from vLLM {releases.DRAFT_MODEL_ON_V1}"), DRAFT_METHOD_UNSUPPORTED
    return None


def detected_method(cfg: ReadConfig, facts: Facts, detection: Optional[DraftDetection], value: dict) -> Optional[tuple]:
    """Run the copy's method detection (lint/extract/draft_detection.py) on the draft's config.json.

    Returns (what the chain found, DRAFT_UNSUPPORTED when it refuses, else None); None when the
    copy has no chain, the method skips it, or the draft's config.json is not on this machine.
    """
    method, model = value.get("method"), value.get("model")
    if not detection or not isinstance(model, str) or method in self_drafting(facts) or model in NGRAM:
        return None
    draft = None
    for kind, names, found in detection.branches:
        if kind == "keep" and method in names:
            return f"keeps method {method!r}", None
        if kind == "name" and any(name in model.lower() for name in names):
            return f"names the method {found!r} by the draft's name", None
        if kind == "model_type":
            draft = draft or inputs.model_facts_of(cfg, model)
            if draft is None:
                return None   # the draft's config.json is not here: vLLM decides by its model_type
            architectures = draft.text_config.get("architectures") or [None]
            if draft.model_type in detection.rewritten or architectures[0] in detection.rewritten:
                return None   # hf_config_override gives it another model_type first
            if draft.model_type in names:
                return f"names the method {found!r} by the draft's model_type", None
    if draft is None:
        return None
    kinds = [n for kind, names, _ in detection.branches if kind == "model_type" for n in names]
    named = f"names method {method!r} with" if method else "has no method and"
    return ((f"{named} draft {model!r}, which this vLLM runs as a plain draft model",
             f"its model_type {draft.model_type!r} is none of {', '.join(kinds)}, so this vLLM runs it as a "
             "plain draft model, which it does not support yet"), DRAFT_UNSUPPORTED)


def lora_budget_problem(cfg: ReadConfig, facts: Facts, value: dict) -> Optional[tuple]:
    """With LoRA, `create_engine_config` needs max_num_batched_tokens >= max_num_seqs x (1 + k) (0.12+).

    Returns ((headline, why), fields, certain): not certain when a default depends on hardware not stated.
    """
    tokens = as_int(value.get("num_speculative_tokens"))
    if not facts.guards.lora_spec_token_budget or tokens is None or tokens <= 0 \
            or not inputs.bool_value(cfg, "enable_lora"):
        return None
    eng = routing.engine(cfg, facts)
    if eng.error:
        return None
    budget, seqs = scheduler.max_num_batched_tokens(cfg, facts, eng), scheduler.max_num_seqs(cfg, facts, eng)
    pairs = [(b, s) for b in budget.candidates for s in seqs.candidates if isinstance(b, int) and isinstance(s, int)]
    failing = [(b, s) for b, s in pairs if b < s * (tokens + 1)]
    if not failing:
        return None
    b, s = failing[0]
    said = [("max_num_batched_tokens", b, budget), ("max_num_seqs", s, seqs)]
    parts = [f"{name} {number}" + ("" if inputs.setting(cfg, name) is not None else f" ({why.reason})")
             for name, number, why in said]
    certain = len(failing) == len(pairs)
    head = f"max_num_batched_tokens {b} < max_num_seqs {s} x (1 + {tokens} speculative tokens)"
    detail = (f"with --enable-lora vLLM needs max_num_batched_tokens >= max_num_seqs x (1 + "
              f"num_speculative_tokens {tokens}) = {s * (tokens + 1)}, and {parts[0]} is below it "
              f"(with {parts[1]})")
    detail += f"; vLLM {facts.version} refuses it" if certain else f": possibly, and then vLLM {facts.version} refuses it"
    return (head, detail), tuple(dict.fromkeys(("max_num_batched_tokens", "max_num_seqs") + budget.fields + seqs.fields)), certain


def bounded(fields: Dict[str, NestedField], name: str) -> bool:
    """Whether pydantic states a bound for `name` (then nested-config-invalid reports it)."""
    field = fields.get(name)
    return field is not None and (field.gt is not None or field.ge is not None)


def as_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def problem(version: Any, value: dict, fields: Dict[str, NestedField], model_type: str) -> Optional[tuple]:
    """Return (words, vLLM's message) for the first of `version`'s __post_init__ checks `value` fails."""
    tokens = as_int(value.get("num_speculative_tokens"))
    method, model = value.get("method"), value.get("model")
    ngram = method in window_methods(version) or (method is None and model in NGRAM)
    if value.get("num_speculative_tokens") is None and (ngram or model is None):
        what = "the n-gram method" if ngram else "no draft model"
        return f"uses {what} without num_speculative_tokens", MISSING_TOKENS
    if tokens is not None and model is None and not ngram and method not in self_drafting(version) \
            and not drafts_itself(version, method, model_type):
        return (f"gives num_speculative_tokens with method {method!r} but no draft model",
                no_draft_model(version, method))
    if tokens is not None and tokens <= 0 and not bounded(fields, "num_speculative_tokens"):
        return (f"num_speculative_tokens ({tokens}) must be greater than zero",
                f"Expected num_speculative_tokens to be greater than zero ({tokens}).")
    if not ngram:
        return None
    low, high = as_int(value.get("prompt_lookup_min")), as_int(value.get("prompt_lookup_max"))
    if low is None and high is None:
        low = high = 5
    low = high if low is None else low
    high = low if high is None else high
    for name, number in (("prompt_lookup_min", low), ("prompt_lookup_max", high)):
        if number < 1 and not bounded(fields, name):
            return f"{name} ({number}) must be > 0", f"{name}={number} must be > 0"
    if low > high:
        return (f"prompt_lookup_min ({low}) is above prompt_lookup_max ({high})",
                f"prompt_lookup_min={low} must be <= prompt_lookup_max={high}")
    return None
