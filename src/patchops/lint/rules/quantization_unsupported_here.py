"""PO813 quantization-unsupported-here."""

from __future__ import annotations

from typing import Iterator, List, Optional

from patchops.lint.facts.groups import QuantizationLimits
from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs
from patchops.lint.vllm.memory import DTYPE_NAMES

AWQ = {"model_type": "qwen2", "num_attention_heads": 28, "max_position_embeddings": 32768,
       "torch_dtype": "float16", "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}
V100 = "hardware: {gpus: 1, name: Tesla V100-SXM2-32GB, memory_gib: 32, compute_capability: 7.0}\n"
A100 = "hardware: {gpus: 1, name: NVIDIA A100-SXM4-80GB, memory_gib: 80, compute_capability: 8.0}\n"


class QuantizationUnsupportedHere(Rule):
    """
    ## What it does
    Flags a quantization method vLLM cannot run here, checked the way `ModelConfig` and
    `VllmConfig._get_quantization_config` check it, with each method's limits read from the
    copy (`get_min_capability()`, `get_supported_act_dtypes()`):
    `--quantization` naming another method than the checkpoint's `quantization_config`
    (`-q gptq` on an AWQ model); a GPU below the method's minimum compute capability (AWQ on
    a V100, fp8 on a T4 before 0.3x); a `--dtype` the method's kernels do not take (AWQ with
    bfloat16 before 0.3x, any method with float32). Without `--quantization`, vLLM may move
    a checkpoint to a faster variant of its method (awq -> awq_marlin): the check then fails
    only when every variant does. Not judged: a checkpoint whose method an override claims
    whatever `--quantization` says (a gpt-oss MXFP4 checkpoint, 0.3x), and an online method
    (`mxfp4`, `fp8_per_block`, 0.3x) on an unquantized checkpoint, which other classes run.

    ## Why is this bad?
    vLLM refuses to build its config: "Quantization method specified in the model config
    (awq) does not match the quantization method specified in the `quantization` argument
    (gptq).", "The quantization method awq is not supported for the current GPU. Minimum
    capability: 75. Current capability: 70.", "torch.float32 is not supported for quantization
    method awq_marlin. Supported dtypes: [torch.float16, torch.bfloat16]".

    ## Fix
    Drop `--quantization` (the checkpoint says its method), use `--dtype half`, or a GPU
    (or checkpoint) the method supports.
    """

    code = "PO813"
    name = "quantization-unsupported-here"
    severity = "error"
    versions = ">=0.7"
    needs = Needs(model=True, optional=("hardware.compute_capability",))
    VALID = [
        Example("model: org/qwen-awq\n" + A100 + "args:\n  dtype: half\n", model=AWQ),
        Example("model: org/qwen-awq\n" + A100 + "args:\n  quantization: awq_marlin\n", model=AWQ),
        Example("model: org/qwen\n" + A100 + "args:\n  quantization: fp8\n"),
    ]
    INVALID = [
        Example("model: org/qwen-awq\n" + A100 + "args:\n  quantization: gptq\n", model=AWQ, at=(4, 3)),
        Example("model: org/qwen-awq\n" + V100 + "args:\n  dtype: half\n", model=AWQ, at=(1, 1)),
        Example("model: org/qwen-awq\n" + A100 + "args:\n  dtype: float32\n", model=AWQ, at=(4, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        checkpoint = model.quant_method if model is not None else None
        asked = inputs.setting(cfg, "quantization")
        stated = str(asked.value).lower() if asked is not None and isinstance(asked.value, str) else None
        if checkpoint and stated and inputs.quantization_taken_over(cfg, facts):
            return
        if checkpoint and stated and not _related(checkpoint, stated):
            yield self.diagnostic(
                cfg, asked, f"quantization {stated!r} is not the checkpoint's method {checkpoint!r}",
                explanation=f"the checkpoint's method is config.json's quantization_config; vLLM "
                f"{facts.version} refuses the mismatch",
                fields=("quantization",), fix="drop --quantization: the checkpoint names its method",
                vllm_message=f"Quantization method specified in the model config ({checkpoint}) does not "
                f"match the quantization method specified in the `quantization` argument ({stated}).")
            return
        methods = _candidates(checkpoint, stated, facts)
        limits = [facts.quantization_limits.get(m) or QuantizationLimits() for m in methods]
        if not methods:
            return
        cc = inputs.compute_capability(cfg)
        needed = [entry.min_capability for entry in limits]
        if cc is not None and all(n is not None for n in needed) and cc[0] * 10 + cc[1] < min(needed):
            name = methods[needed.index(min(needed))]
            current = cc[0] * 10 + cc[1]
            yield self.diagnostic(
                cfg, asked or (1, 1), f"quantization {name!r} needs compute capability {min(needed)}, the "
                f"GPU has {current}", explanation=f"vLLM {facts.version} refuses to start",
                fields=("quantization", "hardware.compute_capability"),
                fix="use a GPU the method supports, or another checkpoint",
                vllm_message=f"The quantization method {name} is not supported for the current GPU. "
                f"Minimum capability: {min(needed)}. Current capability: {current}.")
            return
        found = inputs.setting(cfg, "dtype")
        dtype = DTYPE_NAMES.get(str(found.value).lower()) if found is not None else None
        allowed = [entry.act_dtypes for entry in limits]
        if dtype and all(a is not None for a in allowed) and all(dtype not in a for a in allowed):
            listed = ", ".join(f"torch.{d}" for d in allowed[0])
            yield self.diagnostic(
                cfg, found, f"dtype {dtype} is not one quantization {methods[0]!r} runs with",
                explanation=f"it runs with {', '.join(allowed[0])}; vLLM {facts.version} refuses to start",
                fields=("dtype", "quantization"), fix=f"use --dtype {allowed[0][0]}",
                vllm_message=f"torch.{dtype} is not supported for quantization method {methods[0]}. "
                f"Supported dtypes: [{listed}]")


def _related(checkpoint: str, stated: str) -> bool:
    """Return whether vLLM takes `stated` for a `checkpoint` of that method (awq -> awq_marlin).

    A variant names the method it runs (awq_marlin, auto_awq, gptq_marlin, gptq_bitblas); the
    Marlin overrides also accept plain `marlin`.
    """
    return stated == checkpoint or checkpoint in stated or stated in checkpoint or stated == "marlin"


def _candidates(checkpoint: Optional[str], stated: Optional[str], facts: Facts) -> List[str]:
    """Return the methods vLLM may run: the stated one, else the checkpoint's and its variants."""
    if stated:
        online = (facts.quantization_limits.get(stated) or QuantizationLimits()).online
        return [] if online and not checkpoint else [stated]
    if not checkpoint:
        return []
    limits = facts.quantization_limits
    return [checkpoint] + sorted(m for m in limits if checkpoint in m and m != checkpoint
                                 and not limits[m].online)    # fp8_per_block: no checkpoint variant
