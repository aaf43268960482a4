"""PO602 bfloat16-needs-ampere."""

from __future__ import annotations

from typing import Iterator, Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, releases

T4 = "hardware: {gpus: 1, name: Tesla T4, memory_gib: 15, compute_capability: 7.5}\n"


class Bfloat16NeedsAmpere(Rule):
    """
    ## What it does
    Flags bfloat16 weights or `--dtype bfloat16` on an NVIDIA GPU of compute capability below
    8.0 (V100, T4, Turing and older), as stated in `hardware.compute_capability`.

    ## Why is this bad?
    Only Ampere (8.0) and newer compute in bfloat16. An explicit `--dtype bfloat16` passes the
    configuration and then stops the worker at start-up: "Bfloat16 is only supported on GPUs
    with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You
    can use float16 instead ...". With `dtype` auto and a bfloat16 model (`torch_dtype` in
    config.json) vLLM 0.8.5 fails the same way; from 0.9 it falls back to float16 with a
    warning (info here: float16 can overflow where bfloat16 does not). On 0.8.5-0.10.1 the
    V1 engine also does not run below 8.0 (PO306 reports the fallback to V0).

    Stage: later (worker start-up); the configuration accepts it.

    ## Fix
    Pass `--dtype half` (float16), or run on an Ampere or newer GPU.
    """

    code = "PO602"
    name = "bfloat16-needs-ampere"
    severity = "error"
    stage = "later"
    versions = ">=0"
    needs = Needs(optional=("hardware.compute_capability", "hardware.name", "hardware.platform", "model"))
    vllm_message = messages.BFLOAT16_NEEDS_AMPERE
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n" + T4 + "args:\n  dtype: half\n"),
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 1, compute_capability: 8.0}\n"
                "args:\n  dtype: bfloat16\n"),
        Example("model: /models/Llama-2-7b-hf\n" + T4 + "args:\n  max-model-len: 4096\n",
                model={"torch_dtype": "float16"}),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n" + T4 + "args:\n  dtype: bfloat16\n", vllm="0.10.1.1",
                at=(4, 3)),
        # auto on 0.8.5 keeps the model's bfloat16
        Example("model: /models/Qwen2.5-7B-Instruct\n" + T4 + "args:\n  max-model-len: 4096\n",
                model={"torch_dtype": "bfloat16"}, at=(2, 53)),
        Example("model: /models/Qwen2.5-7B-Instruct\n" + T4 + "args:\n  max-model-len: 4096\n",
                model={"torch_dtype": "bfloat16"}, vllm="0.10.1.1", at=(2, 53), severity="info"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        cc = inputs.compute_capability(cfg)
        if cc is None or cc[0] >= 8 or inputs.is_cuda_like(cfg) is False or inputs.platform(cfg) == "rocm":
            return
        gpu = inputs.ctx_value(cfg, "hardware.name") or "this"
        shown_cc = f"{cc[0]}.{cc[1]}"
        dtype = _dtype(inputs.value(cfg, "dtype"))
        if dtype == "bfloat16":
            yield self.diagnostic(
                cfg, inputs.setting(cfg, "dtype"),
                f"dtype bfloat16 on a GPU of compute capability {shown_cc}: bfloat16 needs 8.0 or newer",
                explanation=f"the compute capability is hardware.compute_capability; vLLM {facts.version} "
                "will refuse to start its worker",
                fields=("dtype", "hardware.compute_capability"),
                vllm_message=messages.BFLOAT16_NEEDS_AMPERE.format(gpu=gpu, cc=shown_cc), fix="pass --dtype half")
            return
        model = cfg.model_facts
        if dtype != "auto" or model is None or _dtype(model.dtype) != "bfloat16":
            return
        at = inputs.ctx_setting(cfg, "hardware.compute_capability")
        fields = ("dtype", "hardware.compute_capability")
        if releases.release(facts) < releases.AUTO_DTYPE_BY_PLATFORM:
            yield self.diagnostic(
                cfg, at, f"dtype auto keeps the model's bfloat16 on compute capability {shown_cc}: "
                "bfloat16 needs 8.0", fields=fields,
                explanation=f"the model's weights are bfloat16 (torch_dtype in config.json); vLLM "
                f"{facts.version} keeps bfloat16 and will refuse to start its worker",
                vllm_message=messages.BFLOAT16_NEEDS_AMPERE.format(gpu=gpu, cc=shown_cc), fix="pass --dtype half")
            return
        yield self.diagnostic(
            cfg, at, f"bfloat16 weights on compute capability {shown_cc}: vLLM {facts.version} runs them "
            "in float16", severity="info", fields=fields,
            explanation="the model's weights are bfloat16 (torch_dtype in config.json); float16 can "
            "overflow where bfloat16 does not",
            vllm_message=messages.BFLOAT16_AUTO_FALLBACK.format(gpu=gpu, cc=shown_cc),
            fix="pass --dtype half to make the choice explicit")


def _dtype(raw: object) -> Optional[str]:
    """Return the dtype vLLM means: "bfloat16", "float16", "auto", ... (None for anything else)."""
    if raw is None:
        return "auto"
    text = str(raw).strip().lower().replace("torch.", "")
    return {"half": "float16", "bf16": "bfloat16", "fp16": "float16"}.get(text, text)
