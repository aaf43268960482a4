"""PO505 attention-sinks-unsupported."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import attention, inputs, messages

# openai/gpt-oss-20b: every attention layer has learned sinks.
GPT_OSS_20B = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
               "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 24,
               "num_local_experts": 32, "num_experts_per_tok": 4, "intermediate_size": 2880,
               "sliding_window": 128, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
SPEC = "model: openai/gpt-oss-20b\nhardware: {{gpus: 1, compute_capability: {cc}}}\n"
ENV = "env:\n  VLLM_ATTENTION_BACKEND: {name}\n"
FLAG = "args:\n  attention-backend: {name}\n"


class AttentionSinksUnsupported(Rule):
    """
    ## What it does
    Flags a model with attention sinks (gpt-oss) launched with an attention backend that cannot
    run sinks on the declared GPU. vLLM's own pick takes sinks everywhere (Triton attention off
    Hopper), so only a backend named with `VLLM_ATTENTION_BACKEND` or `--attention-backend` is
    judged: FLASH_ATTN takes sinks only as FlashAttention 3 (compute capability 9.x; FA4 on
    10.x from 0.20), FLASHINFER only with its TRTLLM kernels (10.x, judged from 0.12),
    FLEX_ATTENTION and TREE_ATTN never (from 0.12).

    ## Why is this bad?
    The backend is checked while the worker builds the model, after the engine config: vLLM
    0.10.1-0.11 fails with "Sinks are only supported in FlashAttention 3"; from 0.12 with
    "Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration.
    Reason: ['sink setting not supported']".

    ## Fix
    Drop the backend choice (vLLM then picks TRITON_ATTN, which takes sinks), name TRITON_ATTN,
    or run on a GPU the named backend takes sinks on.
    """

    code = "PO505"
    name = "attention-sinks-unsupported"
    severity = "error"
    versions = ">=0.10.1"
    stage = "later"
    vllm_message = messages.SINKS_NEED_FA3
    needs = Needs(model=True, hardware=("compute_capability",), optional=("hardware.platform",))
    VALID = [
        Example(SPEC.format(cc=9.0) + ENV.format(name="FLASH_ATTN"), vllm="0.10.1.1", model=GPT_OSS_20B),
        Example(SPEC.format(cc=8.0), vllm="0.12.0", model=GPT_OSS_20B),
        Example(SPEC.format(cc=8.0) + ENV.format(name="TRITON_ATTN"), vllm="0.12.0", model=GPT_OSS_20B),
        Example(SPEC.format(cc=10.0) + FLAG.format(name="FLASH_ATTN"), vllm="0.20.0", model=GPT_OSS_20B),
    ]
    INVALID = [
        Example(SPEC.format(cc=8.0) + ENV.format(name="FLASH_ATTN"), vllm="0.10.1.1", model=GPT_OSS_20B,
                at=(4, 3)),
        Example(SPEC.format(cc=8.9) + ENV.format(name="FLASHINFER"), vllm="0.12.0", model=GPT_OSS_20B,
                at=(4, 3)),
        Example(SPEC.format(cc=8.0) + FLAG.format(name="FLASH_ATTN"), vllm="0.33.0", model=GPT_OSS_20B,
                at=(4, 3)),
    ]

    def concerns(self, cfg: ReadConfig) -> bool:
        return cfg.model_facts.text_config.get("model_type") in attention.SINK_MODEL_TYPES

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        if model is None:
            return
        refusal = attention.sink_refusal(cfg, facts, model.text_config)
        if refusal is None:
            return
        cc = inputs.compute_capability(cfg)
        shown = f"{cc[0]}.{cc[1]}" if cc else "?"
        vllm_text = (messages.SINKS_NEED_FA3 if refusal.refusal == attention.FA3_SINKS else
                     messages.SELECTED_BACKEND_INVALID.format(name=refusal.problem, reasons=refusal.reasons))
        where = f"on {refusal.takes}" if refusal.takes != "no GPU" else "on no GPU"
        yield self.diagnostic(
            cfg, refusal.setting, f'attention backend "{refusal.problem}" cannot run the attention sinks of '
            f'{model.config_model_type!r} on compute capability {shown}',
            explanation=f"the model's attention layers have learned sinks; vLLM {facts.version}'s "
            f"{refusal.problem} takes them {where}, and the worker refuses while it builds the model",
            fields=refusal.fields, fix="remove the backend choice (vLLM then picks TRITON_ATTN, which takes "
            "sinks), or name TRITON_ATTN", vllm_message=vllm_text)
