"""Seeded combinations of the settings the lint rules reason about.

Each generated case draws a model, a GPU profile and two to five settings; each setting lands
in the `--config` YAML (dash or underscore spelling) or on the command line, and some cases
set engine environment variables. The seed and the count are fixed, so the corpus (and its
case ids `gen/NNN`) is the same on every machine; change SEED or COUNT only together with a
re-recording.

A second draw (`gen/serve-NNN`, SERVE_SEED and SERVE_COUNT) covers the common serve flags the
first leaves out (LoRA, data/pipeline parallelism, logprobs, tokenizer and load formats,
generation config, structured outputs, partial prefills, ...), each as a bundle of the flags
that only mean something together (`--enable-lora` with its rank and adapter count).

A third draw (`gen/user-NNN`, USER_SEED and USER_COUNT) mixes what users put in serve files
and launch scripts: quantization and KV-cache dtypes, lengths against the model, TP/PP against
heads and layers, speculative decoding, chunked prefill budgets, CUDA graphs, prefix caching,
LoRA, structured outputs, tool and reasoning parsers, served names, and the engine's env.
Most of its draws fail early on one flag some release lacks, so a fourth (`gen/plausible-NNN`,
PLAUSIBLE_SEED) draws the same subjects mostly from values every release accepts, with GPUs
enough for the parallelism, so the checks that depend on the model and on each other are
reached. A fifth (`gen/tail-NNN`, TAIL_SEED) draws the long tail of serve flags found in
deployment files (overrides, pooling, scheduler knobs, removed options, old spellings), and
a sixth (`gen/spelling-NNN`, SPELLING_SEED) the ways launch scripts spell them: short options,
`--flag=value`, dotted keys, paths beside the model, one risky setting among plain ones.

A seventh (`gen/deploy-NNN`, DEPLOY_SEED) writes whole serve files as deployments do for one
model on a card (DEPLOY_MODELS: 7B-70B dense, MoE, MLA, Gemma 2, gpt-oss, GPTQ/AWQ/FP8
checkpoints, a vision model): parallel sizes, lengths, parsers and quantization fitting the
model in most draws, so the checks on heads, lengths, experts, dtypes and compute capability
are reached. An eighth (`gen/hardware-NNN`, HARDWARE_SEED) puts one to three settings whose
verdict depends on the card (dtype, quantization method, KV-cache dtype, block size, attention
backend) on those models and cards.
"""

from __future__ import annotations

import json
import random
from typing import Dict, List, Optional, Sequence, Tuple

from conformance.cases import Case

SEED = 20261201
COUNT = 160
MODELS = ("Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct", "Llama-2-7b-hf",
          "Llama-3.1-8B-Instruct", "Qwen3-30B-A3B", "Qwen2.5-7B-Instruct-YaRN")
GPU_COUNTS = (1, 2, 4, 8)
# the GPU profiles of corpus/gpus.yaml when the first six draws were recorded: a profile added
# later must not reshuffle their cases
EARLY_GPUS = ("a10", "a100-40g", "a100-80g", "b200", "h100-80g", "h200", "l40s", "t4", "v100")

# option -> values drawn (bool options are on/off switches)
SETTINGS = {
    "max-model-len": (2048, 4096, 8192, 16384, 32768, 40960, 65536, 131072, "32k", "16K"),
    "max-num-batched-tokens": (128, 512, 2048, 4096, 8192, 16384, 32768),
    "max-num-seqs": (1, 16, 64, 256, 512, 1024, 4096),
    "enable-chunked-prefill": (True, False),
    "enforce-eager": (True, False),
    "tensor-parallel-size": (1, 2, 3, 4, 8, 16),
    "pipeline-parallel-size": (1, 2),
    "block-size": (8, 16, 32, 64, 128, 256),
    "kv-cache-dtype": ("auto", "fp8", "fp8_e5m2", "fp8_e4m3", "bfloat16", "fp9"),
    "gpu-memory-utilization": (0.5, 0.9, 0.95, 1.0, 1.2, 0),
    "enable-prefix-caching": (True, False),
    "cuda-graph-sizes": ([8], [1, 2, 4], [512]),
    "compilation-config": ('{"cudagraph_capture_sizes": [1, 2]}', '{"level": 3}',
                           '{"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 32]}'),
    "num-scheduler-steps": (1, 4, 8),
    "swap-space": (4, 64, 512),
    "dtype": ("auto", "half", "float32", "bfloat16"),
    "max-seq-len-to-capture": (4096, 16384),
}
ENV = {
    "VLLM_USE_V1": ("0", "1"),
    "VLLM_ATTENTION_BACKEND": ("FLASH_ATTN", "XFORMERS", "FLASHINFER", "TRITON_ATTN"),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": ("1",),
}


