"""PO818 quantization-kernel-not-installed."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, packages, quantization_claims

GPTQ = "tests/conformance/corpus/models/Qwen2.5-7B-Instruct-GPTQ-Int4"
BITBLAS_FORMAT = GPTQ + "-BitBLAS"   # the same config.json with checkpoint_format: bitblas
V100 = "hardware: {gpus: 1, name: Tesla V100-SXM2-32GB, memory_gib: 32, compute_capability: 7.0}\n"
T4 = "hardware: {gpus: 1, name: Tesla T4, memory_gib: 16, compute_capability: 7.5}\n"
A100 = "hardware: {gpus: 1, name: NVIDIA A100-SXM4-80GB, memory_gib: 80, compute_capability: 8.0}\n"


class QuantizationKernelNotInstalled(Rule):
    """
    ## What it does
    Flags a quantized checkpoint that vLLM will hand, by itself, to a kernel whose package
    is not installed. Without `--quantization`, `_verify_quantization` asks its overrides in
    order which one runs the checkpoint (read from the copy: the `overrides` list, each
    override's format marker or compatibility check, `get_min_capability()`). On vLLM 0.8.5
    a GPTQ checkpoint (4 or 8 bits, symmetric, group size -1/32/64/128) on a GPU below
    compute capability 8.0 (V100, T4) is not Marlin-compatible, so `gptq_bitblas` claims it;
    a checkpoint saved in BitBLAS format (`checkpoint_format: bitblas`) goes to `bitblas`
    on 0.8.5-0.15. Both config classes import `bitblas` in `__init__` and raise without it.
    From 0.9 the GPTQ conversion first tries `import bitblas` itself and, when it is missing,
    leaves the checkpoint to plain GPTQ, so only the BitBLAS-format case remains. Not
    judged: an explicit `--quantization` other than the override's own name (the methods
    each override accepts from the user are not read).

    The rule is an error when the copy was inspected and has no bitblas; with only a release
    (shipped facts), the wheel's Requires-Dist decides: no shipped release requires bitblas, so
    a plain `pip install vllm==X` lacks it (lint the copy itself if you installed it).

    ## Why is this bad?
    vLLM refuses to build its config: "Trying to use the bitblas backend, but could not
    importwith the following error: No module named 'bitblas'. Please install bitblas
    through the following command: `pip install bitblas>=0.1.0`".

    ## Fix
    Pass `--quantization gptq` (vLLM then keeps the plain GPTQ kernel), or install bitblas
    (`pip install bitblas`); a BitBLAS-format checkpoint needs bitblas whatever you pass.
    """

    code = "PO818"
    name = "quantization-kernel-not-installed"
    severity = "error"
    unsure_severity = "info"
    versions = ">=0.8,<0.20"
    needs = Needs(model=True, optional=("hardware.compute_capability", "hardware.platform"))
    vllm_message = messages.QUANTIZATION_KERNEL_NOT_INSTALLED.format(package="bitblas", version="0.1.0")
    VALID = [
        Example(f"model: {GPTQ}\n" + A100),                                  # gptq_marlin claims it first
        Example(f"model: {GPTQ}\n" + V100 + "args:\n  quantization: gptq\n"),
        Example(f"model: {GPTQ}\n" + V100, facts={"has_bitblas": True}),
        Example(f"model: {GPTQ}\n" + V100, vllm="0.10.1.1"),              # the override imports bitblas first
    ]
    INVALID = [
        Example(f"model: {GPTQ}\n" + V100, at=(1, 1)),
        Example(f"model: {GPTQ}\n" + T4 + "args:\n  quantization: gptq_bitblas\n", facts={"has_bitblas": False},
                at=(4, 3)),
        Example(f"model: {BITBLAS_FORMAT}\n" + A100, vllm="0.10.1.1", at=(1, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        method = quantization_claims.claiming_override(cfg, facts)
        entry = facts.quantization_limits.get(method) if method else None
        need = entry.needs_package if entry else None
        if not need or need.checked_first:
            return
        package = need.name
        present = packages.present(facts, package)
        if present.value:
            return
        asked = inputs.setting(cfg, "quantization")
        checkpoint = quantization_claims.checkpoint_quantization(cfg).get("quant_method")
        how = f"quantization {method!r}" if asked is not None else \
            f"vLLM {facts.version} runs this {checkpoint} checkpoint with the {method} kernel by itself"
        outcome = f"its config class imports {package} and vLLM refuses to start without it"
        vllm_message = messages.QUANTIZATION_KERNEL_NOT_INSTALLED.format(package=package,
                                                                         version=need.min_version or "?")
        if entry.converts is not None:
            fix = f"pass --quantization {checkpoint} to keep the plain kernel, or pip install {package}"
        else:   # a serialized format: the override also takes the plain method's name
            fix = f"pip install {package}, or serve a checkpoint not saved in the {method} format"
        if present.value is None:
            message = f"the {method} kernel needs the {package} package, which may be missing"
            explanation = (f"{how}; the shipped facts cannot tell whether {package} is installed; if it "
                           f"is not, {outcome}")
            yield self.diagnostic(cfg, asked or cfg.model or (1, 1), message, explanation=explanation,
                                  fields=("quantization", "model"),
                                  fix=f"lint on the machine or with --vllm SITE_PACKAGES to check; else {fix}",
                                  severity=self.unsure_severity, vllm_message=vllm_message)
            return
        message = f"the {method} kernel needs the {package} package, which is missing"
        explanation = f"{how}: {present.reason}; {outcome}"
        if not present.certain:
            fix += f"; if {package} is installed by hand, lint with --vllm SITE_PACKAGES to check that copy"
        yield self.diagnostic(cfg, asked or cfg.model or (1, 1), message, explanation=explanation,
                              fields=("quantization", "model", "hardware.compute_capability"),
                              fix=fix, vllm_message=vllm_message)

