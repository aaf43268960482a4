"""PO504 mla-unsupported-on-gpu."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import attention, inputs, messages

# moonshotai/Moonlight-16B-A3B-Instruct: DeepSeek-V3 attention (MLA, kv_lora_rank 512 + rope 64 = 576).
MOONLIGHT = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 2048,
             "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 27,
             "kv_lora_rank": 512, "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
             "v_head_dim": 128, "n_routed_experts": 64, "moe_intermediate_size": 1408,
             "intermediate_size": 11264, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}
SPEC = "model: moonshotai/Moonlight-16B-A3B-Instruct\nhardware: {{gpus: 1, compute_capability: {cc}}}\n"
FP8 = "args:\n  kv-cache-dtype: fp8\n"


class MlaUnsupportedOnGpu(Rule):
    """
    ## What it does
    Flags an MLA model (DeepSeek-V2/V3/R1, Kimi, Moonlight: `kv_lora_rank` in config.json,
    head size 576) on a declared GPU no MLA backend of the release takes. vLLM's MLA backends
    by compute capability (0.12+, each backend's `supports_compute_capability`): FLASH_ATTN_MLA
    9.x, FLASHMLA 9.x/10.x (Hopper only before 0.12), CUTLASS_MLA and FLASHINFER_MLA 10.x,
    TRITON_MLA every GPU. Flagged: an fp8 KV cache where only Triton MLA is left (every GPU in
    0.7, off Hopper and Blackwell in 0.8-0.17; Triton MLA takes fp8 from 0.18); sparse MLA
    (DeepSeek-V3.2, `index_topk`) off 9.x/10.x (12.x joins in 0.25); from 0.12 a backend named
    with `VLLM_ATTENTION_BACKEND` / `--attention-backend` that the GPU is not listed for.

    ## Why is this bad?
    The backend is picked while the worker builds the model, after the engine config: vLLM
    0.7-0.11 fails in Triton MLA with "FP8 Triton MLA not yet supported"; from 0.12 the
    selection refuses: "No valid attention backend found for cuda with head_size: 576, ...",
    or "Selected backend AttentionBackendEnum.FLASHMLA is not valid for this configuration.
    Reason: ['compute capability not supported']".

    ## Fix
    Keep the KV cache in the model's dtype (`kv_cache_dtype: auto`), drop the named backend
    so vLLM falls back to Triton MLA, use a vLLM whose Triton MLA takes fp8 (0.18+), or run on
    a GPU the backend takes.
    """

    code = "PO504"
    name = "mla-unsupported-on-gpu"
    severity = "error"
    versions = ">=0.7"
    stage = "later"
    vllm_message = messages.NO_VALID_ATTENTION_BACKEND
    needs = Needs(model=True, hardware=("compute_capability",), optional=("hardware.platform",))
    VALID = [
        Example(SPEC.format(cc=8.0), vllm="0.12.0", model=MOONLIGHT),
        Example(SPEC.format(cc=8.0) + FP8, vllm="0.20.0", model=MOONLIGHT),
        Example(SPEC.format(cc=9.0) + FP8, vllm="0.10.1.1", model=MOONLIGHT),
        Example(SPEC.format(cc=9.0) + "env:\n  VLLM_ATTENTION_BACKEND: FLASHMLA\n", vllm="0.12.0",
                model=MOONLIGHT),
    ]
    INVALID = [
        Example(SPEC.format(cc=8.0) + FP8, vllm="0.12.0", model=MOONLIGHT, at=(4, 3)),
        Example(SPEC.format(cc=8.6) + FP8, model=MOONLIGHT, at=(4, 3)),
        Example(SPEC.format(cc=8.9) + "env:\n  VLLM_ATTENTION_BACKEND: FLASHMLA\n", vllm="0.12.0",
                model=MOONLIGHT, at=(4, 3)),
        Example(SPEC.format(cc=8.9) + "args:\n  attention-backend: FLASHMLA\n", vllm="0.33.0", model=MOONLIGHT,
                at=(4, 3)),
    ]

    def concerns(self, cfg: ReadConfig) -> bool:
        return attention.uses_mla(cfg, cfg.model_facts.text_config)

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        if model is None:
            return
        refusal = attention.mla_refusal(cfg, facts, model.text_config)
        if refusal is None:
            return
        cc = inputs.compute_capability(cfg)
        shown = f"{cc[0]}.{cc[1]}" if cc else "?"
        at = refusal.setting or inputs.ctx_setting(cfg, "hardware.compute_capability")
        if refusal.problem in attention.MLA_BACKEND_MAJORS:
            message = f'attention backend "{refusal.problem}" does not run MLA on compute capability {shown}'
            fix = f"remove the backend choice (vLLM then picks TRITON_MLA), or use a GPU of {refusal.takes}"
        elif refusal.problem == "sparse MLA":
            message = (f"sparse MLA ({model.config_model_type}, index_topk) has no attention backend on "
                       f"compute capability {shown}")
            fix = f"use a GPU of {refusal.takes}"
        else:
            kv = inputs.value(cfg, "kv_cache_dtype")
            message = f'kv_cache_dtype "{kv}" with MLA: no MLA backend takes it on compute capability {shown}'
            fix = "use kv_cache_dtype auto, or vLLM 0.18 or later, whose Triton MLA takes fp8"
        yield self.diagnostic(
            cfg, at, message,
            explanation=f"the model runs multi-head latent attention (head size {attention.MLA_HEAD_SIZE}); "
            f"vLLM {facts.version}'s MLA backends for it need {refusal.takes}, and the worker refuses while "
            "it builds the model",
            fields=refusal.fields, fix=fix, vllm_message=_vllm_text(refusal))


def _vllm_text(refusal: attention.BackendRefusal) -> str:
    """Return what vLLM raises for `refusal`, with the values the inputs show."""
    if refusal.refusal == attention.TRITON_FP8:
        return messages.FP8_TRITON_MLA
    if refusal.refusal == attention.SELECTED:
        return messages.SELECTED_BACKEND_INVALID.format(name=refusal.problem, reasons=refusal.reasons)
    return messages.NO_VALID_ATTENTION_BACKEND.format(config=refusal.config, reasons=refusal.reasons)
