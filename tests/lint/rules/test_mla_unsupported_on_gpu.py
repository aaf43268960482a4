"""PO504 mla-unsupported-on-gpu: what it says, and where it points."""

from __future__ import annotations

from patchops.lint.rule import Example
from patchops.lint.rules.mla_unsupported_on_gpu import FP8, MOONLIGHT, SPEC, MlaUnsupportedOnGpu
from patchops.lint.runner import lint_example


def _found(example: Example):
    return [d for d in lint_example(example) if d.code == MlaUnsupportedOnGpu.code]


def test_fp8_kv_cache_names_the_value_the_gpu_and_the_fix():
    d, = _found(Example(SPEC.format(cc=8.0) + FP8, vllm="0.12.0", model=MOONLIGHT))
    assert d.message == 'kv_cache_dtype "fp8" with MLA: no MLA backend takes it on compute capability 8.0'
    assert (d.line, d.column, d.severity) == (4, 3, "error")
    assert d.fix == "use kv_cache_dtype auto, or vLLM 0.18 or later, whose Triton MLA takes fp8"
    assert "need compute capability 9.x or 10.x" in d.explanation


def test_sparse_mla_points_at_the_gpu():
    sparse = dict(MOONLIGHT, model_type="deepseek_v32", index_topk=2048)
    d, = _found(Example(SPEC.format(cc=8.9), vllm="0.20.0", model=sparse))
    assert d.message == "sparse MLA (deepseek_v32, index_topk) has no attention backend on compute capability 8.9"
    assert (d.line, d.column) == (2, 21)      # hardware.compute_capability
    assert d.vllm_message.startswith("No valid attention backend found for cuda with head_size: 576")


def test_a_named_backend_off_its_gpus():
    d, = _found(Example(SPEC.format(cc=8.0) + "args:\n  attention-backend: CUTLASS_MLA\n", vllm="0.33.0",
                        model=MOONLIGHT))
    assert d.message == 'attention backend "CUTLASS_MLA" does not run MLA on compute capability 8.0'
    assert d.fix == ("remove the backend choice (vLLM then picks TRITON_MLA), or use a GPU of compute "
                     "capability 10.x")


def test_quotes_each_refusal_as_vllm_words_it():
    d, = _found(Example(SPEC.format(cc=8.6) + FP8, vllm="0.11.0", model=MOONLIGHT))
    assert d.vllm_message == "FP8 Triton MLA not yet supported"
    d, = _found(Example(SPEC.format(cc=8.0) + FP8, vllm="0.12.0", model=MOONLIGHT))
    assert d.vllm_message == ("No valid attention backend found for cuda with head_size: 576, dtype: torch.bfloat16, "
                              "kv_cache_dtype: fp8, block_size: ..., use_mla: True, has_sink: False, "
                              "use_sparse: False. Reasons: {...}.")
    d, = _found(Example(SPEC.format(cc=8.9) + "env:\n  VLLM_ATTENTION_BACKEND: FLASHMLA\n", vllm="0.12.0",
                        model=MOONLIGHT))
    assert d.vllm_message == ("Selected backend AttentionBackendEnum.FLASHMLA is not valid for this configuration. "
                              "Reason: ['compute capability not supported']")