SERVE_SEED = 20261202
SERVE_COUNT = 120
SERVE_MODELS = MODELS + ("Mistral-7B-v0.1",)
# bundle name -> alternatives, each a tuple of (option, value) set together
SERVE_SETTINGS = {
    "batch": (((("max-num-seqs", 256), ("max-num-batched-tokens", 8192))),
              (("max-num-seqs", 512), ("max-num-batched-tokens", 256)),
              (("max-num-seqs", 1024),), (("max-num-seqs", 0),),
              (("max-num-seqs", 64), ("max-num-batched-tokens", 64))),
    "max-model-len": ((("max-model-len", 4096),), (("max-model-len", 32768),),
                      (("max-model-len", 40000),), (("max-model-len", "128k"),),
                      (("max-model-len", 1),)),
    "gpu-memory-utilization": ((("gpu-memory-utilization", 0.85),), (("gpu-memory-utilization", 1.0),),
                               (("gpu-memory-utilization", 1.05),), (("gpu-memory-utilization", -0.5),)),
    "block-size": ((("block-size", 16),), (("block-size", 32),), (("block-size", 24),),
                   (("block-size", 64),)),
    "kv-cache-dtype": ((("kv-cache-dtype", "fp8"),), (("kv-cache-dtype", "auto"),),
                       (("kv-cache-dtype", "fp8_e4m3"),), (("kv-cache-dtype", "int4"),)),
    "enable-prefix-caching": ((("enable-prefix-caching", True),), (("enable-prefix-caching", False),)),
    "dtype": ((("dtype", "half"),), (("dtype", "bfloat16"),), (("dtype", "float32"),),
              (("dtype", "fp16"),)),
    "seed": ((("seed", 0),), (("seed", 1234),), (("seed", "none"),)),
    "max-logprobs": ((("max-logprobs", 5),), (("max-logprobs", -1),), (("max-logprobs", -5),)),
    "tokenizer-mode": ((("tokenizer-mode", "auto"),), (("tokenizer-mode", "slow"),),
                       (("tokenizer-mode", "hf"),), (("tokenizer-mode", "fast"),)),
    "served-model-name": ((("served-model-name", "qwen"),), (("served-model-name", ["a", "b"]),)),
    "load-format": ((("load-format", "safetensors"),), (("load-format", "dummy"),),
                    (("load-format", "ckpt"),)),
    "disable-sliding-window": ((("disable-sliding-window", True),),),
    "lora": ((("enable-lora", True),),
             (("enable-lora", True), ("max-lora-rank", 64), ("max-loras", 4)),
             (("enable-lora", True), ("max-lora-rank", 24)),
             (("enable-lora", True), ("max-loras", 0)),
             (("enable-lora", True), ("max-loras", 4), ("max-cpu-loras", 2)),
             (("max-lora-rank", 24),)),
    "parallel": ((("tensor-parallel-size", 2),), (("tensor-parallel-size", 4),),
                 (("pipeline-parallel-size", 2),), (("pipeline-parallel-size", 4), ("tensor-parallel-size", 2)),
                 (("data-parallel-size", 2),), (("data-parallel-size", 2), ("tensor-parallel-size", 4)),
                 (("data-parallel-size", 4), ("tensor-parallel-size", 4))),
    "limit-mm-per-prompt": ((("limit-mm-per-prompt", '{"image": 0}'),),),
    "generation-config": ((("generation-config", "vllm"),), (("generation-config", "auto"),),
                          (("override-generation-config", '{"temperature": 0.6}'),)),
    "long-prefill-token-threshold": ((("long-prefill-token-threshold", 1024),),
                                     (("long-prefill-token-threshold", 65536),)),
    "scheduling-policy": ((("scheduling-policy", "priority"),), (("scheduling-policy", "fcfs"),)),
    "structured-outputs": ((("guided-decoding-backend", "xgrammar"),),
                           (("guided-decoding-backend", "outlines"),),
                           (("structured-outputs-config", '{"backend": "xgrammar"}'),),
                           (("structured-outputs-config", '{"backend": "outlines", "disable_any_whitespace": true}'),)),
    "partial-prefills": ((("max-num-partial-prefills", 2),),
                         (("max-num-partial-prefills", 2), ("max-long-partial-prefills", 3))),
    "async-scheduling": ((("async-scheduling", True),),),
    "cpu-offload-gb": ((("cpu-offload-gb", 2),), (("cpu-offload-gb", -2),)),
    "enable-expert-parallel": ((("enable-expert-parallel", True),),),
    "enforce-eager": ((("enforce-eager", True),),),
}


