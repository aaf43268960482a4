"""PO803 speculative-config-invalid."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, releases, routing, scheduler

NGRAM = ("ngram", "[ngram]", "ngram_gpu")
# Methods that need no draft model (SpeculativeConfig.__post_init__ sets `model` for them).
SELF_DRAFTING = NGRAM + ("suffix", "extract_hidden_states", "custom_class")
SPEC_NEEDS_V1 = "Speculative decoding is not supported on vLLM V0."
DRAFT_UNSUPPORTED = "Speculative decoding with draft model is not supported yet."
# vllm/engine/arg_utils.py:1486 (0.11.0) _is_v1_supported_oracle, :1775 (0.12.0) _check_feature_supported.
DRAFT_METHOD_UNSUPPORTED = "Draft model speculative decoding is not supported yet."
# Draft model names SpeculativeConfig recognises as another method (eagle-, medusa heads).
DETECTED = ("eagle", "medusa", "mlp_speculator", "mlp-speculator")
NO_DRAFT_MODEL = "num_speculative_tokens was provided without speculative model."
MISSING_TOKENS = ("num_speculative_tokens must be provided with speculative model unless the "
                  "draft model config contains an n_predict parameter.")
LORA_BUDGET = "Consider increasing max_num_batched_tokens or decreasing num_speculative_tokens"
FIX = "give num_speculative_tokens > 0 and prompt_lookup_min <= prompt_lookup_max"
# The served model's config.json, used as its own draft in the examples.
QWEN_7B = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "num_attention_heads": 28}
MEDUSA_ON_SELF = ("vllm serve m --speculative-config "
                  "'{\"method\": \"medusa\", \"model\": \"m\", \"num_speculative_tokens\": 2}'\n")
DRAFT_ON_SELF = ("vllm serve m --speculative-config "
                 "'{\"method\": \"draft_model\", \"model\": \"m\", \"num_speculative_tokens\": 2}'\n")
NGRAM_4 = "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4}'"


class SpeculativeConfigInvalid(Rule):
    """
    ## What it does
    Checks the guards `SpeculativeConfig.__post_init__` and `_verify_args` apply to every
    `--speculative-config` (0.8.5+, where the old `--speculative-model` flags became one JSON
    flag): `num_speculative_tokens` present (unless a draft model may bring `n_predict`) and
    greater than zero, a draft `model` for methods that need one (not n-gram, suffix, MTP), and
    `prompt_lookup_min <= prompt_lookup_max` after vLLM fills a missing one from the other
    (both missing: 5 and 5). Where the copy has the guards, speculation on the V0 engine
    (0.10-0.11) and a draft model are refused too: `method: draft_model` (or a draft taken
    for one) on 0.10.x, `method: draft_model` on 0.11-0.14 (0.15 runs draft models on V1). Bounds that pydantic already states as `Field(ge=1)` are left to
    `nested-config-invalid`.

    Two more refusals, read from the copy. 0.10-0.12 pick the method from the draft model
    unless the method is one `SpeculativeConfig.__post_init__` keeps (eagle, eagle3): a name
    fragment, else the draft's `model_type` in its `config.json` (medusa, mlp_speculator, the
    MTP types); any other draft is a plain draft model, refused, so `method: medusa` with a
    Qwen2 draft fails. Checked when the draft's `config.json` is on this machine (a local
    folder, the Hugging Face cache, or the served model itself). And with `--enable-lora`,
    `create_engine_config` (0.12+) refuses a token budget below max_num_seqs x (1 +
    num_speculative_tokens), with the budget and max_num_seqs the launch sets or defaults to
    (a warning when the default depends on a GPU the config does not state).

    ## Why is this bad?
    vLLM refuses to build its config: "prompt_lookup_min=5 must be <= prompt_lookup_max=3",
    "num_speculative_tokens must be provided with speculative model unless the draft model
    config contains an n_predict parameter.", "Speculative decoding with draft model is not
    supported yet." (0.10.1.1), "Draft model speculative decoding is not supported yet."
    (0.11.0-0.14.1), "Consider increasing max_num_batched_tokens or decreasing
    num_speculative_tokens" (0.33.0).

    ## Fix
    Give `num_speculative_tokens` (a positive count) and an n-gram window with min <= max;
    give a draft of the method's kind (a Medusa head for medusa); with LoRA, raise
    max_num_batched_tokens or lower num_speculative_tokens.
    """

    code = "PO803"
    name = "speculative-config-invalid"
    severity = "error"
    versions = ">=0.8.5"
    needs = Needs(optional=("hardware.compute_capability", "hardware.memory_gib", "hardware.name",
                            "hardware.platform", "model"))
    VALID = [
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"prompt_lookup_min\": 2}'\n", kind="command"),
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"prompt_lookup_min\": 4, \"prompt_lookup_max\": 4}'\n", kind="command", vllm="0.33.0"),
        # 0.9.2 runs a draft it cannot name as a plain draft model
        Example(MEDUSA_ON_SELF, kind="command", vllm="0.9.2", model=QWEN_7B),
        # 0.15 runs a draft model on V1
        Example(DRAFT_ON_SELF, kind="command", vllm="0.15.0", model=QWEN_7B),
        # the budget holds 128 x (1 + 4) tokens
        Example("vllm serve m --enable-lora --max-num-batched-tokens 640 --max-num-seqs 128 "
                f"--speculative-config {NGRAM_4}\n", kind="command", vllm="0.33.0"),
        # without LoRA the budget is not compared
        Example("vllm serve m --max-num-batched-tokens 256 --max-num-seqs 128 "
                f"--speculative-config {NGRAM_4}\n", kind="command", vllm="0.33.0"),
        # 0.10.1.1 has no such check
        Example("vllm serve m --enable-lora --max-num-batched-tokens 256 --max-num-seqs 128 "
                f"--speculative-config {NGRAM_4}\n", kind="command", vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"prompt_lookup_min\": 5, \"prompt_lookup_max\": 3}'\n", kind="command", at=(1, 14)),
        Example("vllm serve m --speculative-config '{\"method\": \"eagle\", \"num_speculative_tokens\": 3}'\n",
                kind="command", at=(1, 14)),
        Example("vllm serve m --speculative-config '{}'\n", kind="command", vllm="0.33.0", at=(1, 14)),
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"prompt_lookup_max\": 3}'\n",
                kind="command", vllm="0.10.1.1", at=(1, 14)),
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 0}'\n",
                kind="command", vllm="0.8.5", at=(1, 14)),
        Example(MEDUSA_ON_SELF, kind="command", vllm="0.10.1.1", model=QWEN_7B, at=(1, 14)),
        Example(DRAFT_ON_SELF, kind="command", vllm="0.12.0", model=QWEN_7B, at=(1, 14)),
        Example("vllm serve m --enable-lora --max-num-batched-tokens 639 --max-num-seqs 128 "
                f"--speculative-config {NGRAM_4}\n", kind="command", vllm="0.33.0", at=(1, 76)),
        # max_num_seqs defaults by GPU (256 or 1024 sequences x 3 tokens): unknown hardware
        Example("vllm serve m --enable-lora --max-num-batched-tokens 1024 --speculative-config "
                "'{\"method\": \"ngram\", \"num_speculative_tokens\": 2, \"prompt_lookup_max\": 2}'\n",
                kind="command", vllm="0.33.0", at=(1, 58), severity="warning"),
    ]

    def check(self, cfg: ServeConfig, facts: Facts) -> Iterator[Diagnostic]:
        spec = facts.nested_configs.get("speculative_config")
        found = cfg.args.get("speculative_config")
        if spec is None or found is None or not isinstance(found.value, dict) or \
                ("speculative_config" in cfg.ignored and cfg.ignored["speculative_config"][0] == found):
            return
        value = found.value
        fields = spec["fields"]
        model_type = cfg.model_facts.model_type if cfg.model_facts is not None else ""
        detected = _detected_method(cfg, spec.get("draft_detection"), value)
        problem = _problem(value, fields, model_type) or _unsupported(cfg, facts, value, guess=detected is None) \
            or (detected if detected and detected[1] == DRAFT_UNSUPPORTED else None)
        if problem is not None:
            text, vllm_text = problem
            head, detail = text if isinstance(text, tuple) else (text, None)
            yield self.diagnostic(cfg, found, f"speculative_config {head}",
                                  explanation="; ".join(p for p in (detail, f"vLLM {facts.version} refuses it") if p),
                                  fields=("speculative_config",), vllm_message=vllm_text, fix=FIX)
            return
        budget = _lora_budget_problem(cfg, facts, value)
        if budget is not None:
            text, fields_used, certain = budget
            yield self.diagnostic(cfg, found, f"{text[0]} with --enable-lora",
                                  explanation=text[1], severity=None if certain else "warning",
                                  fields=("speculative_config", "enable_lora") + fields_used,
                                  vllm_message=LORA_BUDGET,
                                  fix="raise max-num-batched-tokens or lower num_speculative_tokens")


def _unsupported(cfg: ServeConfig, facts: Facts, value: dict, guess: bool) -> Optional[tuple]:
    """The copy's refusals of a whole kind of speculation: on V0 (0.10-0.11), by draft model (0.10).

    Without a method, a draft is guessed to be a plain one by its name only when `guess`: the
    copy's detection cannot be run on the draft's config.json.
    """
    engine = routing.engine(cfg, facts)
    if facts.guards.get("spec_decode_needs_v1") and engine.value == routing.V0 and not engine.error:
        return "is set, and this vLLM runs speculative decoding on V1 only", SPEC_NEEDS_V1
    method, model = value.get("method"), value.get("model")
    draft = method == "draft_model" or (guess and method is None and isinstance(model, str) and model not in NGRAM
                                        and not any(k in model.lower() for k in DETECTED))
    if facts.guards.get("draft_model_unsupported") and draft:
        return "uses a draft model, which this vLLM does not support yet", DRAFT_UNSUPPORTED
    if facts.guards.get("draft_method_unsupported") and method == "draft_model":
        return ("uses method 'draft_model', which this vLLM does not support yet",
                f"draft models run on V1 from vLLM {releases.DRAFT_MODEL_ON_V1}"), DRAFT_METHOD_UNSUPPORTED
    return None


def _detected_method(cfg: ServeConfig, detection: Optional[dict], value: dict) -> Optional[tuple]:
    """Run the copy's method detection (facts_extract/draft_detection.py) on the draft's config.json.

    Returns (what the chain found, DRAFT_UNSUPPORTED when it refuses, else None); None when the
    copy has no chain, the method skips it, or the draft's config.json is not on this machine.
    """
    method, model = value.get("method"), value.get("model")
    if not detection or not isinstance(model, str) or method in SELF_DRAFTING or model in NGRAM:
        return None
    draft = None
    for kind, names, found in detection["branches"]:
        if kind == "keep" and method in names:
            return f"keeps method {method!r}", None
        if kind == "name" and any(name in model.lower() for name in names):
            return f"names the method {found!r} by the draft's name", None
        if kind == "model_type":
            draft = draft or inputs.model_facts_of(cfg, model)
            if draft is None:
                return None   # the draft's config.json is not here: vLLM decides by its model_type
            architectures = draft.text_config.get("architectures") or [None]
            if draft.model_type in detection["rewritten"] or architectures[0] in detection["rewritten"]:
                return None   # hf_config_override gives it another model_type first
            if draft.model_type in names:
                return f"names the method {found!r} by the draft's model_type", None
    if draft is None:
        return None
    kinds = [n for kind, names, _ in detection["branches"] if kind == "model_type" for n in names]
    named = f"names method {method!r} with" if method else "has no method and"
    return ((f"{named} draft {model!r}, which this vLLM runs as a plain draft model",
             f"its model_type {draft.model_type!r} is none of {', '.join(kinds)}, so this vLLM runs it as a "
             "plain draft model, which it does not support yet"), DRAFT_UNSUPPORTED)


def _lora_budget_problem(cfg: ServeConfig, facts: Facts, value: dict) -> Optional[tuple]:
    """With LoRA, `create_engine_config` needs max_num_batched_tokens >= max_num_seqs x (1 + k) (0.12+).

    Returns ((headline, why), fields, certain): not certain when a default depends on hardware not stated.
    """
    tokens = _int(value.get("num_speculative_tokens"))
    if not facts.guards.get("lora_spec_token_budget") or tokens is None or tokens <= 0 \
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


def _drafts_itself(method: Optional[str], model_type: str) -> bool:
    """MTP methods, and a DeepSeek-V3 target, use the target model's own layers as the draft."""
    return bool(method) and (method == "mtp" or method.endswith("_mtp")) or "deepseek" in model_type


def _bounded(fields: dict, name: str) -> bool:
    """Whether pydantic states a bound for `name` (then nested-config-invalid reports it)."""
    return bool(fields.get(name, {}).keys() & {"gt", "ge"})


def _int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _problem(value: dict, fields: dict, model_type: str) -> Optional[tuple]:
    tokens = _int(value.get("num_speculative_tokens"))
    method, model = value.get("method"), value.get("model")
    ngram = method in NGRAM or (method is None and model in NGRAM)
    if value.get("num_speculative_tokens") is None and (ngram or model is None):
        what = "the n-gram method" if ngram else "no draft model"
        return f"uses {what} without num_speculative_tokens", MISSING_TOKENS
    if tokens is not None and model is None and not ngram and method not in SELF_DRAFTING \
            and not _drafts_itself(method, model_type):
        return (f"gives num_speculative_tokens with method {method!r} but no draft model",
                NO_DRAFT_MODEL)
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
