"""PO604 kv-cache-dtype-mismatch."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, memory, messages
from patchops.lint.vllm.memory import FLOAT_KV_CACHE_DTYPES, KV_CACHE_DTYPE

QWEN_7B = {"model_type": "qwen2", "torch_dtype": "bfloat16", "num_attention_heads": 28}


class KvCacheDtypeMismatch(Rule):
    """
    ## What it does
    Flags `--kv-cache-dtype float16` or `bfloat16` that differs from the dtype the model is
    served in (`--dtype`, or with `auto` the checkpoint's `torch_dtype` from config.json).
    Read from the copy: the check exists where VllmConfig has the guard (0.33); older releases
    do not accept these KV dtypes at all (`invalid-flag-value`).

    ## Why is this bad?
    vLLM refuses to build its config: 'kv_cache_dtype="float16" is incompatible with
    dtype="bfloat16". Please set `--kv-cache-dtype` to `auto` or `bfloat16`.'

    ## Fix
    Use `--kv-cache-dtype auto` (the model's dtype), the model's dtype itself, or change
    `--dtype` to match.
    """

    code = "PO604"
    name = "kv-cache-dtype-mismatch"
    severity = "error"
    versions = ">=0.33"
    needs = Needs(optional=("hardware.compute_capability", "model"))
    vllm_message = messages.KV_CACHE_DTYPE_MISMATCH
    VALID = [
        Example("model: m\nargs:\n  kv-cache-dtype: bfloat16\n", vllm="0.33.0", model=QWEN_7B),
        Example("model: m\nargs:\n  kv-cache-dtype: float16\n  dtype: half\n", vllm="0.33.0"),
        Example("model: m\nargs:\n  kv-cache-dtype: float16\n", vllm="0.33.0"),   # model unknown
    ]
    INVALID = [
        Example("model: m\nargs:\n  kv-cache-dtype: float16\n", vllm="0.33.0", model=QWEN_7B, at=(3, 3)),
        Example("vllm serve m --dtype float16 --kv-cache-dtype bfloat16\n", kind="command",
                vllm="0.33.0", at=(1, 30)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, KV_CACHE_DTYPE)
        if found is None or found.value not in FLOAT_KV_CACHE_DTYPES \
                or facts.guards.float_kv_cache_matches_dtype is None:
            return
        dtype = memory.served_dtype(inputs.value(cfg, "dtype"), cfg.model_facts,
                                    inputs.compute_capability(cfg))
        if dtype is None or dtype == found.value:
            return
        allowed = f"`auto` or `{dtype}`" if dtype in FLOAT_KV_CACHE_DTYPES else "`auto`"
        origin = "--dtype" if inputs.setting(cfg, "dtype") is not None and \
            str(inputs.value(cfg, "dtype")).lower() != "auto" else "the model's config.json"
        yield self.diagnostic(
            cfg, found, f"kv_cache_dtype {found.value!r} differs from the model's served dtype {dtype}",
            explanation=f"the served dtype comes from {origin}; vLLM {facts.version} refuses it while "
            "building its config",
            fields=(KV_CACHE_DTYPE, "dtype"), fix=f"use --kv-cache-dtype auto or {dtype}",
            vllm_message=messages.KV_CACHE_DTYPE_MISMATCH.format(kv=found.value, dtype=dtype, allowed=allowed))
