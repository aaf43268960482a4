"""PO303 multistep-needs-flash-backend beyond its examples."""

from __future__ import annotations

from lintkit import linter

CODE = "PO303"


lint = linter(CODE, kind="spec")


def spec(version, hardware="{gpus: 1, compute_capability: 8.0}", args=(), env=""):
    return (f"model: /models/Qwen2.5-7B-Instruct\nvllm: {{version: {version}}}\nhardware: {hardware}\n"
            + (f"env: {env}\n" if env else "") + "args:\n  num-scheduler-steps: 4\n"
            + "".join(f"  {a}\n" for a in args))


def test_seed_incident_2_names_xformers_in_0_6_3_spelling():
    [found] = lint(spec("0.6.3.post1", "{gpus: 1, compute_capability: 7.5}",
                        ["enable-chunked-prefill: false", "max-model-len: 4096"]), "0.6.3.post1")
    assert found.severity == "error"
    assert found.vllm_message == ("Multi-Step not supported for attention backend: xformers. Set "
                                  "VLLM_ATTENTION_BACKEND to a value from ['flash-attn', "
                                  "'rocm-flash-attn', 'flashinfer'].")
    assert "before the weights load" in found.explanation
    assert "hardware.compute_capability" in found.fields
    assert "FLASH_ATTN or FLASHINFER" in found.fix


def test_vendor_build_without_flash_attn_suggests_flashinfer_when_installed():
    [found] = lint(spec("0.6.3.post1", args=["max-model-len: 4096"]), "0.6.3.post1",
                   has_flash_attn=False, has_flashinfer=True)
    assert "vllm_flash_attn" in found.explanation
    assert "VLLM_ATTENTION_BACKEND=FLASHINFER" in found.fix


def test_automatic_chunked_prefill_takes_the_stricter_list():
    # 0.7.3 drops the YAML false; V0 turns chunked prefill on for 100000 > 32768.
    [found] = lint(spec("0.7.3", args=["enable-chunked-prefill: false", "max-model-len: 100000",
                                       "max-num-batched-tokens: 8192"]), "0.7.3", has_flash_attn=False)
    assert found.severity == "error"   # XFORMERS fails both lists
    assert found.vllm_message.startswith("Multi-Step + Chunked-Prefill not supported for attention "
                                         "backend: XFORMERS. Set VLLM_ATTENTION_BACKEND to a value "
                                         "from ['FLASH_ATTN', 'FLASHINFER'].")
    # FLASHINFER passes both lists on 0.7.3 ...
    assert lint(spec("0.7.3", env="{VLLM_ATTENTION_BACKEND: FLASHINFER}",
                     args=["max-model-len: 100000"]), "0.7.3") == []
    # ... but only the plain one on 0.6.3: possibly, depending on whether V0 chunks this model
    [found] = lint(spec("0.6.3.post1", env="{VLLM_ATTENTION_BACKEND: FLASHINFER}",
                        args=["max-model-len: 100000"]), "0.6.3.post1")
    assert found.severity == "warning" and "possibly fails" in found.message


def test_unknown_gpu_is_not_a_finding_but_fp8_may_be():
    assert lint(spec("0.8.5", "{gpus: 1}", ["max-model-len: 4096"]), "0.8.5") == []
    [found] = lint(spec("0.8.5", "{gpus: 1}", ["max-model-len: 4096", "kv-cache-dtype: fp8"]), "0.8.5")
    assert found.severity == "warning"
    assert lint(spec("0.8.5", "{gpus: 1, compute_capability: 9.0}",
                     ["max-model-len: 4096", "kv-cache-dtype: fp8"]), "0.8.5") == []


def test_quiet_when_v1_is_forced_or_on_cpu():
    assert lint(spec("0.8.5", "{gpus: 1, compute_capability: 7.5}", env="{VLLM_USE_V1: '1'}"),
                "0.8.5") == []
    assert lint(spec("0.7.3", "{platform: cpu}", ["dtype: float32"]), "0.7.3") == []


def test_block_size_16_keeps_flash_attention():
    # platforms/cuda.py: only a block size not divisible by 16 downgrades to XFORMERS
    for version in ("0.6.3.post1", "0.9.2"):
        ok = spec(version, args=["max-model-len: 4096", "block-size: 16"])
        assert lint(ok, version, has_flash_attn=True) == [], version
        [found] = lint(ok.replace("block-size: 16", "block-size: 8"), version, has_flash_attn=True)
        assert found.severity == "error" and "block_size 8 is not a multiple of 16" in found.explanation
