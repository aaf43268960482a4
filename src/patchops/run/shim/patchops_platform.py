"""vLLM's own CUDA platform, answering the declared GPU profile instead of a driver.

Only the device queries change; every check and default stays the installed vLLM's.
"""

from vllm.platforms.cuda import CudaPlatform
from vllm.platforms.interface import DeviceCapability

import patchops_gpu_profile as gpu


class ProfiledCudaPlatform(CudaPlatform):

    @classmethod
    def get_device_capability(cls, device_id: int = 0):
        major, minor = gpu.profile()["capability"]
        return DeviceCapability(major=major, minor=minor)

    @classmethod
    def has_device_capability(cls, capability, device_id: int = 0) -> bool:
        current = cls.get_device_capability(device_id)
        if isinstance(capability, tuple):
            return current >= capability
        return current.to_int() >= capability

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return gpu.profile()["name"]

    @classmethod
    def get_device_uuid(cls, device_id: int = 0) -> str:
        return gpu.device_properties(device_id).uuid

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return gpu.device_properties(device_id).total_memory

    @classmethod
    def is_fully_connected(cls, physical_device_ids) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return gpu.profile()["count"]

    @classmethod
    def num_compute_units(cls, device_id: int = 0) -> int:
        return gpu.profile()["sms"]

    @classmethod
    def log_warnings(cls):
        pass
