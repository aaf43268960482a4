"""PO321 speculative-config-invalid."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, speculative

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
    greater than zero, a draft `model` for methods that need one, and
    `prompt_lookup_min <= prompt_lookup_max` after vLLM fills a missing one from the other
    (both missing: 5 and 5). Which methods need no draft model follows the release: n-gram
    always, suffix from 0.11.1, extract_hidden_states from 0.17, ngram_gpu from 0.18 (which
    also takes the n-gram window); `custom_class` (0.22+) needs its class path as `model`.
    Before 0.11 the target drafts itself by its model_type (deepseek_v3; mimo from 0.9;
    ernie4_5_moe and qwen3_next from 0.10.2), from 0.11 by method (`mtp` and its aliases).
    Where the copy has the guards, speculation on the V0 engine (0.10-0.11) and a draft model
    are refused too: `method: draft_model` (or a draft taken for one) on 0.10.x, `method:
    draft_model` on 0.11-0.14 (0.15 runs draft models on V1). Bounds that pydantic already
    states as `Field(ge=1)` are left to
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

    code = "PO321"
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

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        spec = facts.nested_configs.get("speculative_config")
        found = cfg.args.get("speculative_config")
        if spec is None or found is None or not isinstance(found.value, dict) or \
                inputs.is_dropped(cfg, "speculative_config", found):
            return
        value = found.value
        fields = spec.fields
        model_type = cfg.model_facts.model_type if cfg.model_facts is not None else ""
        detected = speculative.detected_method(cfg, facts, spec.draft_detection, value)
        problem = speculative.problem(facts, value, fields, model_type) \
            or speculative.unsupported(cfg, facts, value, guess=detected is None) \
            or (detected if detected and detected[1] == speculative.DRAFT_UNSUPPORTED else None)
        if problem is not None:
            text, vllm_text = problem
            head, detail = text if isinstance(text, tuple) else (text, None)
            yield self.diagnostic(cfg, found, f"speculative_config {head}",
                                  explanation="; ".join(p for p in (detail, f"vLLM {facts.version} refuses it") if p),
                                  fields=("speculative_config",), vllm_message=vllm_text,
                                  fix="give num_speculative_tokens > 0 and prompt_lookup_min <= prompt_lookup_max")
            return
        budget = speculative.lora_budget_problem(cfg, facts, value)
        if budget is not None:
            text, fields_used, certain = budget
            yield self.diagnostic(cfg, found, f"{text[0]} with --enable-lora",
                                  explanation=text[1], severity=None if certain else "warning",
                                  fields=("speculative_config", "enable_lora") + fields_used,
                                  vllm_message=speculative.LORA_BUDGET,
                                  fix="raise max-num-batched-tokens or lower num_speculative_tokens")
