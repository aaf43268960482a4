"""vLLM platform plugin entry point: the profiled CUDA platform when a GPU profile is declared.

Kept free of vLLM imports: vLLM loads plugins while it resolves `current_platform`.
"""

import os


def platform():
    if os.environ.get("PATCHOPS_GPU_PROFILE"):
        return "patchops_platform.ProfiledCudaPlatform"
    return None
