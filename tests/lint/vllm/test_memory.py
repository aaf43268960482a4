"""The KV-cache memory estimate (lint/vllm/memory.py, PO622) against figures derived by hand.

The configs are the real config.json files of the conformance corpus. Hand figures:
- Llama-2-7B (MHA, fp16): 32000 x 4096 x 2 embeddings + 32 x (4 x 4096^2 attention + 3 x 4096 x
  11008 MLP + 2 x 4096 norms) + 4096 = 6,738,415,616 parameters; KV 2 x 32 x 32 x 128 x 2 =
  524,288 bytes per token.
- Llama-3.1-8B (GQA 32/8, bf16): 128256 x 4096 x 2 + 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096
  x 14336 + 8192) + 4096 = 8,030,261,248; KV 2 x 32 x 8 x 128 x 2 = 131,072.
- Qwen3-30B-A3B (MoE, 128 experts of 768, bf16): 151936 x 2048 x 2 + 48 x (2 x 2048 x 4096 + 2 x
  2048 x 512 + 128 x 3 x 2048 x 768 + 2048 x 128 router + 4096) + 2048 = 30,532,110,336;
  KV 2 x 48 x 4 x 128 x 2 = 98,304.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.rule import Example
from patchops.lint.runner import lint_example
from patchops.lint.vllm import memory

MODELS = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "models"
GIB = 1024 ** 3


def config(name: str) -> dict:
    return json.loads((MODELS / name / "config.json").read_text())


def estimate(name: str, memory_gib: float, tp: int = 1, pp: int = 1, utilization: float = 0.9,
             **kw) -> memory.MemoryEstimate:
    args = dict(block_size=16, dtype=None, kv_cache_dtype=None, quantization=None)
    args.update(kw)
    found, why = memory.estimate(model_facts_from_dict(config(name)), memory_gib=memory_gib,
                                 utilization=utilization, tp=tp, pp=pp, **args)
    assert why is None
    return found


def po707(text: str, model: str, vllm: str = "0.8.5"):
    return [d for d in lint_example(Example(text, vllm=vllm, model=config(model))) if d.code == "PO622"]


@pytest.mark.parametrize("name, params, embedding, kv_per_token", [
    ("Llama-2-7b-hf", 6_738_415_616, 262_144_000, 524_288),
    ("Llama-3.1-8B-Instruct", 8_030_261_248, 1_050_673_152, 131_072),
    ("Qwen3-30B-A3B", 30_532_110_336, 622_329_856, 98_304),
])
def test_parameters_and_kv_bytes_match_hand_figures(name, params, embedding, kv_per_token):
    found = estimate(name, 80)
    assert found.params.total == params and found.params.embedding == embedding
    assert found.weight_bytes == params * 2
    assert found.kv_bytes_per_token == kv_per_token


@pytest.mark.parametrize("name, memory_gib, tokens", [
    # (24 GiB x 0.9 - 13,476,831,232 B) // (16 x 524,288) = 1158 blocks
    ("Llama-2-7b-hf", 24, 18_528),
    # (24 GiB x 0.9 - 16,060,522,496 B) // (16 x 131,072) = 3400 blocks
    ("Llama-3.1-8B-Instruct", 24, 54_400),
    # (80 GiB x 0.9 - 61,064,220,672 B) // (16 x 98,304) = 10328 blocks
    ("Qwen3-30B-A3B", 80, 165_248),
])
def test_tokens_the_cache_holds_match_hand_figures(name, memory_gib, tokens):
    assert estimate(name, memory_gib).tokens == tokens


def test_tensor_parallel_splits_weights_and_kv_heads_and_replicates_below_one():
    tp2 = estimate("Llama-3.1-8B-Instruct", 24, tp=2)
    assert tp2.weight_bytes == 8_030_261_248 and tp2.kv_heads == 4 and tp2.kv_bytes_per_token == 65_536
    tp16 = estimate("Llama-3.1-8B-Instruct", 24, tp=16)
    assert tp16.kv_heads == 1   # 8 KV heads over 16 ranks: each rank keeps a whole head
    pp2 = estimate("Qwen3-30B-A3B", 80, pp=2)
    assert pp2.layers == 24 and pp2.kv_bytes_per_token == 49_152


def test_kv_cache_dtype_and_fp8_weights_change_the_bytes():
    fp8_kv = estimate("Llama-3.1-8B-Instruct", 24, kv_cache_dtype="fp8_e5m2")
    assert fp8_kv.kv_bytes_per_token == 65_536
    fp8 = estimate("Llama-3.1-8B-Instruct", 24, quantization="fp8")
    # embeddings and lm_head stay bf16; the 6,979,588,096 other parameters take 1 byte
    assert fp8.weight_bytes == 1_050_673_152 * 2 + 6_979_588_096


def test_tied_embeddings_count_once():
    tied = dict(config("Llama-3.1-8B-Instruct"), tie_word_embeddings=True)
    found, _ = memory.estimate(model_facts_from_dict(tied), memory_gib=24, utilization=0.9, tp=1, pp=1,
                               block_size=16, dtype=None, kv_cache_dtype=None, quantization=None)
    assert found.params.embedding == 525_336_576


def test_unknown_quantization_is_skipped_with_a_note():
    text = "model: org/m\nhardware: {memory_gib: 24}\nargs:\n  quantization: bitsandbytes\n"
    [note] = po707(text, "Llama-3.1-8B-Instruct")
    assert note.severity == "info" and "bitsandbytes" in note.message and note.vllm_message is None


def test_no_stated_memory_no_estimate():
    assert po707("model: org/m\nargs:\n  max-model-len: 131072\n", "Llama-3.1-8B-Instruct") == []


# Llama-2-7B at its derived 4096 tokens: 2 GiB of KV, so it needs 12.55 + 2 = 14.55 GiB = 16.17 GiB x 0.9.
@pytest.mark.parametrize("memory_gib, fires", [(16, True), (16.2, False)])
def test_derived_max_model_len_boundary_is_reported_at_the_model(memory_gib, fires):
    found = po707(f"model: org/llama2\nhardware: {{memory_gib: {memory_gib}}}\n", "Llama-2-7b-hf")
    if not fires:
        assert found == []
        return
    [d] = found
    assert (d.line, d.column, d.severity) == (1, 1, "error")
    assert "max_model_len (derived from config.json) 4096" in d.message
    assert "holds 3776 tokens" in d.explanation   # (15,461,882,265 - 13,476,831,232 B) // 8 MiB = 236 blocks
    assert d.vllm_message.startswith("To serve at least one request with the models's max seq len (4096), "
                                     "(2.00 GiB KV cache is needed")


def test_vllm_033_message_is_spelled_as_that_release_spells_it():
    [d] = po707("model: org/m\nhardware: {memory_gib: 24}\nargs:\n  max-model-len: 54401\n",
                "Llama-3.1-8B-Instruct", vllm="0.33.0")
    assert d.vllm_message.startswith("To serve at least one request with the model's max seq len (54401)")


@pytest.mark.parametrize("concurrency, fires", [(4, False), (5, True)])
def test_moe_concurrency_boundary_warns_at_the_workload(concurrency, fires):
    # 165,248 tokens hold 4 requests of 40,960 (163,840), not 5 (204,800).
    text = f"model: org/qwen3\nhardware: {{memory_gib: 80}}\nworkload:\n  concurrency: [1, {concurrency}]\n"
    found = po707(text, "Qwen3-30B-A3B")
    if not fires:
        assert found == []
        return
    [d] = found
    assert (d.line, d.column, d.severity) == (4, 3, "warning")
    assert "5 x 40960 tokens" in d.message and "at most 4 such requests" in d.explanation


@pytest.mark.parametrize("seqs, fires", [(10, False), (11, True)])
def test_workload_lengths_and_max_num_seqs_set_the_context(seqs, fires):
    # Llama-3.1-8B on 24 GiB holds 54,400 tokens: 10 x (5000 + 440) fills it exactly, 11 do not fit.
    text = ("model: org/m\nhardware: {memory_gib: 24}\nargs:\n  max-model-len: 32768\n"
            f"  max-num-seqs: {seqs}\nworkload:\n  prompt_tokens: 5000\n  max_tokens: 440\n")
    found = po707(text, "Llama-3.1-8B-Instruct")
    if not fires:
        assert found == []
        return
    [d] = found
    assert (d.line, d.column, d.severity) == (5, 3, "warning")
    assert "prompt_tokens 5000 + max_tokens 440" in d.explanation and "at most 10 such" in d.explanation


@pytest.mark.parametrize("memory_gib, fires", [(63, True), (64, False)])
def test_weights_that_fill_the_gpu_quote_no_available_memory(memory_gib, fires):
    # Qwen3-30B-A3B's 56.87 GiB of bf16 weights: 63 x 0.9 = 56.70 GiB leaves nothing, 64 x 0.9 = 57.60 does.
    hits = po707(f"model: org/qwen3\nhardware: {{memory_gib: {memory_gib}}}\nargs:\n  max-model-len: 4096\n",
                 "Qwen3-30B-A3B")
    if not fires:
        assert hits == []
        return
    [d] = hits
    assert (d.line, d.column, d.severity) == (4, 3, "error")
    assert d.vllm_message == "No available memory for the cache blocks."
    assert d.fix.startswith("the weights fill the memory")
