"""PO303 multistep-needs-flash-backend."""

from __future__ import annotations

from typing import Iterator, List

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import attention, inputs, prediction, releases, routing, scheduler, wording


class MultistepNeedsFlashBackend(Rule):
    """
    ## What it does
    Flags V0 multi-step scheduling (`num_scheduler_steps` > 1, vLLM 0.6.3-0.10.0) where the
    attention backend vLLM will select is not one multi-step accepts: an explicit
    `VLLM_ATTENTION_BACKEND=XFORMERS`, or an automatic fall back to XFORMERS (a build without
    `vllm_flash_attn`, compute capability below 8.0, dtype float32, an fp8 KV cache without
    FA3, a block size that is not a multiple of 16). With chunked prefill on (set, or switched
    on automatically by V0 for max_model_len > 32768) the stricter list applies.

    ## Why is this bad?
    `MultiStepModelRunner` checks the backend when the worker starts, after the model config
    and before the weights load, and raises "Multi-Step not supported for attention backend:
    xformers. Set VLLM_ATTENTION_BACKEND to a value from ['flash-attn', 'rocm-flash-attn',
    'flashinfer']." The V0 backend choice is silent (an info log), so the cause is not obvious.

    ## Fix
    Remove `num_scheduler_steps`, or make V0 select an allowed backend: install a build that
    ships `vllm_flash_attn`, fix the setting that forced XFORMERS, or set
    `VLLM_ATTENTION_BACKEND=FLASHINFER` where flashinfer is installed (not with chunked prefill
    on 0.6.3). The variable takes enum names (FLASH_ATTN, FLASHINFER), not the names 0.6.3
    prints.
    """

    code = "PO303"
    name = "multistep-needs-flash-backend"
    severity = "error"
    stage = "later"      # MultiStepModelRunner checks the backend at worker start
    versions = ">=0.6.3,<0.10.1"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    stage = "later"  # MultiStepModelRunner checks it when the worker starts
    vllm_message = ("{ms_config_str} not supported for attention backend: {backend}. "
                    "Set VLLM_ATTENTION_BACKEND to a value from {supported}.")
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "hardware: {gpus: 1, compute_capability: 8.0}\n"
                "args:\n"
                "  num-scheduler-steps: 4\n"
                "  enable-chunked-prefill: false\n"
                "  max-model-len: 4096\n"
                "  max-num-batched-tokens: 8192\n", vllm="0.6.3.post1"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.7.3}\n"
                "hardware: {gpus: 1, compute_capability: 7.5}\n"
                "args:\n"
                "  max-model-len: 4096\n", vllm="0.7.3"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "hardware: {gpus: 1, compute_capability: 7.5}\n"
                "env:\n"
                "  VLLM_ATTENTION_BACKEND: FLASHINFER\n"
                "args:\n"
                "  num-scheduler-steps: 8\n"
                "  max-model-len: 4096\n", vllm="0.8.5", facts={"has_flashinfer": True}),
    ]
    INVALID = [
        # Seed incident 2: Turing cards, so V0 picked xformers.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "hardware: {platform: cuda, gpus: 1, compute_capability: 7.5}\n"
                "args:\n"
                "  num-scheduler-steps: 4\n"
                "  enable-chunked-prefill: false\n"
                "  max-model-len: 4096\n"
                "  max-num-batched-tokens: 8192\n", vllm="0.6.3.post1", at=(5, 3)),
        # A vendor build without vllm_flash_attn: same failure on an Ampere-class card.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "hardware: {platform: corex, gpus: 4, compute_capability: 8.0}\n"
                "args:\n"
                "  tensor-parallel-size: 4\n"
                "  num-scheduler-steps: 4\n"
                "  max-model-len: 4096\n", vllm="0.6.3.post1", at=(6, 3),
                facts={"has_flash_attn": False}),
        Example("VLLM_ATTENTION_BACKEND=XFORMERS vllm serve /models/Qwen2.5-7B-Instruct "
                "--num-scheduler-steps 8 --max-model-len 8192\n",
                vllm="0.7.3", kind="command", at=(1, 72)),
        # 0.9.2 falls back to V0 for multi-step, where block size 8 forces XFORMERS.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "num-scheduler-steps: 8\n"
                "block-size: 8\n"
                "max-model-len: 8192\n", vllm="0.9.2", kind="config", at=(2, 1)),
        # 0.6.3 accepts FLASHINFER for multi-step, but not with chunked prefill on.
        Example("model: /models/Qwen2.5-32B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "env: {VLLM_ATTENTION_BACKEND: FLASHINFER}\n"
                "args:\n"
                "  num-scheduler-steps: 8\n"
                "  enable-chunked-prefill: true\n"
                "  max-model-len: 65536\n", vllm="0.6.3.post1", at=(5, 3),
                facts={"has_flashinfer": True}),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.multistep_setting(cfg)
        if found is None:
            return
        steps = inputs.num_scheduler_steps(cfg)
        if inputs.is_cuda_like(cfg) is False:
            return  # CPU disables multi-step (0.7.3+); other platforms pick their own backend
        eng = routing.engine(cfg, facts)
        if eng.value != routing.V0 or eng.error:
            return  # PO302 reports V1 with multi-step
        backend = attention.v0_attention_backend(cfg, facts)
        if backend.value is None:
            return
        label = attention.backend_label(backend.value, facts)
        chunked = scheduler.chunked_prefill(cfg, facts, eng)
        failing = [on for on in chunked.candidates if label not in attention.multistep_backends(facts, on)]
        if not failing:
            return
        on = chunked.value if chunked.value in failing else failing[0]
        certain = backend.certain and len(failing) == len(chunked.candidates)
        allowed = list(attention.multistep_backends(facts, on))
        ms = "Multi-Step + Chunked-Prefill" if on else "Multi-Step"
        ver = facts.version
        chunk_note = ""
        if on:
            chunk_note = f" with chunked prefill on ({chunked.reason})"
        elif not chunked.certain:
            chunk_note = " with chunked prefill off"
        what = "fails" if certain else "possibly fails"
        on_backend = backend.value if isinstance(backend.value, str) else "this attention backend"
        message = f"num_scheduler_steps ({steps}) on {on_backend}: vLLM {ver} {what} at worker start-up"
        explanation = (f"num_scheduler_steps{chunk_note} needs one of the attention backends {allowed}, "
                       f"but {backend.reason}; vLLM fails before the weights load")
        if not certain and not backend.certain:
            explanation += (f" (the backend is {wording.and_list(backend.candidates).replace(' and ', ' or ')} "
                            "depending on the GPU)")
        fields = ("num_scheduler_steps",) + backend.fields + (chunked.fields if on else ())
        yield self.diagnostic(
            cfg, found, message, explanation=explanation, severity=None if certain else "warning",
            fields=tuple(dict.fromkeys(fields)), fix=self._fix(cfg, facts, backend, on),
            vllm_message=f"{ms} not supported for attention backend: {label}. "
                         f"Set VLLM_ATTENTION_BACKEND to a value from {allowed}.")

    @staticmethod
    def _fix(cfg: ReadConfig, facts: Facts, backend: prediction.Prediction, chunked: bool) -> str:
        steps: List[str] = []
        allowed = attention.multistep_backends(facts, chunked)
        if backend.value == "XFORMERS":
            if inputs.attention_backend_env(cfg) == "XFORMERS":
                steps.append("unset VLLM_ATTENTION_BACKEND=XFORMERS")
            elif "vllm_flash_attn" in backend.reason:
                steps.append("install a vLLM build that ships vllm_flash_attn")
            else:
                for name in ("dtype", "kv_cache_dtype", "block_size"):
                    if name in backend.fields:
                        steps.append(f"change {name.replace('_', '-')} (it forces XFORMERS)")
        if facts.has_flashinfer and attention.backend_label("FLASHINFER", facts) in allowed \
                and backend.value != "FLASHINFER":
            steps.append("set VLLM_ATTENTION_BACKEND=FLASHINFER (flashinfer is installed)")
        if chunked and attention.backend_label(backend.value, facts) in attention.multistep_backends(facts, False):
            steps.append("keep chunked prefill off (max-model-len <= 32768, or disable it on the "
                         "command line)")
        steps.append("remove num-scheduler-steps")
        text = ", or ".join(steps)
        if releases.release(facts) < releases.BACKEND_ENUM_NAMES:
            text += "; VLLM_ATTENTION_BACKEND takes FLASH_ATTN or FLASHINFER, not the names vLLM prints"
        return text
