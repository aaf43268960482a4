"""PO622 kv-cache-too-small."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule, with_vllm_message
from patchops.lint.vllm import inputs, memory, messages, routing
from patchops.lint.vllm.model_len import derived_max_len
from patchops.lint.vllm.releases import KV_FIT_MESSAGE_SPELLED, release

# meta-llama/Llama-3.1-8B-Instruct config.json: 8.03B parameters, 128 KiB of KV per token in bf16.
LLAMA_31_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
               "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
               "vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
               "tie_word_embeddings": False}
SPEC_24G = "model: org/llama\nhardware: {memory_gib: 24}\nargs:\n  max-model-len: %d\n"


class KvCacheTooSmall(Rule):
    """
    ## What it does
    Estimates the memory of each GPU from the model's config.json and the launch: weights per
    GPU (parameters counted from the config's dimensions: embeddings, attention, MLP or MoE
    experts, lm_head unless tied; bytes from `dtype` and `quantization`, split by TP x PP),
    KV bytes per token (2 x layers/PP x KV heads/TP x head size x `kv_cache_dtype` bytes), and
    the tokens the cache holds in `block_size` blocks out of `hardware.memory_gib` x
    `gpu_memory_utilization`. Flags a `max_model_len` one request cannot fit (error), and a
    `workload.concurrency` (or an explicit `max_num_seqs`) whose requests at full context
    cannot all fit (warning). Needs `hardware.memory_gib`; an unknown quantization is skipped
    with a note.

    ## Why is this bad?
    vLLM loads the model, profiles, and only then refuses to start: "To serve at least one
    request with the model's max seq len (131072), (16.00 GiB KV cache is needed, which is
    larger than the available KV cache memory (6.64 GiB)." (V0: "The model's max seq len
    (131072) is larger than the maximum number of tokens that can be stored in KV cache
    (54400)."). When the cache holds fewer tokens than the concurrency needs, vLLM starts but
    queues or preempts requests: a field log saw FP16 KV at 32K context fail on a 32 GB card.
    The estimate leaves out activations and CUDA graphs, so the real cache is smaller still.

    ## Fix
    Lower max-model-len, raise gpu-memory-utilization, use `kv-cache-dtype: fp8`, or spread
    the model over more GPUs with tensor parallelism.
    """

    code = "PO622"
    name = "kv-cache-too-small"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.KV_CACHE_TOO_SMALL_V1
    stage = "later"      # the KV cache is sized after the model loads, at worker start-up
    needs = Needs(model=True, hardware=("memory_gib",),
                  optional=("hardware.compute_capability", "hardware.platform", "workload.concurrency",
                            "workload.max_tokens", "workload.prompt_tokens"))
    # 24 GiB x 0.9 = 21.60 GiB - 14.96 GiB of weights = 6.64 GiB in 16-token blocks of 128 KiB
    # per token = 3400 blocks = 54400 tokens; 6 requests of 8192 fit, 7 do not.
    VALID = [
        Example(SPEC_24G % 54400, model=LLAMA_31_8B),
        # TP 2 halves the weights and the KV heads per GPU, fp8 halves the KV bytes: 462720 tokens.
        Example(SPEC_24G % 131072 + "  kv-cache-dtype: fp8\n  tensor-parallel-size: 2\n", model=LLAMA_31_8B),
        Example(SPEC_24G % 8192 + "workload:\n  concurrency: [1, 6]\n", model=LLAMA_31_8B),
    ]
    INVALID = [
        Example(SPEC_24G % 54401, model=LLAMA_31_8B, at=(4, 3)),
        Example(SPEC_24G % 54401, vllm="0.6.3.post1", model=LLAMA_31_8B, at=(4, 3)),
        Example(SPEC_24G % 8192 + "workload:\n  concurrency: [1, 7]\n", model=LLAMA_31_8B,
                at=(6, 3), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        memory_gib = inputs.memory_gib(cfg)
        if model is None or not memory_gib:
            return
        eng = routing.engine(cfg, facts)
        if eng.error:
            return
        len_at = inputs.setting(cfg, "max_model_len")
        max_len = inputs.max_model_len(cfg).value
        if max_len is None:
            derived = derived_max_len(model, facts.max_len,
                                      disable_sliding_window=bool(inputs.bool_value(cfg, "disable_sliding_window")))
            if derived is None or derived.value == float("inf"):
                return
            max_len, len_at = int(derived.value), None
        tp = inputs.int_value(cfg, "tensor_parallel_size") or 1
        pp = inputs.int_value(cfg, "pipeline_parallel_size") or 1
        found, why = memory.estimate(
            model, memory_gib=memory_gib, utilization=inputs.to_float(inputs.value(cfg, "gpu_memory_utilization"), 0.9),
            tp=max(tp, 1), pp=max(pp, 1), block_size=inputs.int_value(cfg, "block_size") or 16,
            dtype=inputs.to_text(inputs.value(cfg, "dtype")), kv_cache_dtype=inputs.to_text(inputs.value(cfg, "kv_cache_dtype")),
            quantization=inputs.to_text(inputs.value(cfg, "quantization")))
        at = len_at or cfg.model
        if found is None:
            yield with_vllm_message(self.diagnostic(cfg, at, f"no memory estimate: {why}", severity="info",
                                                    fields=("hardware.memory_gib",)), None)
            return
        arithmetic = _arithmetic(found, memory_gib, max(tp, 1), max(pp, 1))
        ver = facts.version
        needed = found.needed_bytes(max_len)
        if needed > found.kv_bytes:   # V1's test; V0's (max_model_len > tokens) is the same in whole blocks
            if found.kv_bytes <= 0:
                vllm_text = messages.NO_MEMORY_FOR_CACHE_BLOCKS
            elif eng.value == routing.V1:
                owner = "model's" if release(facts) >= KV_FIT_MESSAGE_SPELLED else "models's"
                vllm_text = messages.KV_CACHE_TOO_SMALL_V1.format(owner=owner, max_model_len=max_len,
                                                                  needed=memory.gib(needed),
                                                                  available=memory.gib(found.kv_bytes))
            else:
                vllm_text = messages.KV_CACHE_TOO_SMALL_V0.format(max_model_len=max_len, tokens=found.tokens)
            origin = "max_model_len" if len_at is not None else "max_model_len (derived from config.json)"
            yield self.diagnostic(
                cfg, at,
                f"one request of {origin} {max_len} does not fit in the KV cache ({found.tokens} tokens)",
                explanation=f"{arithmetic}; vLLM {ver} will load the model and then refuse to start",
                fields=("max_model_len", "hardware.memory_gib"),
                fix=(f"lower max-model-len to {found.tokens} or less, raise gpu-memory-utilization, "
                     "or use kv-cache-dtype fp8") if found.tokens else
                    "the weights fill the memory: spread them with tensor parallelism or quantize them",
                vllm_message=vllm_text)
            return
        yield from self._check_concurrency(cfg, facts, found, max_len, arithmetic)

    def _check_concurrency(self, cfg: ReadConfig, facts: Facts, found: memory.MemoryEstimate,
                           max_len: int, arithmetic: str) -> Iterator[Diagnostic]:
        levels = inputs.concurrency_levels(cfg)
        seqs_at = inputs.setting(cfg, "max_num_seqs")
        if levels:
            count, at, what = levels[-1], inputs.ctx_setting(cfg, "workload.concurrency"), "workload concurrency"
        elif seqs_at is not None and inputs.int_value(cfg, "max_num_seqs"):
            count, at, what = inputs.int_value(cfg, "max_num_seqs"), seqs_at, "max_num_seqs"
        else:
            return
        prompt = inputs.to_int(inputs.ctx_value(cfg, "workload.prompt_tokens"))
        output = inputs.to_int(inputs.ctx_value(cfg, "workload.max_tokens"))
        context, source = ((prompt + output, f"prompt_tokens {prompt} + max_tokens {output}")
                           if prompt and output else (max_len, f"max_model_len {max_len}"))
        context = min(context, max_len)
        if count * context <= found.tokens:
            return
        fits = found.tokens // context
        yield with_vllm_message(self.diagnostic(
            cfg, at,
            f"{what} {count} x {context} tokens = {count * context} > KV cache of {found.tokens} tokens",
            explanation=f"each request holds {context} tokens of context ({source}); {arithmetic}; vLLM "
            f"{facts.version} runs at most {fits} such requests at once and queues or preempts the rest",
            severity="warning", fields=(("workload.concurrency",) if levels else ("max_num_seqs",)) +
            ("hardware.memory_gib",),
            fix=f"serve at most {fits} concurrent requests of this length, or lower max-model-len, "
                "or use kv-cache-dtype fp8"), None)   # vLLM starts and says nothing


def _arithmetic(found: memory.MemoryEstimate, memory_gib: float, tp: int, pp: int) -> str:
    """Say how the estimate was reached, every number with its origin."""
    util = found.budget_bytes / (memory_gib * memory.GIB)
    return (f"each GPU has {memory.gib(max(found.kv_bytes, 0))} GiB left for it ({memory_gib:g} GiB x "
            f"gpu_memory_utilization {util:g} = {memory.gib(found.budget_bytes)} GiB, minus "
            f"{memory.gib(found.weight_bytes)} GiB of weights: {found.params.total / 1e9:.2f}B parameters "
            f"/ TP {tp} x PP {pp}), which at {found.kv_bytes_per_token} bytes per token (2 x {found.layers} "
            f"layers x {found.kv_heads} KV heads x {found.head_size} head size x {found.kv_dtype_bytes} bytes) "
            f"holds {found.tokens} tokens in blocks of {found.block_size}")
