"""Fetch the official wheel of one release from PyPI, once, into patchops's cache.

`patchops capture --from-wheel` reads a vLLM file's pristine text from it; the tests and the
benchmark unpack real vLLM trees from the same cache (tests/support/wheelcache.py), and the
conformance judge the transformers its vLLM venvs were installed with.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from patchops.core.cache import cache_root
from patchops.core.errors import PatchopsError


def vllm_wheel(version: str) -> Path:
    """Download the vLLM wheel for `version` (once) with pip and return its path."""
    return wheel("vllm", version)


def wheel(project: str, version: str) -> Path:
    """Download the wheel of `project` `version` (once) with pip and return its path."""
    folder = cache_root() / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    pattern = f"{project.replace('-', '_')}-{version}-*.whl"
    found = sorted(folder.glob(pattern))
    if found:
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--quiet", "--dest", str(folder), f"{project}=={version}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(folder.glob(pattern))
    if done.returncode != 0 or not found:
        raise PatchopsError(f"could not download {project}=={version} from PyPI: {done.stderr.strip()}")
    return found[0]
