"""Predict what the platform does to a config: which vendor build runs it, and custom all-reduce.

Sources: `distributed/device_communicators/custom_all_reduce.py` (CustomAllreduce.__init__:
supported world sizes, P2P, PCIe), `config.py` / `config/parallel.py` (ParallelConfig:
`if not current_platform.use_custom_allreduce(): self.disable_custom_all_reduce = True`),
`platforms/*.py` (`use_custom_allreduce`: CUDA yes, ROCm only MI300-class gfx94/gfx95, every
other platform no), and the vendor markers facts_extract/vendor.py reads.
"""

from __future__ import annotations

from typing import Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm.inputs import bool_value, device_name, is_cuda_like, platform, to_int, value
from patchops.lint.vllm.prediction import Prediction

COREX_EAGER_PATCHSET = "corex-eager-allreduce"
# keyword -> (the EngineArgs call that passes it, what the hardcoded True means at run time)
COREX_HARDCODED = {
    "enforce_eager": ("ModelConfig(...) in EngineArgs.create_model_config",
                      "vLLM runs in eager mode without CUDA graphs"),
    "disable_custom_all_reduce": ("ParallelConfig(...) in EngineArgs.create_engine_config",
                                  "tensor-parallel all-reduce goes through NCCL, not vLLM's custom kernel"),
}

COREX = "corex"
# ROCm's use_custom_allreduce: gcnArchName contains gfx94 (0.8.5) or gfx95 (0.9+); by card name.
ROCM_CUSTOM_ALLREDUCE_CARDS = ("mi300", "mi308", "mi325", "mi350", "mi355")


def vendor(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return the vendor build that runs the config ("corex") or None, and how it is known."""
    if platform(cfg) == COREX:
        return Prediction(COREX, "hardware.platform is corex", fields=("hardware.platform",))
    if facts.vendor == COREX:
        marker = f"version {facts.version}" if COREX in facts.version.lower() else f"installed in {facts.origin}"
        return Prediction(COREX, f"the vLLM copy is a CoreX build: {marker}")
    return Prediction(None, "no vendor platform stated or detected")


def tensor_parallel_size(cfg: ReadConfig) -> int:
    return to_int(value(cfg, "tensor_parallel_size")) or 1


def custom_allreduce(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return whether vLLM's custom all-reduce kernel runs the TP all-reduce, and why not.

    Judged on the tensor-parallel group (the group CustomAllreduce attaches to). Checks the
    source makes at start-up but the config cannot tell (GPUs across nodes, PCIe-only links
    between more than two GPUs, a failing P2P test) are left out: the answer is then "on".
    """
    tp = tensor_parallel_size(cfg)
    fields = ("tensor_parallel_size",) if tp > 1 else ()
    if tp <= 1:
        return Prediction(False, "tensor_parallel_size is 1: there is no all-reduce", fields=fields)
    hard = facts.hardcoded.get("disable_custom_all_reduce") if facts.hardcoded else None
    if hard is not None and str(hard).strip() == "True":
        return Prediction(False, "this vLLM build hardcodes disable_custom_all_reduce=True in EngineArgs",
                          fields=fields + ("disable_custom_all_reduce",))
    if bool_value(cfg, "disable_custom_all_reduce"):
        return Prediction(False, "disable_custom_all_reduce is set", fields=fields + ("disable_custom_all_reduce",))
    why = platform_without_custom_allreduce(cfg)
    if why is not None:
        return Prediction(False, why, fields=fields + ("hardware.platform",))
    sizes = list(facts.custom_allreduce.world_sizes or ())   # vLLM prints its list
    if sizes and tp not in sizes:
        return Prediction(False, f"vLLM {facts.version}'s custom all-reduce supports world sizes {sizes}, "
                          f"not tensor_parallel_size {tp}", fields=fields)
    return Prediction(True, f"custom all-reduce runs the all-reduce of tensor_parallel_size {tp}", fields=fields)


def platform_without_custom_allreduce(cfg: ReadConfig) -> Optional[str]:
    """Return why the stated platform's use_custom_allreduce() is False, None when it is True or unknown."""
    name = platform(cfg)
    if name is None:
        return None
    if is_cuda_like(cfg) is False:
        return f"the {name} platform has no custom all-reduce (use_custom_allreduce() is False)"
    if name == "rocm":
        card = device_name(cfg)
        if card is not None and not any(c in card for c in ROCM_CUSTOM_ALLREDUCE_CARDS):
            return (f"on ROCm custom all-reduce runs only on MI300-class GPUs (gfx94x/gfx95x), not "
                    f"{card}")
    return None
