"""What lets real vLLM reach its configuration stage on a machine without a GPU.

Without a driver, vLLM's compiled extensions fail to import on `libcuda.so.1`; a stand-in
exporting the driver symbols they link against, each answering "no device", lets them
import. The `shim/` modules (put first on the subprocess's PYTHONPATH) make vLLM's platform a
subclass of its own CUDA platform that answers a declared GPU profile, and patch torch.cuda and
psutil the same way in every process vLLM starts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

SHIM_SOURCES = Path(__file__).resolve().parent / "shim"
# Run by the vLLM interpreter, never imported by patchops.
PROBE_SCRIPT = Path(__file__).resolve().parent / "probe.py"
PROFILE_ENV = "PATCHOPS_GPU_PROFILE"
# CUDA_ERROR_NO_DEVICE: what every driver entry point of the stand-in answers.
NO_DEVICE = 100
# Entry points the CUDA runtime and torch look up themselves (dlsym), beside those the
# extensions link against.
DRIVER_BASICS = ("cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount",
                 "cuGetErrorString", "cuGetProcAddress", "cuGetProcAddress_v2")


def build_driver(site_packages: Path, out_dir: Path) -> List[str]:
    """Build a stand-in libcuda.so.1 in `out_dir` exporting what the installed extensions need."""
    symbols = set(DRIVER_BASICS)
    for lib in site_packages.rglob("*.so*"):
        if not lib.is_file():
            continue
        needed = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
        if "[libcuda.so.1]" not in needed:
            continue
        table = subprocess.run(["nm", "-D", "--undefined-only", str(lib)], capture_output=True,
                               text=True).stdout
        symbols.update(line.split()[-1].split("@")[0] for line in table.splitlines()
                       if line.split() and line.split()[-1].startswith("cu"))
    out_dir.mkdir(parents=True, exist_ok=True)
    source = out_dir / "libcuda_stub.c"
    lines = ["/* Stand-in CUDA driver: every entry point answers CUDA_ERROR_NO_DEVICE. */",
             "static const char *message = \"no CUDA device (patchops stand-in)\";"]
    for name in sorted(symbols):
        if name in ("cuGetErrorString", "cuGetErrorName"):
            lines.append(f"int {name}(int error, const char **text) "
                         "{ if (text) *text = message; return 0; }")
        else:
            lines.append(f"int {name}() {{ return {NO_DEVICE}; }}")
    source.write_text("\n".join(lines) + "\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(out_dir / "libcuda.so.1"),
                    "-Wl,-soname,libcuda.so.1", str(source)], check=True)
    return sorted(symbols)


def write_shim(folder: Path) -> None:
    """Copy the shim modules to `folder` and register the platform plugin (a dist-info there)."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in SHIM_SOURCES.glob("*.py"):
        target = folder / source.name
        if not target.exists() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)
    info = folder / "patchops_conformance_shim-0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: patchops-conformance-shim\n"
                                   "Version: 0\n")
    (info / "entry_points.txt").write_text("[vllm.platform_plugins]\n"
                                           "patchops_gpu = patchops_platform_plugin:platform\n")


def offline_environment(home: Path) -> Dict[str, str]:
    """Return the variables that keep vLLM offline and its caches under `home`."""
    return {
        "HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(home / "hf"),
        "VLLM_CACHE_ROOT": str(home / "vllm-cache"),
        "VLLM_CONFIG_ROOT": str(home / "vllm-config"),
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "PYTHONUNBUFFERED": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
    }


def profile_env(profile: dict) -> Dict[str, str]:
    return {PROFILE_ENV: json.dumps(profile, sort_keys=True)}
