"""lint/vllm/attention.py: the V0 attention backend on CUDA, and the backends multi-step accepts."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import attention


def config(args=(), hardware="platform: cuda, compute_capability: '8.0'", env=""):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return load_text(f"model: /models/m\nargs:\n{body}hardware: {{{hardware}}}\n" + (f"env: {{{env}}}\n" if env else ""))


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
