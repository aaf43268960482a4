"""Answer torch.cuda and psutil queries from the declared GPU profile (runs inside a vLLM venv).

The conformance harness runs real vLLM on a machine without a GPU. Every check stays vLLM's;
only the questions vLLM asks the hardware are answered from `PATCHOPS_GPU_PROFILE`, a JSON
object: name, capability [major, minor], memory_gib, count, sms, host_ram_gib.
"""

from __future__ import annotations

import json
import os
import types

ENV = "PATCHOPS_GPU_PROFILE"
GIB = 1 << 30


def profile():
    """Return the declared profile (read on every call: forked cases set their own)."""
    text = os.environ.get(ENV)
    return json.loads(text) if text else None


def device_properties(device=0):
    gpu = profile()
    major, minor = gpu["capability"]
    return types.SimpleNamespace(
        name=gpu["name"], major=major, minor=minor, total_memory=int(gpu["memory_gib"] * GIB),
        multi_processor_count=gpu["sms"], is_integrated=False, is_multi_gpu_board=False,
        L2_cache_size=40 * (1 << 20), uuid="GPU-00000000-0000-0000-0000-%012d" % _index(device),
        gcnArchName="", warp_size=32, max_threads_per_multi_processor=2048,
        regs_per_multiprocessor=65536, shared_memory_per_block_optin=227 * 1024)


def _index(device) -> int:
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    return getattr(device, "index", None) or 0


def patch_torch_cuda(cuda) -> None:
    """Make `torch.cuda` report the profile's devices (no CUDA call reaches the stand-in driver)."""
    count = lambda *a, **k: profile()["count"]  # noqa: E731
    cuda.is_available = lambda: True
    cuda.device_count = count
    cuda._device_count_nvml = count
    if hasattr(cuda, "_device_count_amdsmi"):
        cuda._device_count_amdsmi = lambda: -1
    cuda.get_device_properties = device_properties
    cuda.get_device_capability = lambda device=None: tuple(profile()["capability"])
    cuda.get_device_name = lambda device=None: profile()["name"]
    cuda.current_device = lambda: 0
    cuda.set_device = lambda device: None
    total = lambda: int(profile()["memory_gib"] * GIB)  # noqa: E731
    cuda.mem_get_info = lambda device=None: (total(), total())
    import torch._C as C  # the C entry points vLLM's stateless counters call
    C._cuda_getDeviceCount = count


def patch_psutil(psutil) -> None:
    """Make `psutil.virtual_memory().total` the profile's host RAM (swap space checks use it)."""
    real = psutil.virtual_memory

    def virtual_memory():
        gpu = profile()
        found = real()
        if not gpu or "host_ram_gib" not in gpu:
            return found
        total = int(gpu["host_ram_gib"] * GIB)
        return found._replace(total=total, available=total, free=total)

    psutil.virtual_memory = virtual_memory
