"""lint/vllm/attention.py: the V0 attention backend on CUDA, and the backends multi-step accepts."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import attention

from handmade import H100_CTX, as_read, hand_config, hand_facts


def config(args=(), hardware="platform: cuda, compute_capability: '8.0'", env=""):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return as_read(load_text(f"model: /models/m\nargs:\n{body}hardware: {{{hardware}}}\n" + (f"env: {{{env}}}\n" if env else "")))


def backend(version, **kw):
    return attention.v0_attention_backend(config(**kw), facts_for_version(version))


def test_flash_attn_on_an_ampere_gpu_and_likely_without_a_stated_one():
    found = backend("0.8.5")
    assert (found.value, found.certain, found.alternatives) == ("FLASH_ATTN", True, ())
    unstated = backend("0.8.5", hardware="platform: cuda")
    assert (unstated.value, unstated.certain, unstated.alternatives) == ("FLASH_ATTN", False, ("XFORMERS",))


@pytest.mark.parametrize("cc, value", [("7.5", "XFORMERS"), ("8.0", "FLASH_ATTN")])
def test_below_compute_capability_8_0_xformers(cc, value):
    assert backend("0.8.5", hardware=f"platform: cuda, compute_capability: '{cc}'").value == value


def test_float32_or_a_block_size_off_16_falls_back():
    assert backend("0.8.5", args=["dtype: float32"]).value == "XFORMERS"
    assert backend("0.8.5", args=["block-size: 8"]).value == "XFORMERS"
    assert backend("0.8.5", args=["block-size: 32"]).value == "FLASH_ATTN"
    no_fa = dataclasses.replace(facts_for_version("0.8.5"), has_flash_attn=False)
    assert attention.v0_attention_backend(config(), no_fa).value == "XFORMERS"


def test_an_fp8_kv_cache_needs_fa3_on_hopper_from_0_8():
    fp8 = ["kv-cache-dtype: fp8"]
    assert backend("0.7.3", args=fp8, hardware="platform: cuda, compute_capability: '9.0'").value == "XFORMERS"
    assert backend("0.8.5", args=fp8, hardware="platform: cuda, compute_capability: '9.0'").value == "FLASH_ATTN"
    assert backend("0.8.5", args=fp8).value == "XFORMERS"                       # 8.0: no FA3
    maybe = backend("0.8.5", args=fp8, hardware="platform: cuda")
    assert (maybe.value, maybe.certain, maybe.alternatives) == ("XFORMERS", False, ("FLASH_ATTN",))


def test_the_environment_variable_and_the_platform():
    assert backend("0.8.5", env="VLLM_ATTENTION_BACKEND: FLASHINFER").value == "FLASHINFER"
    other = backend("0.8.5", env="VLLM_ATTENTION_BACKEND: TORCH_SDPA")
    assert (other.value, other.certain) == (None, False)
    assert backend("0.6.3.post1", env="VLLM_ATTENTION_BACKEND: TORCH_SDPA").value == "TORCH_SDPA"
    assert backend("0.8.5", hardware="platform: rocm").value == "ROCM_FLASH"


def test_names_and_multistep_lists_are_spelled_per_release():
    old, new = facts_for_version("0.6.3.post1"), facts_for_version("0.8.5")
    assert attention.backend_label("XFORMERS", old) == "xformers" and attention.backend_label("XFORMERS", new) == "XFORMERS"
    assert attention.backend_label(None, new) is None
    assert "flash-attn" in attention.multistep_backends(old, chunked=False)
    assert "FLASH_ATTN" in attention.multistep_backends(new, chunked=True)


def test_a_misspelt_backend_is_matched_to_the_one_meant():
    known = ("FLASH_ATTN", "FLASHINFER", "XFORMERS", "FLASH_ATTN_VLLM_V1")
    assert attention.suggest_backend("flash-attention", known) == "FLASH_ATTN"
    assert attention.suggest_backend("xformer", known) == "XFORMERS"
    assert attention.suggest_backend("nothing-alike", known) is None
    # ATTENTION spelt out and a V1 suffix the release dropped: too far for a fuzzy match
    assert attention.suggest_backend("triton-attention-vllm-v1", ("TRITON_ATTN", "FLASH_ATTN")) == "TRITON_ATTN"


# The V0 backend of hand-built configs, and vLLM's multi-step lists.


@pytest.mark.parametrize("version,args,env,ctx,extra,expected,certain", [
    ("0.6.3.post1", {}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.6.3.post1", {}, {}, {}, {}, "FLASH_ATTN", False),
    ("0.6.3.post1", {}, {}, {"hardware.compute_capability": 7.5}, {}, "XFORMERS", True),
    ("0.6.3.post1", {}, {}, {"hardware.compute_capability": 8.0}, {"has_flash_attn": False}, "XFORMERS", True),
    ("0.8.5", {"dtype": "float32"}, {}, {}, {}, "XFORMERS", True),
    ("0.7.3", {"kv_cache_dtype": "fp8"}, {}, H100_CTX, {}, "XFORMERS", True),
    ("0.8.5", {"kv_cache_dtype": "fp8"}, {}, H100_CTX, {}, "FLASH_ATTN", True),
    ("0.8.5", {"kv_cache_dtype": "fp8"}, {}, {"hardware.compute_capability": 8.0}, {}, "XFORMERS", True),
    ("0.8.5", {"kv_cache_dtype": "fp8"}, {}, {}, {}, "XFORMERS", False),
    ("0.9.2", {"block_size": 8}, {}, {}, {}, "XFORMERS", True),
    ("0.9.2", {"block_size": 32}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.9.2", {"block_size": 16}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.6.3.post1", {"block_size": 16}, {}, {"hardware.compute_capability": 8.0}, {}, "FLASH_ATTN", True),
    ("0.9.2", {"block_size": 24}, {}, {"hardware.compute_capability": 8.0}, {}, "XFORMERS", True),
    ("0.7.3", {}, {"VLLM_ATTENTION_BACKEND": "XFORMERS"}, {}, {}, "XFORMERS", True),
    ("0.7.3", {}, {"VLLM_ATTENTION_BACKEND": "FLASHINFER"}, {"hardware.compute_capability": 7.5}, {}, "FLASHINFER", True),
    ("0.7.3", {}, {"VLLM_ATTENTION_BACKEND": "FLASH_ATTN"}, {"hardware.compute_capability": 7.5}, {}, "XFORMERS", True),
    ("0.6.3.post1", {}, {}, {"hardware.platform": "rocm"}, {}, "ROCM_FLASH", True),
])
def test_v0_attention_backend(version, args, env, ctx, extra, expected, certain):
    got = attention.v0_attention_backend(hand_config(args=args, env=env, ctx=ctx), hand_facts(version, **extra))
    assert (got.value, got.certain) == (expected, certain)


def test_backend_labels_and_multistep_lists():
    old = hand_facts("0.6.3.post1")
    assert attention.backend_label("XFORMERS", old) == "xformers"
    assert attention.backend_label("XFORMERS", hand_facts("0.7.3")) == "XFORMERS"
    assert attention.multistep_backends(old, False) == ("flash-attn", "rocm-flash-attn", "flashinfer")
    assert attention.multistep_backends(old, True) == ("flash-attn",)
    assert attention.multistep_backends(hand_facts("0.9.2"), True) == ("FLASH_ATTN", "FLASHINFER")
    shipped = hand_facts("0.9.2", multistep_backends=("FLASH_ATTN",))
    assert attention.multistep_backends(shipped, False) == ("FLASH_ATTN",)


@pytest.mark.vllm
@pytest.mark.parametrize("version,chunked,expected", [
    ("0.6.3.post1", False, attention.MULTISTEP_BACKENDS_063), ("0.6.3.post1", True, attention.MULTISTEP_CHUNKED_BACKENDS_063),
    ("0.7.3", False, attention.MULTISTEP_BACKENDS), ("0.10.0", True, attention.MULTISTEP_CHUNKED_BACKENDS),
])
def test_builtin_multistep_lists_match_the_source(vllm_site, version, chunked, expected):
    text = (vllm_site(version) / "vllm/worker/multi_step_model_runner.py").read_text(encoding="utf-8")
    name = "MULTI_STEP_CHUNKED_PREFILL_ATTENTION_BACKENDS" if chunked else "MULTI_STEP_ATTENTION_BACKENDS"
    import ast
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            assert tuple(ast.literal_eval(node.value)) == expected
            return
    raise AssertionError(f"{name} not found in vLLM {version}")
# --------------------------------------------------------------------------- MLA on this GPU

MLA = {"model_type": "deepseek_v3", "kv_lora_rank": 512, "qk_rope_head_dim": 64, "torch_dtype": "bfloat16"}
SPARSE = dict(MLA, model_type="deepseek_v32", index_topk=2048)


def mla(version, cc, args=(), env="", model=MLA, platform="cuda"):
    cfg = config(args=args, hardware=f"platform: {platform}, compute_capability: '{cc}'", env=env)
    return attention.mla_refusal(cfg, facts_for_version(version), model)


def test_fp8_triton_mla_refused_on_every_gpu_in_0_7_and_off_hopper_from_0_8():
    assert mla("0.6.3.post1", "9.0", ["kv-cache-dtype: fp8"]) is None          # before MLA_TRITON_FP8_REFUSED
    found = mla("0.7.3", "9.0", ["kv-cache-dtype: fp8"])
    assert found.refusal == attention.TRITON_FP8 and found.fields[0] == "kv_cache_dtype"
    assert mla("0.8.5", "9.0", ["kv-cache-dtype: fp8"]) is None                # MLA_FLASHMLA_ON_HOPPER
    assert mla("0.8.5", "8.0", ["kv-cache-dtype: fp8"]).refusal == attention.TRITON_FP8
    assert mla("0.8.5", "8.0", ["kv-cache-dtype: auto"]) is None


def test_fp8_mla_names_the_no_valid_backend_refusal_from_0_12_until_triton_takes_fp8_in_0_18():
    assert mla("0.11.0", "8.9", ["kv-cache-dtype: fp8"]).refusal == attention.TRITON_FP8
    found = mla("0.12.0", "8.9", ["kv-cache-dtype: fp8"])
    assert found.refusal == attention.NO_VALID
    assert found.config.startswith("head_size: 576, dtype: torch.bfloat16, kv_cache_dtype: fp8,")
    assert found.takes == "compute capability 9.x or 10.x"
    assert mla("0.17.0", "12.0", ["kv-cache-dtype: fp8"]) is not None
    assert mla("0.18.0", "12.0", ["kv-cache-dtype: fp8"]) is None               # MLA_TRITON_FP8
    assert mla("0.12.0", "10.0", ["kv-cache-dtype: fp8"]) is None


def test_sparse_mla_needs_hopper_or_blackwell_and_sm120_from_0_25():
    assert mla("0.11.0", "8.0", model=SPARSE) is None                          # before BACKENDS_VALIDATED
    found = mla("0.12.0", "8.0", model=SPARSE)
    assert found.problem == "sparse MLA" and found.config.endswith("use_sparse: True")
    assert mla("0.12.0", "9.0", model=SPARSE) is None
    assert mla("0.20.0", "12.0", model=SPARSE).takes == "compute capability 9.x or 10.x"
    assert mla("0.25.0", "12.0", model=SPARSE) is None                         # SPARSE_MLA_ON_SM120


def test_a_named_mla_backend_is_checked_against_the_gpu_from_0_12():
    env = "VLLM_ATTENTION_BACKEND: FLASHMLA"
    assert mla("0.11.0", "8.9", env=env) is None
    found = mla("0.12.0", "8.9", env=env)
    assert (found.refusal, found.problem, found.reasons) == (attention.SELECTED, "FLASHMLA",
                                                              "['compute capability not supported']")
    assert found.fields == ("VLLM_ATTENTION_BACKEND", "hardware.compute_capability")
    assert mla("0.12.0", "9.0", env=env) is None
    assert mla("0.12.0", "9.0", env="VLLM_ATTENTION_BACKEND: CUTLASS_MLA").takes == "compute capability 10.x"
    assert mla("0.12.0", "8.0", env="VLLM_ATTENTION_BACKEND: TRITON_MLA") is None
    assert mla("0.33.0", "8.9", ["attention-backend: flashmla"]).fields[0] == "attention_backend"


def test_mla_off_disabled_or_not_cuda_is_not_judged():
    assert mla("0.12.0", "8.0", ["kv-cache-dtype: fp8"], env="VLLM_MLA_DISABLE: '1'") is None
    assert mla("0.12.0", "8.0", ["kv-cache-dtype: fp8"], model=dict(MLA, model_type="qwen2")) is None
    assert mla("0.12.0", "8.0", ["kv-cache-dtype: fp8"], platform="rocm") is None


# --------------------------------------------------------------------------- attention sinks

GPT_OSS = {"model_type": "gpt_oss", "head_dim": 64, "torch_dtype": "bfloat16"}


def sinks(version, cc, args=(), env=""):
    cfg = config(args=args, hardware=f"platform: cuda, compute_capability: '{cc}'", env=env)
    return attention.sink_refusal(cfg, facts_for_version(version), GPT_OSS)


def test_flash_attn_takes_sinks_as_fa3_on_hopper_only_and_fa4_on_blackwell_from_0_20():
    env = "VLLM_ATTENTION_BACKEND: FLASH_ATTN"
    assert sinks("0.10.0", "8.0", env=env) is None                               # before ATTENTION_SINKS
    assert sinks("0.10.1.1", "8.0", env=env).refusal == attention.FA3_SINKS
    assert sinks("0.10.1.1", "9.0", env=env) is None
    assert sinks("0.10.1.1", "8.0") is None                                      # vLLM's own pick: Triton
    found = sinks("0.12.0", "10.0", env=env)
    assert (found.refusal, found.reasons) == (attention.SELECTED, "['sink setting not supported']")
    assert sinks("0.19.1", "10.0", ["attention-backend: FLASH_ATTN"]) is not None
    assert sinks("0.20.0", "10.0", ["attention-backend: FLASH_ATTN"]) is None    # FA4_SINKS
    assert "compute capability not supported" in sinks("0.12.0", "7.5", env=env).reasons


def test_flashinfer_takes_sinks_on_blackwell_and_flex_never_from_0_12():
    assert sinks("0.11.0", "9.0", env="VLLM_ATTENTION_BACKEND: FLASHINFER") is None
    assert sinks("0.12.0", "9.0", env="VLLM_ATTENTION_BACKEND: FLASHINFER").takes == "compute capability 10.x"
    assert sinks("0.12.0", "10.0", env="VLLM_ATTENTION_BACKEND: FLASHINFER") is None
    assert sinks("0.33.0", "10.0", ["attention-backend: FLEX_ATTENTION"]).takes == "no GPU"
    assert sinks("0.12.0", "9.0", env="VLLM_ATTENTION_BACKEND: TRITON_ATTN") is None
