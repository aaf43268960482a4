"""PO624 gpu-memory-held-by-others."""

from __future__ import annotations

from typing import Iterator, Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, memory, messages, routing
from patchops.lint.vllm.memory import DEFAULT_GPU_MEMORY_UTILIZATION


class GpuMemoryHeldByOthers(Rule):
    """
    ## What it does
    Flags a launch whose GPU has less free memory right now than `gpu_memory_utilization` x
    its total memory asks for: another process (a previous server that did not exit, a
    notebook) holds the rest. Needs `hardware.free_memory_gib`, which patchops detects with
    `nvidia-smi`/`ixsmi --query-gpu=memory.free` on the box that lints (the least free GPU),
    or a spec states.

    ## Why is this bad?
    The V1 worker measures free memory when it starts and refuses: "Free memory on device
    (0.3/31.73 GiB) on startup is less than desired GPU memory utilization (0.9, 28.56 GiB).
    Decrease GPU memory utilization or reduce GPU memory used by other processes." (vLLM
    0.9+, after the engine is configured and the workers are spawned).

    ## Fix
    Stop the process that holds the GPU (`nvidia-smi` lists it), or lower
    `gpu-memory-utilization` below free / total.
    """

    code = "PO624"
    name = "gpu-memory-held-by-others"
    severity = "error"
    stage = "later"
    versions = ">=0.9"   # the V1 worker's start-up check (v1/worker/gpu_worker.py, 0.9.2+)
    needs = Needs(optional=("hardware.compute_capability", "hardware.free_memory_gib", "hardware.memory_gib",
                            "hardware.platform", "model"))
    vllm_message = messages.GPU_MEMORY_HELD_BY_OTHERS
    VALID = [
        Example("model: m\nhardware: {memory_gib: 31.73, free_memory_gib: 31.0}\nargs:\n  max-model-len: 4096\n",
                vllm="0.10.1.1"),
        Example("model: m\nhardware: {memory_gib: 31.73, free_memory_gib: 15}\nargs:\n"
                "  gpu-memory-utilization: 0.45\n", vllm="0.33.0"),
        # Exactly what 0.9 x total asks for is enough (vLLM refuses only below it).
        Example("model: m\nhardware: {memory_gib: 100, free_memory_gib: 90}\nargs:\n  max-model-len: 4096\n",
                vllm="0.33.0"),
        # V0 (0.10.1.1 with VLLM_USE_V1=0) has no such start-up check.
        Example("model: m\nhardware: {memory_gib: 31.73, free_memory_gib: 0.3}\nenv:\n  VLLM_USE_V1: '0'\n"
                "args:\n  max-model-len: 4096\n", vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("model: m\nhardware: {memory_gib: 31.73, free_memory_gib: 0.3}\nargs:\n  max-model-len: 4096\n",
                vllm="0.10.1.1", at=(2, 31)),
        Example("model: m\nhardware: {memory_gib: 100, free_memory_gib: 89.9}\nargs:\n  max-model-len: 4096\n",
                vllm="0.33.0", at=(2, 29)),
        Example("model: m\nhardware: {memory_gib: 80, free_memory_gib: 30}\nargs:\n"
                "  gpu-memory-utilization: 0.5\n", vllm="0.33.0", at=(4, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        free, total = _gib(inputs.ctx_value(cfg, "hardware.free_memory_gib")), inputs.memory_gib(cfg)
        if free is None or total is None or routing.engine(cfg, facts).value != routing.V1:
            return
        stated = inputs.setting(cfg, "gpu_memory_utilization")
        util = _gib(inputs.value(cfg, "gpu_memory_utilization")) if stated is not None \
            else DEFAULT_GPU_MEMORY_UTILIZATION
        if util is None or free >= total * util:
            return
        wanted = round(total * util, 2)
        origin = "you set" if stated is not None else "the default"
        measured = inputs.ctx_setting(cfg, "hardware.free_memory_gib")
        at = stated or (measured if measured is not None and measured.line > 0 else cfg.model)
        yield self.diagnostic(
            cfg, at, f"only {free:g} of {total:g} GiB free, below the {wanted:g} GiB that "
            f"gpu_memory_utilization {util:g} asks for",
            explanation=f"the free memory is {_where(cfg)}; gpu_memory_utilization {util:g} is {origin}. "
            f"Another process holds the GPU, and vLLM {facts.version}'s worker refuses to start",
            fields=("gpu_memory_utilization", "hardware.free_memory_gib", "hardware.memory_gib"),
            fix=f"stop the process that holds the GPU (nvidia-smi lists it), or set gpu-memory-utilization "
                f"below {int(free / total * 100) / 100:g}",
            vllm_message=messages.GPU_MEMORY_HELD_BY_OTHERS.format(free=round(free, 2), total=round(total, 2),
                                                                   util=util, wanted=wanted))


def _gib(raw: object) -> Optional[float]:
    try:
        return None if raw is None or isinstance(raw, bool) else float(raw)
    except (TypeError, ValueError):
        return None


def _where(cfg: ReadConfig) -> str:
    """Say where the free memory figure came from: the spec, --hardware, or a tool on this box."""
    found = inputs.ctx_setting(cfg, "hardware.free_memory_gib")
    source = found.source if found is not None else ""
    if source in ("yaml", "--hardware"):
        return "stated in the spec" if source == "yaml" else "given with --hardware"
    return f"measured with {source} on this box"
