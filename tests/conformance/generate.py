"""Seeded combinations of the settings the lint rules reason about.

Each generated case draws a model, a GPU profile and two to five settings; each setting lands
in the `--config` YAML (dash or underscore spelling) or on the command line, and some cases
set engine environment variables. The seed and the count are fixed, so the corpus (and its
case ids `gen/NNN`) is the same on every machine; change SEED or COUNT only together with a
re-recording.
"""

from __future__ import annotations

import json
import random
from typing import List, Tuple

from conformance.cases import Case, gpu_profiles

SEED = 20261201
COUNT = 160
MODELS = ("Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct", "Llama-2-7b-hf",
          "Llama-3.1-8B-Instruct", "Qwen3-30B-A3B", "Qwen2.5-7B-Instruct-YaRN")
GPU_COUNTS = (1, 2, 4, 8)

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
        gpu=rng.choice(sorted(gpu_profiles())), gpus=rng.choice(GPU_COUNTS),
        config="".join(line + "\n" for line in yaml_lines) if yaml_lines else None,
        args=tuple(args), env=tuple(env), about="seeded combination", origin="generate.py")


def cases() -> List[Case]:
    rng = random.Random(SEED)
    return [_case(rng, number) for number in range(1, COUNT + 1)]
