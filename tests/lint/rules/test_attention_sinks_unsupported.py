"""PO505 attention-sinks-unsupported: what it says, and where it points."""

from __future__ import annotations

from patchops.lint.rule import Example
from patchops.lint.rules.attention_sinks_unsupported import ENV, FLAG, GPT_OSS_20B, SPEC, AttentionSinksUnsupported
from patchops.lint.runner import lint_example


def _found(example: Example):
    return [d for d in lint_example(example) if d.code == AttentionSinksUnsupported.code]


def test_flash_attn_off_hopper_quotes_the_fa3_assertion():
    d, = _found(Example(SPEC.format(cc=8.6) + ENV.format(name="FLASH_ATTN"), vllm="0.11.0", model=GPT_OSS_20B))
    assert d.message == ('attention backend "FLASH_ATTN" cannot run the attention sinks of \'gpt_oss\' on '
                         'compute capability 8.6')
    assert (d.line, d.column, d.severity) == (4, 3, "error")
    assert d.vllm_message == "Sinks are only supported in FlashAttention 3"
    assert d.fields == ("VLLM_ATTENTION_BACKEND", "hardware.compute_capability")


def test_from_0_12_the_selection_refuses_and_names_the_reason():
    d, = _found(Example(SPEC.format(cc=7.5) + FLAG.format(name="flash_attn"), vllm="0.33.0", model=GPT_OSS_20B))
    assert d.vllm_message == ("Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. "
                              "Reason: ['sink setting not supported', 'compute capability not supported']")
    assert d.fix == "remove the backend choice (vLLM then picks TRITON_ATTN, which takes sinks), or name TRITON_ATTN"


def test_flex_attention_takes_sinks_on_no_gpu():
    d, = _found(Example(SPEC.format(cc=9.0) + FLAG.format(name="FLEX_ATTENTION"), vllm="0.20.0", model=GPT_OSS_20B))
    assert "FLEX_ATTENTION takes them on no GPU" in d.explanation


def test_a_model_without_sinks_or_vllms_own_pick_is_not_flagged():
    qwen = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}
    assert _found(Example(SPEC.format(cc=8.0) + ENV.format(name="FLASH_ATTN"), vllm="0.12.0", model=qwen)) == []
    assert _found(Example(SPEC.format(cc=7.0), vllm="0.12.0", model=GPT_OSS_20B)) == []