USER_SEED = 20261203
USER_COUNT = 80
USER_MODELS = SERVE_MODELS + ("Qwen2.5-7B-Instruct-AWQ",)
USER_SETTINGS = {
    "quantization": ((("quantization", "fp8"),), (("quantization", "awq"),),
                     (("quantization", "gptq"),), (("quantization", "awq_marlin"),),
                     (("quantization", "bitsandbytes"),), (("quantization", "fp8"), ("dtype", "half")),
                     (("quantization", "int8"),)),
    "kv-cache-dtype": ((("kv-cache-dtype", "fp8"),), (("kv-cache-dtype", "fp8_e5m2"),),
                       (("kv-cache-dtype", "fp8_e4m3"), ("calculate-kv-scales", True)),
                       (("kv-cache-dtype", "auto"),), (("kv-cache-dtype", "fp8_inc"),),
                       (("kv-cache-dtype", "bfloat16"),)),
    "max-model-len": ((("max-model-len", 8192),), (("max-model-len", 32768),),
                      (("max-model-len", 131072),), (("max-model-len", "64k"),),
                      (("max-model-len", 200000),), (("max-model-len", -1),)),
    "parallel": ((("tensor-parallel-size", 2),), (("tensor-parallel-size", 4),),
                 (("tensor-parallel-size", 8),), (("tensor-parallel-size", 3),),
                 (("tensor-parallel-size", 6),), (("pipeline-parallel-size", 3),),
                 (("pipeline-parallel-size", 2), ("tensor-parallel-size", 4)),
                 (("pipeline-parallel-size", 8),),
                 (("tensor-parallel-size", 2), ("distributed-executor-backend", "mp")),
                 (("tensor-parallel-size", 2), ("distributed-executor-backend", "ray"))),
    "speculative": ((("speculative-config",
                      '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'),),
                    (("speculative-config",
                      '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 5, '
                      '"prompt_lookup_max": 2}'),),
                    (("speculative-config", '{"model": "[ngram]", "num_speculative_tokens": 5, '
                                            '"prompt_lookup_max": 3}'),),
                    (("speculative-config", '{"method": "ngram", "num_speculative_tokens": 0, '
                                            '"prompt_lookup_max": 3}'),),
                    (("speculative-config", '{"method": "eagle", "num_speculative_tokens": 3}'),),
                    (("speculative-config", '{"method": "ngram", "prompt_lookup_max": 4}'),),
                    (("speculative-config", '{"num_speculative_tokens": 2}'),)),
    "chunked-prefill": ((("enable-chunked-prefill", True), ("max-num-batched-tokens", 2048)),
                        (("enable-chunked-prefill", False), ("max-num-batched-tokens", 4096)),
                        (("enable-chunked-prefill", False), ("max-num-batched-tokens", 65536)),
                        (("max-num-batched-tokens", 16384), ("max-num-seqs", 128)),
                        (("max-num-batched-tokens", 512), ("max-num-seqs", 1024)),
                        (("enable-chunked-prefill", True),)),
    "enforce-eager": ((("enforce-eager", True),), (("enforce-eager", False),)),
    "cuda-graphs": ((("cuda-graph-sizes", [1, 2, 4, 8, 16]),), (("cuda-graph-sizes", [256]),),
                    (("max-seq-len-to-capture", 8192),),
                    (("compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8]}'),),
                    (("compilation-config", '{"full_cuda_graph": true}'),)),
    "prefix-caching": ((("enable-prefix-caching", True),), (("enable-prefix-caching", False),),
                       (("enable-prefix-caching", True), ("prefix-caching-hash-algo", "sha256")),
                       (("prefix-caching-hash-algo", "md5"),)),
    "lora": ((("enable-lora", True), ("max-lora-rank", 16)),
             (("enable-lora", True), ("max-lora-rank", 128), ("max-loras", 2)),
             (("enable-lora", True), ("max-lora-rank", 512)),
             (("enable-lora", True), ("fully-sharded-loras", True)),
             (("enable-lora", True), ("lora-dtype", "bfloat16")),
             (("enable-lora", True), ("max-loras", 8), ("max-cpu-loras", 4)),
             (("enable-lora", True), ("lora-modules", "sql=/tmp/sql-lora"))),
    "structured-outputs": ((("guided-decoding-backend", "xgrammar"),),
                           (("guided-decoding-backend", "guidance"),),
                           (("guided-decoding-backend", "lm-format-enforcer"),),
                           (("guided-decoding-backend", "auto"),),
                           (("structured-outputs-config", '{"backend": "guidance"}'),),
                           (("structured-outputs-config", '{"backend": "bogus"}'),)),
    "tools": ((("enable-auto-tool-choice", True), ("tool-call-parser", "hermes")),
              (("enable-auto-tool-choice", True), ("tool-call-parser", "llama3_json")),
              (("enable-auto-tool-choice", True), ("tool-call-parser", "qwen3_coder")),
              (("enable-auto-tool-choice", True), ("tool-call-parser", "pythonic")),
              (("enable-auto-tool-choice", True),),
              (("tool-call-parser", "mistral"),),
              (("enable-auto-tool-choice", True), ("tool-call-parser", "bogus"))),
    "reasoning": ((("reasoning-parser", "deepseek_r1"),), (("reasoning-parser", "qwen3"),),
                  (("enable-reasoning", True), ("reasoning-parser", "deepseek_r1")),
                  (("reasoning-parser", "nope"),)),
    "served-model-name": ((("served-model-name", "my-model"),),
                          (("served-model-name", ["chat", "chat-v2"]),)),
    "memory": ((("gpu-memory-utilization", 0.92),), (("gpu-memory-utilization", 0.7),
                                                     ("swap-space", 8)),
               (("gpu-memory-utilization", 1.1),), (("kv-cache-memory", 8000000000),)),
    "frontend": ((("port", 8000), ("host", "0.0.0.0")), (("api-key", "sk-test"),),
                 (("disable-log-requests", True),), (("uvicorn-log-level", "warning"),),
                 (("trust-remote-code", True),), (("max-num-seqs", 64),)),
}
USER_ENV = {
    "VLLM_USE_V1": ("0", "1"),
    "VLLM_ATTENTION_BACKEND": ("FLASH_ATTN", "XFORMERS", "FLASHINFER", "TRITON_ATTN",
                               "FLEX_ATTENTION", "TORCH_SDPA"),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": ("1",),
}

PLAUSIBLE_SEED = 20261204
PLAUSIBLE_COUNT = 80
PLAUSIBLE_RISK = 0.2
# bundle name -> (alternatives every release accepts on a fitting model, risky alternatives)
PLAUSIBLE_SETTINGS = {
    "quantization": (((("quantization", "fp8"),),),
                     ((("quantization", "awq"),), (("quantization", "gptq"),),
                      (("quantization", "awq_marlin"),), (("quantization", "fp8"), ("dtype", "float32")),
                      (("quantization", "bitsandbytes"),))),
    "kv-cache-dtype": (((("kv-cache-dtype", "fp8"),), (("kv-cache-dtype", "auto"),),
                        (("kv-cache-dtype", "fp8_e4m3"),)),
                       ((("kv-cache-dtype", "fp8_e5m2"),), (("kv-cache-dtype", "fp8"), ("block-size", 32)))),
    "max-model-len": (((("max-model-len", 4096),), (("max-model-len", 8192),),
                       (("max-model-len", 16384),), (("max-model-len", "8k"),)),
                      ((("max-model-len", 32768),), (("max-model-len", 65536),),
                       (("max-model-len", 131072),), (("max-model-len", "128K"),))),
    "parallel": (((("tensor-parallel-size", 2),), (("tensor-parallel-size", 4),),
                  (("tensor-parallel-size", 8),), (("pipeline-parallel-size", 2),),
                  (("pipeline-parallel-size", 2), ("tensor-parallel-size", 2)),
                  (("tensor-parallel-size", 2), ("distributed-executor-backend", "mp"))),
                 ((("tensor-parallel-size", 3),), (("tensor-parallel-size", 6),),
                  (("pipeline-parallel-size", 3),), (("pipeline-parallel-size", 5),),
                  (("data-parallel-size", 2), ("tensor-parallel-size", 2)),
                  (("tensor-parallel-size", 16),))),
    "speculative": (((("speculative-config", '{"method": "ngram", "num_speculative_tokens": 4, '
                                             '"prompt_lookup_max": 4}'),),
                     (("speculative-config", '{"method": "ngram", "num_speculative_tokens": 2, '
                                             '"prompt_lookup_min": 2, "prompt_lookup_max": 5}'),)),
                    ((("speculative-config", '{"method": "ngram", "num_speculative_tokens": 4}'),),
                     (("speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, '
                                             '"prompt_lookup_min": 6, "prompt_lookup_max": 3}'),),
                     (("speculative-config", '{"method": "ngram", "num_speculative_tokens": 4, '
                                             '"prompt_lookup_max": 4, "draft_tensor_parallel_size": 2}'),),
                     (("speculative-config", '{"method": "ngram", "num_speculative_tokens": -1, '
                                             '"prompt_lookup_max": 4}'),))),
    "batch": (((("max-num-batched-tokens", 8192),), (("max-num-batched-tokens", 16384),
                                                     ("max-num-seqs", 256)),
               (("enable-chunked-prefill", True), ("max-num-batched-tokens", 4096)),
               (("max-num-seqs", 128),), (("max-num-seqs", 32), ("max-num-batched-tokens", 2048))),
              ((("enable-chunked-prefill", False), ("max-num-batched-tokens", 4096)),
               (("enable-chunked-prefill", False),),
               (("max-num-batched-tokens", 256), ("max-num-seqs", 512)),
               (("max-num-batched-tokens", 1024),))),
    "enforce-eager": (((("enforce-eager", True),),), ()),
    "cuda-graphs": (((("compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8]}'),),),
                    ((("compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]}'),),
                     (("compilation-config", '{"level": 0}'),),
                     (("compilation-config", '3'),))),
    "prefix-caching": (((("enable-prefix-caching", True),), (("enable-prefix-caching", False),)),
                       ((("enable-prefix-caching", True), ("prefix-caching-hash-algo", "sha256")),)),
    "lora": (((("enable-lora", True),), (("enable-lora", True), ("max-lora-rank", 32)),
              (("enable-lora", True), ("max-lora-rank", 64), ("max-loras", 4)),
              (("enable-lora", True), ("max-loras", 2), ("max-cpu-loras", 4))),
             ((("enable-lora", True), ("max-lora-rank", 48)),
              (("enable-lora", True), ("max-lora-rank", 256)),
              (("enable-lora", True), ("max-loras", 4), ("max-cpu-loras", 2)),
              (("enable-lora", True), ("fully-sharded-loras", True)),
              (("enable-lora", True), ("lora-dtype", "float16")))),
    "tools": (((("enable-auto-tool-choice", True), ("tool-call-parser", "hermes")),
               (("enable-auto-tool-choice", True), ("tool-call-parser", "llama3_json")),
               (("enable-auto-tool-choice", True), ("tool-call-parser", "mistral"))),
              ((("enable-auto-tool-choice", True), ("tool-call-parser", "qwen3_coder")),
               (("enable-auto-tool-choice", True),),
               (("tool-call-parser", "hermes"),),
               (("enable-auto-tool-choice", True), ("tool-call-parser", "llama4_pythonic")))),
    "reasoning": (((("reasoning-parser", "deepseek_r1"),),),
                  ((("reasoning-parser", "qwen3"),), (("reasoning-parser", "granite"),),
                   (("reasoning-parser", "gpt_oss"),))),
    "served-model-name": (((("served-model-name", "my-model"),),
                           (("served-model-name", ["chat", "chat-v2"]),)), ()),
    "memory": (((("gpu-memory-utilization", 0.9),), (("gpu-memory-utilization", 0.8),),
                (("gpu-memory-utilization", 0.95),)),
               ((("gpu-memory-utilization", 0.05),), (("gpu-memory-utilization", 1),),
                (("cpu-offload-gb", 4),))),
    "frontend": (((("port", 8000), ("host", "0.0.0.0")), (("api-key", "sk-test"),),
                  (("uvicorn-log-level", "warning"),), (("trust-remote-code", True),),
                  (("max-log-len", 100),), (("seed", 42),), (("dtype", "bfloat16"),),
                  (("dtype", "half"),), (("generation-config", "vllm"),),
                  (("disable-log-stats", True),)),
                 ((("disable-log-requests", True),), (("dtype", "float32"),),
                  (("enable-log-requests", True),), (("uvicorn-log-level", "trace"),))),
}
PLAUSIBLE_ENV = {
    "VLLM_USE_V1": ("1", "0"),
    "VLLM_ATTENTION_BACKEND": ("FLASH_ATTN", "FLASHINFER", "XFORMERS", "TRITON_ATTN"),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": ("1",),
}

TAIL_SEED = 20261205
TAIL_COUNT = 80
TAIL_SETTINGS = {
    "hf-overrides": ('{"max_position_embeddings": 65536}', '{"rope_scaling": {"rope_type": "yarn", '
                     '"factor": 4.0, "original_max_position_embeddings": 32768}}',
                     '{"num_attention_heads": 30}'),
    "rope-scaling": ('{"rope_type": "dynamic", "factor": 2.0}', '{"type": "linear", "factor": 4.0}'),
    "rope-theta": (1000000, 500000.0),
    "max-model-len": (8192, 65536, 131072),
    "task": ("generate", "embed", "auto", "classify"),
    "runner": ("generate", "pooling", "auto"),
    "override-pooler-config": ('{"pooling_type": "MEAN"}',),
    "preemption-mode": ("recompute", "swap", "bogus"),
    "scheduler-delay-factor": (0.0, 0.5, -1),
    "num-gpu-blocks-override": (512, 0),
    "num-lookahead-slots": (0, 4),
    "use-v2-block-manager": (True,),
    "disable-async-output-proc": (True,),
    "disable-custom-all-reduce": (True,),
    "enable-sleep-mode": (True,),
    "device": ("cuda", "auto", "cpu"),
    "max-parallel-loading-workers": (2, 0),
    "tokenizer-pool-size": (0, 2),
    "max-seq-len-to-capture": (8192, 32768),
    "long-prefill-token-threshold": (0, 2048),
    "max-num-partial-prefills": (1, 4),
    "speculative-model": ("[ngram]",),
    "num-speculative-tokens": (3,),
    "ngram-prompt-lookup-max": (4,),
    "guided-decoding-backend": ("xgrammar:disable-any-whitespace", "outlines", "xgrammar"),
    "enable-prompt-adapter": (True,),
    "mm-processor-kwargs": ('{"num_crops": 4}',),
    "limit-mm-per-prompt": ('{"image": 2}', "image=2"),
    "worker-use-ray": (True,),
    "kv-transfer-config": ('{"kv_connector": "SharedStorageConnector", "kv_role": "kv_both"}',),
    "block-size": (8, 16, 32, 1, 48),
    "max-num-seqs": (8, 256, 2048),
    "max-num-batched-tokens": (1024, 8192, 131072),
    "otlp-traces-endpoint": ("http://localhost:4317",),
    "response-role": ("assistant",),
    "return-tokens-as-token-ids": (True,),
    "enable-prompt-tokens-details": (True,),
    "max-logprobs": (20, 0),
    "logits-processor-pattern": ("foo.*",),
    "model-impl": ("auto", "vllm", "transformers", "bogus"),
    "code-revision": ("main",),
    "revision": ("main",),
    "load-format": ("auto", "safetensors", "dummy", "pt", "npcache", "gguf"),
    "config-format": ("auto", "hf", "mistral"),
    "enable-chunked-prefill": (True, False),
    "enable-prefix-caching": (True, False),
    "enforce-eager": (True,),
    "tensor-parallel-size": (2, 4),
    "data-parallel-size": (2,),
    "kv-cache-dtype": ("fp8", "auto"),
    "swap-space": (0, 16),
    "cpu-offload-gb": (0, 8),
    "disable-log-stats": (True,),
    "disable-frontend-multiprocessing": (True,),
    "enable-server-load-tracking": (True,),
    "max-lora-rank": (8,),
    "long-lora-scaling-factors": ("4.0",),
    "ignore-patterns": ("original/**",),
    "pt-load-map-location": ("cpu",),
    "reasoning-parser": ("deepseek_r1",),
    "seed": (0,),
}

SPELLING_SEED = 20261206
SPELLING_COUNT = 80
# command-line token groups, each one way a launch script writes a setting
SPELLING_ARGS = (
    ("-tp", "2"), ("-tp", "4"), ("-pp", "2"), ("-q", "fp8"), ("-q", "awq"), ("-O3",), ("-O", "0"),
    ("--enable-chunked-prefill=false",), ("--enable-chunked-prefill=False",),
    ("--max-model-len=32k",), ("--max-model-len=16384",), ("--max-model-len", "1M"),
    ("--tokenizer-mode", "mistral"), ("--load-format", "mistral"), ("--tokenizer-mode", "custom"),
    ("--tokenizer", "{model}"), ("--tokenizer", "/nonexistent/tokenizer"),
    ("--hf-config-path", "{model}"), ("--chat-template", "/nonexistent/template.jinja"),
    ("--chat-template", "{% for m in messages %}{{ m.content }}{% endfor %}"),
    ("--served-model-name", "a", "b"), ("--lora-modules", "sql={model}"),
    ("--enable-lora", "--lora-modules", "sql={model}"),
    ("--speculative-config", '{"model": "{model}", "num_speculative_tokens": 3}'),
    ("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3}',
     "--async-scheduling"),
    ("--enable-eplb",), ("--enable-expert-parallel", "--enable-eplb"),
    ("--max-num-partial-prefills", "2", "--no-enable-chunked-prefill"),
    ("--structured-outputs-config.backend", "xgrammar"), ("--compilation-config.level", "3"),
    ("-O.cudagraph_mode", "FULL"), ("-O.cudagraph_mode", "PIECEWISE"),
    ("--compilation-config", '{"cudagraph_mode": "FULL_AND_PIECEWISE"}'),
    ("--attention-backend", "FLASH_ATTN"), ("--attention-backend", "FLASHINFER"),
    ("--generation-config", "/nonexistent/folder"), ("--override-generation-config", "{temperature: 1}"),
    ("--seed", "-1"), ("--max-logprobs", "-1"), ("--distributed-executor-backend", "uni", "-tp", "2"),
    ("--distributed-executor-backend", "external_launcher"), ("--data-parallel-size", "2",
                                                              "--data-parallel-size-local", "1"),
    ("--limit-mm-per-prompt", '{"image": 1}'), ("--mm-processor-kwargs", '{"max_pixels": 1000}'),
    ("--kv-cache-dtype", "fp8", "--calculate-kv-scales"), ("--dtype", "float16", "-q", "awq"),
    ("--enable-prefix-caching", "--prefix-caching-hash-algo", "sha256_cbor"),
    ("--prefix-caching-hash-algo", "sha256_cbor_64bit"), ("--max-num-seqs", "1"),
    ("--max-num-seqs", "2048", "--max-num-batched-tokens", "2048"), ("--block-size", "128"),
    ("--block-size", "64", "--kv-cache-dtype", "fp8"), ("--gpu-memory-utilization", ".9"),
    ("--gpu-memory-utilization", "90"), ("--swap-space", "0"), ("--trust-remote-code",),
    ("--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--reasoning-parser", "qwen3"),
    ("--tool-call-parser", "openai"), ("--reasoning-parser", "deepseek_v3"),
    ("--enforce-eager", "--compilation-config", '{"cudagraph_capture_sizes": [1, 2]}'),
    ("--max-seq-len-to-capture", "4096", "--enforce-eager"), ("--enable-sleep-mode",),
    ("--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'),
    ("--disable-log-requests",), ("--enable-log-requests",), ("--no-enable-log-requests",),
    ("--uvicorn-log-level", "debug"), ("--port", "8080"), ("--host", "::"),
    ("--api-key", "k1", "--api-key", "k2"), ("--max-model-len", "auto"), ("--max-model-len", "-1"),
)


def _yaml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value)
    if isinstance(value, str) and value.startswith("{"):
        return "'" + value + "'"
    return str(value)


def _cli_tokens(option: str, value) -> List[str]:
    if isinstance(value, bool):
        return [f"--{option}"] if value else [f"--no-{option}"]
    if isinstance(value, list):
        return [f"--{option}"] + [str(v) for v in value]
    return [f"--{option}", str(value)]


def _case(rng: random.Random, number: int) -> Case:
    chosen = rng.sample(sorted(SETTINGS), rng.randint(2, 5))
    yaml_lines: List[str] = []
    args: List[str] = []
    for option in chosen:
        value = rng.choice(SETTINGS[option])
        place = rng.random()
        if place < 0.55:
            key = option if rng.random() < 0.6 else option.replace("-", "_")
            yaml_lines.append(f"{key}: {_yaml_value(value)}")
        else:
            args += _cli_tokens(option, value)
    env: List[Tuple[str, str]] = []
    if rng.random() < 0.35:
        name = rng.choice(sorted(ENV))
        env.append((name, rng.choice(ENV[name])))
    return Case(
        id=f"gen/{number:03d}", model=rng.choice(MODELS),
        gpu=rng.choice(EARLY_GPUS), gpus=rng.choice(GPU_COUNTS),
        config=_config_text(yaml_lines),
        args=tuple(args), env=tuple(env), about="seeded combination", origin="generate.py")


def _serve_case(rng: random.Random, number: int) -> Case:
    yaml_lines: List[str] = []
    args: List[str] = []
    for bundle in rng.sample(sorted(SERVE_SETTINGS), rng.randint(2, 5)):
        in_yaml = rng.random() < 0.6
        for option, value in rng.choice(SERVE_SETTINGS[bundle]):
            if in_yaml:
                yaml_lines.append(f"{option}: {_yaml_value(value)}")
            else:
                args += _cli_tokens(option, value)
    return Case(
        id=f"gen/serve-{number:03d}", model=rng.choice(SERVE_MODELS),
        gpu=rng.choice(EARLY_GPUS), gpus=rng.choice(GPU_COUNTS),
        config=_config_text(yaml_lines),
        args=tuple(args), about="seeded combination of serve flags", origin="generate.py")


def _config_text(yaml_lines: List[str]) -> Optional[str]:
    """The `--config` file of a draw's YAML lines, None when every setting went to the command line."""
    return "".join(line + "\n" for line in yaml_lines) if yaml_lines else None


def _env_draw(rng: random.Random, table: Dict[str, Sequence[str]], chance: float) -> List[Tuple[str, str]]:
    """Set each variable of `table`, in name order, with probability `chance`, to one of its values."""
    return [(name, rng.choice(table[name])) for name in sorted(table) if rng.random() < chance]


def _user_case(rng: random.Random, number: int) -> Case:
    yaml_lines: List[str] = []
    args: List[str] = []
    for bundle in rng.sample(sorted(USER_SETTINGS), rng.randint(2, 6)):
        in_yaml = rng.random() < 0.6
        for option, value in rng.choice(USER_SETTINGS[bundle]):
            if in_yaml:
                key = option if rng.random() < 0.75 else option.replace("-", "_")
                yaml_lines.append(f"{key}: {_yaml_value(value)}")
            else:
                args += _cli_tokens(option, value)
    env = _env_draw(rng, USER_ENV, 0.2)
    return Case(
        id=f"gen/user-{number:03d}", model=rng.choice(USER_MODELS),
        gpu=rng.choice(EARLY_GPUS), gpus=rng.choice(GPU_COUNTS),
        config=_config_text(yaml_lines),
        args=tuple(args), env=tuple(env), about="seeded combination of user serve settings",
        origin="generate.py")


def _plausible_case(rng: random.Random, number: int) -> Case:
    yaml_lines: List[str] = []
    args: List[str] = []
    world = 1
    for bundle in rng.sample(sorted(PLAUSIBLE_SETTINGS), rng.randint(2, 5)):
        fine, risky = PLAUSIBLE_SETTINGS[bundle]
        in_yaml = rng.random() < 0.7
        choice = rng.choice(risky if risky and rng.random() < PLAUSIBLE_RISK else fine)
        for option, value in choice:
            if option in ("tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size"):
                world *= value
            if in_yaml:
                key = option if rng.random() < 0.8 else option.replace("-", "_")
                yaml_lines.append(f"{key}: {_yaml_value(value)}")
            else:
                args += _cli_tokens(option, value)
    env = _env_draw(rng, PLAUSIBLE_ENV, 0.15)
    fitting = [count for count in GPU_COUNTS if count >= world] or [max(GPU_COUNTS)]
    gpus = rng.choice(GPU_COUNTS) if rng.random() < 0.1 else rng.choice(fitting)
    return Case(
        id=f"gen/plausible-{number:03d}", model=rng.choice(USER_MODELS),
        gpu=rng.choice(EARLY_GPUS), gpus=gpus,
        config=_config_text(yaml_lines),
        args=tuple(args), env=tuple(env), about="seeded plausible serve settings",
        origin="generate.py")


def _tail_case(rng: random.Random, number: int) -> Case:
    yaml_lines: List[str] = []
    args: List[str] = []
    for option in rng.sample(sorted(TAIL_SETTINGS), rng.randint(1, 4)):
        value = rng.choice(TAIL_SETTINGS[option])
        if rng.random() < 0.65:
            key = option if rng.random() < 0.8 else option.replace("-", "_")
            yaml_lines.append(f"{key}: {_yaml_value(value)}")
        else:
            args += _cli_tokens(option, value)
    env = _env_draw(rng, PLAUSIBLE_ENV, 0.12)
    return Case(
        id=f"gen/tail-{number:03d}", model=rng.choice(USER_MODELS),
        gpu=rng.choice(EARLY_GPUS), gpus=rng.choice((2, 4, 8)),
        config=_config_text(yaml_lines),
        args=tuple(args), env=tuple(env), about="seeded long-tail serve flags",
        origin="generate.py")


def _spelling_case(rng: random.Random, number: int) -> Case:
    yaml_lines: List[str] = []
    for bundle in rng.sample(sorted(PLAUSIBLE_SETTINGS), rng.randint(0, 2)):
        for option, value in rng.choice(PLAUSIBLE_SETTINGS[bundle][0]):
            yaml_lines.append(f"{option}: {_yaml_value(value)}")
    args: List[str] = []
    for tokens in rng.sample(SPELLING_ARGS, rng.randint(1, 3)):
        args += tokens
    env = _env_draw(rng, PLAUSIBLE_ENV, 0.12)
    return Case(
        id=f"gen/spelling-{number:03d}", model=rng.choice(USER_MODELS),
        gpu=rng.choice(EARLY_GPUS), gpus=rng.choice((2, 4, 8)),
        config=_config_text(yaml_lines),
        args=tuple(args), env=tuple(env), about="seeded launch-script spellings",
        origin="generate.py")


DEPLOY_SEED = 20261207
DEPLOY_COUNT = 110
# the cards serve files are written for, weighted toward the older and smaller ones
DEPLOY_GPUS = ("t4", "t4", "v100", "a10", "a10", "l4", "l4", "l40s", "a100-40g", "a100-80g",
               "a100-80g", "h100-80g", "h100-80g", "h200")
# model -> what its deployments set: tensor-parallel sizes that fit its heads (and some that do
# not), lengths within its derived maximum (and above it), its tool and reasoning parsers, the
# quantization its checkpoint carries (or online methods people try), whether it has experts
# or takes images
DEPLOY_MODELS = {
    "Qwen2.5-7B-Instruct": dict(tp=(1, 2, 4), bad_tp=(8, 3), lens=(8192, 16384, 32768),
                                long=(65536, 131072), tools=("hermes",), think=(),
                                quant=("fp8",), moe=False, mm=False),
    "Qwen2.5-7B-Instruct-YaRN": dict(tp=(1, 2, 4), bad_tp=(8,), lens=(32768, 65536, 131072),
                                     long=(262144,), tools=("hermes",), think=(), quant=(),
                                     moe=False, mm=False),
    "Qwen2.5-7B-Instruct-AWQ": dict(tp=(1, 2), bad_tp=(8,), lens=(8192, 32768), long=(65536,),
                                    tools=("hermes",), think=(), quant=("awq", "awq_marlin"),
                                    moe=False, mm=False),
    "Qwen2.5-7B-Instruct-GPTQ-Int4": dict(tp=(1, 2), bad_tp=(8,), lens=(8192, 32768),
                                          long=(65536,), tools=("hermes",), think=(),
                                          quant=("gptq", "gptq_marlin"), moe=False, mm=False),
    "Qwen2.5-32B-Instruct": dict(tp=(2, 4, 8), bad_tp=(3, 6), lens=(16384, 32768),
                                 long=(131072,), tools=("hermes",), think=(), quant=("fp8",),
                                 moe=False, mm=False),
    "Qwen3-8B": dict(tp=(1, 2, 4, 8), bad_tp=(3,), lens=(8192, 32768, 40960), long=(131072,),
                     tools=("hermes",), think=("qwen3", "deepseek_r1"), quant=("fp8",),
                     moe=False, mm=False),
    "Qwen3-8B-FP8": dict(tp=(1, 2, 4), bad_tp=(6,), lens=(16384, 32768), long=(65536,),
                         tools=("hermes",), think=("qwen3",), quant=("fp8",), moe=False,
                         mm=False),
    "Qwen3-30B-A3B": dict(tp=(1, 2, 4, 8), bad_tp=(3,), lens=(16384, 32768, 40960),
                          long=(131072,), tools=("hermes", "qwen3_coder"), think=("qwen3",),
                          quant=("fp8",), moe=True, mm=False),
    "Llama-3.1-8B-Instruct": dict(tp=(1, 2, 4, 8), bad_tp=(3, 6), lens=(8192, 32768, 131072),
                                  long=(200000,), tools=("llama3_json",), think=(),
                                  quant=("fp8", "bitsandbytes"), moe=False, mm=False),
    "Llama-3.1-70B-Instruct": dict(tp=(4, 8), bad_tp=(3, 5), lens=(8192, 32768, 65536),
                                   long=(262144,), tools=("llama3_json",), think=(),
                                   quant=("fp8",), moe=False, mm=False),
    "Mixtral-8x7B-Instruct-v0.1": dict(tp=(2, 4, 8), bad_tp=(3, 6), lens=(8192, 32768),
                                       long=(65536,), tools=("mistral",), think=(),
                                       quant=("fp8",), moe=True, mm=False),
    "Moonlight-16B-A3B-Instruct": dict(tp=(1, 2, 4, 8), bad_tp=(3, 6), lens=(4096, 8192),
                                       long=(32768,), tools=(), think=("deepseek_r1",),
                                       quant=("fp8",), moe=True, mm=False),
    "gemma-2-9b-it": dict(tp=(1, 2, 4, 8), bad_tp=(3,), lens=(4096, 8192), long=(16384,),
                          tools=(), think=(), quant=("fp8",), moe=False, mm=False),
    "gpt-oss-20b": dict(tp=(1, 2, 4), bad_tp=(3, 5), lens=(32768, 131072), long=(200000,),
                        tools=("openai",), think=("openai_gptoss",), quant=("mxfp4",), moe=True,
                        mm=False),
    "Mistral-7B-v0.1": dict(tp=(1, 2, 4, 8), bad_tp=(3,), lens=(8192, 32768), long=(65536,),
                            tools=("mistral",), think=(), quant=("fp8",), moe=False, mm=False),
    "Qwen2-VL-7B-Instruct": dict(tp=(1, 2, 4), bad_tp=(8,), lens=(8192, 32768), long=(65536,),
                                 tools=("hermes",), think=(), quant=(), moe=False, mm=True),
}
# bundle name -> (plain alternatives, risky alternatives); a string value "{model}" is the
# model folder, and the parallel, length, parser and quantization bundles come from the model
DEPLOY_SETTINGS = {
    "memory": (((("gpu-memory-utilization", 0.9),), (("gpu-memory-utilization", 0.85),),
                (("gpu-memory-utilization", 0.92),), (("gpu-memory-utilization", 0.95),)),
               ((("gpu-memory-utilization", 0.98), ("swap-space", 16)),
                (("cpu-offload-gb", 8),), (("swap-space", 64),), (("kv-cache-memory", 4000000000),))),
    "batch": (((("max-num-seqs", 256),), (("max-num-seqs", 128), ("max-num-batched-tokens", 8192)),
               (("max-num-seqs", 64),), (("enable-chunked-prefill", True),
                                         ("max-num-batched-tokens", 4096)),
               (("max-num-seqs", 512), ("max-num-batched-tokens", 16384))),
              ((("max-num-seqs", 1024),), (("enable-chunked-prefill", False),),
               (("max-num-seqs", 2048), ("max-num-batched-tokens", 2048)),
               (("max-num-batched-tokens", 1024),))),
    "cache": (((("enable-prefix-caching", True),), (("block-size", 16),),
               (("kv-cache-dtype", "fp8"),), (("kv-cache-dtype", "auto"),),
               (("enable-prefix-caching", True), ("kv-cache-dtype", "fp8_e4m3"))),
              ((("kv-cache-dtype", "fp8_e5m2"),), (("block-size", 32), ("kv-cache-dtype", "fp8")),
               (("block-size", 64),), (("block-size", 128),), (("block-size", 8),),
               (("kv-cache-dtype", "fp8"), ("calculate-kv-scales", True)))),
    "dtype": (((("dtype", "auto"),), (("dtype", "bfloat16"),), (("dtype", "half"),)),
              ((("dtype", "float16"),), (("dtype", "float32"),))),
    "graphs": (((("enforce-eager", True),), (("enforce-eager", False),)),
               ((("enforce-eager", True), ("compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8]}')),
                (("max-seq-len-to-capture", 8192),),
                (("compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 32, 64]}'),
                 ("max-num-seqs", 32)))),
    "served": (((("served-model-name", "{name}"),), (("served-model-name", ["{name}", "default"]),)),
               ()),
    "generation": (((("generation-config", "auto"),), (("generation-config", "vllm"),),
                    (("override-generation-config", '{"temperature": 0.7, "top_p": 0.8}'),)),
                   ((("generation-config", "{model}"),
                     ("override-generation-config", '{"max_new_tokens": 2048}')),)),
    "structured": (((("guided-decoding-backend", "xgrammar"),), (("guided-decoding-backend", "auto"),)),
                   ((("guided-decoding-backend", "outlines"),), (("guided-decoding-backend", "guidance"),),
                    (("structured-outputs-config", '{"backend": "xgrammar"}'),))),
    "lora": (((("enable-lora", True), ("max-lora-rank", 16)),
              (("enable-lora", True), ("max-lora-rank", 64), ("max-loras", 4)),
              (("enable-lora", True), ("lora-modules", "adapter={model}"), ("max-lora-rank", 32))),
             ((("enable-lora", True), ("max-lora-rank", 128)),
              (("enable-lora", True), ("max-lora-rank", 96)),
              (("enable-lora", True), ("max-loras", 8), ("max-cpu-loras", 4)),
              (("lora-modules", "adapter={model}"),))),
    "frontend": (((("host", "0.0.0.0"), ("port", 8000)), (("disable-log-stats", True),),
                  (("uvicorn-log-level", "info"),), (("trust-remote-code", True),),
                  (("api-key", "token-abc123"),), (("seed", 0),)),
                 ((("disable-log-requests", True),), (("max-log-len", 200),),
                  (("enable-log-requests", True),))),
}
DEPLOY_ENV = {
    "VLLM_USE_V1": ("1", "1", "0"),
    "VLLM_ATTENTION_BACKEND": ("FLASH_ATTN", "FLASHINFER", "XFORMERS", "TRITON_ATTN"),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": ("1",),
    "VLLM_WORKER_MULTIPROC_METHOD": ("spawn", "fork"),
}


def _gpu_count(rng: random.Random, name: str, counts: Sequence[int]) -> int:
    """Draw a GPU count, one that holds the model's smallest tensor-parallel size in 9 of 10."""
    fitting = [count for count in counts if count >= min(DEPLOY_MODELS[name]["tp"])]
    return rng.choice(counts if rng.random() < 0.1 else fitting)


def _model_bundles(rng: random.Random, name: str, gpus: int, risk: float) -> List[Tuple[str, object]]:
    """Draw the settings that depend on the model: parallelism, length, quantization, parsers."""
    shape = DEPLOY_MODELS[name]
    risky = lambda: rng.random() < risk  # noqa: E731
    chosen: List[Tuple[str, object]] = []
    sizes = [tp for tp in shape["tp"] if tp <= gpus] or [min(shape["tp"])]
    tp = rng.choice(shape["bad_tp"]) if risky() else rng.choice(sizes)
    if tp > 1 or rng.random() < 0.3:
        chosen.append(("tensor-parallel-size", tp))
    if gpus >= 2 * tp and rng.random() < 0.2:
        chosen.append((rng.choice(("pipeline-parallel-size", "data-parallel-size")), 2))
    if shape["moe"] and rng.random() < 0.4:
        chosen.append(("enable-expert-parallel", True))
    if rng.random() < 0.75:
        chosen.append(("max-model-len", rng.choice(shape["long"] if risky() else shape["lens"])))
    if shape["quant"] and rng.random() < 0.35:
        chosen.append(("quantization", rng.choice(shape["quant"])))
    if shape["tools"] and rng.random() < 0.35:
        chosen.append(("enable-auto-tool-choice", True))
        if not risky():
            chosen.append(("tool-call-parser", rng.choice(shape["tools"])))
    if shape["think"] and rng.random() < 0.5:
        if rng.random() < 0.3:
            chosen.append(("enable-reasoning", True))
        chosen.append(("reasoning-parser", rng.choice(shape["think"])))
    if shape["mm"] and rng.random() < 0.7:
        chosen.append(("limit-mm-per-prompt", rng.choice(
            ('{"image": 2, "video": 1}', '{"image": 4}', "image=2,video=1", "image=4"))))
    return chosen


def _deploy_case(rng: random.Random, number: int) -> Case:
    """Draw one serve file (or launch line) as a deployment writes it for a model and GPUs."""
    name = rng.choice(sorted(DEPLOY_MODELS))
    gpu, gpus = rng.choice(DEPLOY_GPUS), _gpu_count(rng, name, (1, 1, 2, 2, 4, 8))
    settings = _model_bundles(rng, name, gpus, PLAUSIBLE_RISK)
    for bundle in rng.sample(sorted(DEPLOY_SETTINGS), rng.randint(2, 6)):
        fine, risky = DEPLOY_SETTINGS[bundle]
        settings += rng.choice(risky if risky and rng.random() < PLAUSIBLE_RISK else fine)
    short = name.split("-Instruct")[0].lower()
    settings = [(option, [v.replace("{name}", short) for v in value] if isinstance(value, list)
                 else value.replace("{name}", short) if isinstance(value, str) else value)
                for option, value in settings]
    env = _env_draw(rng, DEPLOY_ENV, 0.12)
    as_file = rng.random() < 0.7
    names_model = as_file and rng.random() < 0.3
    underscores = as_file and rng.random() < 0.2
    yaml_lines = [f"# {name} on {gpus}x {gpu}"] if as_file and rng.random() < 0.5 else []
    if names_model:
        yaml_lines.append("model: {model}")
    args: List[str] = []
    for option, value in settings:
        if as_file:
            key = option.replace("-", "_") if underscores else option
            yaml_lines.append(f"{key}: {_yaml_value(value)}")
        else:
            args += _cli_tokens(option, value)
    return Case(
        id=f"gen/deploy-{number:03d}", model=name, gpu=gpu, gpus=gpus, model_arg=not names_model,
        config=_config_text(yaml_lines),
        args=tuple(args), env=tuple(env), about="seeded deployment serve file",
        origin="generate.py")


HARDWARE_SEED = 20261208
HARDWARE_COUNT = 70
# settings whose verdict depends on the card: dtypes, quantization methods, KV-cache dtypes,
# block sizes and attention backends, each a few command-line tokens
HARDWARE_ARGS = (
    ("--dtype", "bfloat16"), ("--dtype", "half"), ("--dtype", "auto"), ("--dtype", "float32"),
    ("-q", "fp8"), ("--quantization", "awq"), ("--quantization", "awq_marlin"),
    ("--quantization", "gptq"), ("--quantization", "gptq_marlin"), ("--quantization", "marlin"),
    ("--quantization", "bitsandbytes"), ("--quantization", "mxfp4"), ("--quantization", "fbgemm_fp8"),
    ("--quantization", "compressed-tensors"), ("--quantization", "experts_int8"),
    ("--kv-cache-dtype", "fp8"), ("--kv-cache-dtype", "fp8_e4m3"), ("--kv-cache-dtype", "fp8_e5m2"),
    ("--kv-cache-dtype", "fp8", "--calculate-kv-scales"), ("--block-size", "16"),
    ("--block-size", "32"), ("--block-size", "64"), ("--block-size", "128"), ("--enforce-eager",),
    ("--max-num-seqs", "512"), ("--gpu-memory-utilization", "0.95"), ("--max-model-len", "8192"),
    ("--max-model-len", "32768"), ("--enable-prefix-caching",), ("--no-enable-prefix-caching",),
    ("--enable-chunked-prefill",), ("--cpu-offload-gb", "10"), ("--swap-space", "8"),
)
HARDWARE_ENV = {
    "VLLM_USE_V1": ("0", "1"),
    "VLLM_ATTENTION_BACKEND": ("FLASH_ATTN", "FLASHINFER", "XFORMERS", "TRITON_ATTN",
                               "FLASHMLA", "TORCH_SDPA"),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": ("1",),
    "VLLM_WORKER_MULTIPROC_METHOD": ("spawn",),
}


def _hardware_case(rng: random.Random, number: int) -> Case:
    """Draw a model on a card with one to three settings whose verdict depends on the card."""
    name = rng.choice(sorted(DEPLOY_MODELS))
    gpu, gpus = rng.choice(DEPLOY_GPUS), _gpu_count(rng, name, GPU_COUNTS)
    tp = rng.choice([size for size in DEPLOY_MODELS[name]["tp"] if size <= gpus]
                    or [min(DEPLOY_MODELS[name]["tp"])])
    args = ["--tensor-parallel-size", str(tp)] if tp > 1 else []
    for tokens in rng.sample(HARDWARE_ARGS, rng.randint(1, 3)):
        args += tokens
    return Case(
        id=f"gen/hardware-{number:03d}", model=name, gpu=gpu, gpus=gpus, args=tuple(args),
        env=tuple(_env_draw(rng, HARDWARE_ENV, 0.15)), about="seeded card-dependent settings",
        origin="generate.py")


def cases() -> List[Case]:
    rng = random.Random(SEED)
    first = [_case(rng, number) for number in range(1, COUNT + 1)]
    serve = random.Random(SERVE_SEED)
    user, plausible = random.Random(USER_SEED), random.Random(PLAUSIBLE_SEED)
    tail, spelling = random.Random(TAIL_SEED), random.Random(SPELLING_SEED)
    deploy, hardware = random.Random(DEPLOY_SEED), random.Random(HARDWARE_SEED)
    return (first + [_serve_case(serve, number) for number in range(1, SERVE_COUNT + 1)]
            + [_user_case(user, number) for number in range(1, USER_COUNT + 1)]
            + [_plausible_case(plausible, number) for number in range(1, PLAUSIBLE_COUNT + 1)]
            + [_tail_case(tail, number) for number in range(1, TAIL_COUNT + 1)]
            + [_spelling_case(spelling, number) for number in range(1, SPELLING_COUNT + 1)]
            + [_deploy_case(deploy, number) for number in range(1, DEPLOY_COUNT + 1)]
            + [_hardware_case(hardware, number) for number in range(1, HARDWARE_COUNT + 1)])
