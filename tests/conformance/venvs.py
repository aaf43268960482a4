"""Real vLLM releases in venvs outside the repo, runnable on a machine without a GPU.

`ensure(version)` reuses `~/.cache/patchops/vllm-venvs/<version>` when it is ready and builds
it when absent: the regular CUDA wheel with the dependencies PyPI had a few days after that
release (`uv pip install --exclude-newer`), a stand-in `libcuda.so.1` so the extensions
import, and the shim folder (GPU profile, vLLM platform plugin, sitecustomize) that the
probe's processes get on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

from patchops.core.cache import cache_root as patchops_cache_root
from patchops.run import stand_in
from support import release_day

HERE = Path(__file__).resolve().parent
MARKER = "patchops-conformance.json"


@dataclass(frozen=True)
class Venv:
    version: str
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def shim(self) -> Path:
        return self.root / "patchops-shim"

    @property
    def driver_dir(self) -> Path:
        return self.root / "patchops-driver"

    def site_packages(self) -> Path:
        return next((self.root / "lib").glob("python3*/site-packages"))


def cache_root() -> Path:
    return patchops_cache_root() / "vllm-venvs"


def venv_for(version: str) -> Venv:
    return Venv(version, cache_root() / version)


def is_ready(version: str) -> bool:
    venv = venv_for(version)
    return (venv.root / MARKER).is_file() and venv.python.exists()


def ensure(version: str, *, log=print) -> Venv:
    """Return a ready venv of vLLM `version`, building what is missing."""
    venv = venv_for(version)
    if not is_ready(version):
        _install(venv, log)
    _write_shim(venv)
    return venv


# --------------------------------------------------------------------------- install

def _uv() -> List[str]:
    found = shutil.which("uv")
    if found is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "uv"], check=True)
        found = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    return [found]


def _install(venv: Venv, log) -> None:
    cutoff = release_day.cutoff(venv.version).strftime("%Y-%m-%dT%H:%M:%SZ")
    uv = _uv()
    log(f"vllm {venv.version}: installing into {venv.root} (dependencies as of {cutoff})")
    if not venv.python.exists():
        subprocess.run(uv + ["venv", "-q", "--python", sys.executable, str(venv.root)], check=True)
    wanted = [f"vllm=={venv.version}", "setuptools"]
    pip = uv + ["pip", "install", "-q", "--python", str(venv.python), "--exclude-newer", cutoff]
    subprocess.run(pip + wanted, check=True)
    pin = _cuda_python_pin(venv)
    if pin:
        log(f"vllm {venv.version}: {pin}: the old monolithic cuda-python shadows cuda-bindings")
        subprocess.run(pip + wanted + [pin], check=True)
    symbols = _build_driver(venv)
    (venv.root / MARKER).write_text(json.dumps(
        {"version": venv.version, "exclude_newer": cutoff, "requirements": wanted + [pin or ""],
         "driver_symbols": symbols}, indent=1))


def installed(venv: Venv) -> Dict[str, str]:
    """Return the distributions installed in the venv, name -> version (the judge's environment)."""
    found = {}
    for meta in venv.site_packages().glob("*.dist-info/METADATA"):
        name = version = None
        for line in meta.read_text(errors="replace").splitlines():
            if line.startswith("Name: "):
                name = line[6:].strip().lower().replace("_", "-")
            elif line.startswith("Version: "):
                version = line[9:].strip()
            if name and version:
                break
        if name:
            found[name] = version or ""
    return dict(sorted(found.items()))


def _cuda_python_pin(venv: Venv) -> Optional[str]:
    """Return a requirement that resolves the cuda-python / cuda-bindings clash, if there is one.

    Some resolutions (0.33.0) install cuda-python 12.x, the old package holding its own
    `cuda.bindings`, beside cuda-bindings 13.x: the old files win and every
    tensor_parallel_size > 1 fails. cuda-python >= 13 is a meta package over cuda-bindings.
    """
    packages = installed(venv)
    python, bindings = packages.get("cuda-python"), packages.get("cuda-bindings")
    if python and bindings and python.split(".")[0] != bindings.split(".")[0]:
        return f"cuda-python>={bindings.split('.')[0]}"
    return None


def _build_driver(venv: Venv) -> List[str]:
    return stand_in.build_driver(venv.site_packages(), venv.driver_dir)


def _write_shim(venv: Venv) -> None:
    stand_in.write_shim(venv.shim)


def environment(venv: Venv, gpu_profile: dict, home: Path) -> Dict[str, str]:
    """Return the clean environment the probe runs in: offline, profiled, no user VLLM_*."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "USER", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(stand_in.offline_environment(home))
    env.update(stand_in.profile_env(gpu_profile))
    env.update({"PYTHONPATH": str(venv.shim), "LD_LIBRARY_PATH": str(venv.driver_dir)})
    return env
