"""Fetch official vLLM (and transformers) wheels from PyPI and unpack their Python sources into a cache.

Tests, the benchmark and the shipped-facts generator all need real vLLM files, and none may
commit vLLM's code; they unpack it here on first use instead. Only the `.py` files, the
dist-info and the flash-attention extension (whose presence the linter checks) are unpacked:
the rest of a wheel is compiled kernels nobody here reads. `full=True` unpacks everything, for
`patchops verify`, which checks every file RECORD lists.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from patchops.host import pypi
from patchops.core.errors import PatchopsError

FLASH_ATTN_DIR = "vllm/vllm_flash_attn/"


# One home for the download: the shipped module `patchops capture --from-wheel` uses.
cache_root = pypi.cache_root
wheel_path = pypi.vllm_wheel


def _wanted(name: str, with_flash_attn: bool, full: bool = False) -> bool:
    if full or name.endswith(".py") or ".dist-info/" in name:
        return True
    return with_flash_attn and name.startswith(FLASH_ATTN_DIR) and name.endswith(".so")


def site_packages(version: str, *, with_flash_attn: bool = True, full: bool = False) -> Path:
    """Return a read-only cached folder laid out like site-packages holding vLLM `version`.

    Callers that modify files must copy it first (see `copy_site_packages`). `full` unpacks
    every file of the wheel, as pip installs it (0.33.0: 5,800 files, 840 MB).
    """
    flavour = "-full" if full else "" if with_flash_attn else "-no-fa"
    return _unpacked(cache_root() / "trees" / f"vllm-{version}{flavour}", wheel_path(version),
                     lambda name: _wanted(name, with_flash_attn, full))


def transformers_site(version: str) -> Path:
    """Return a cached folder laid out like site-packages holding transformers `version`'s
    version module and its auto mappings: what lint reads of a transformers beside vLLM."""
    return _unpacked(cache_root() / "trees" / f"transformers-{version}", pypi.wheel("transformers", version),
                     lambda name: name == "transformers/__init__.py"
                     or (name.startswith("transformers/models/auto/") and name.endswith(".py")))


def _unpacked(target: Path, wheel: Path, wanted) -> Path:
    """Unpack the members of `wheel` that `wanted` accepts into `target`, once (atomically)."""
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            if wanted(member.filename):
                archive.extract(member, staging)
    (staging / ".complete").write_text(wheel.name + "\n")
    try:
        staging.rename(target)
    except OSError:  # another process finished first
        shutil.rmtree(staging, ignore_errors=True)
    return target


def copy_site_packages(version: str, dest: Path, *, with_flash_attn: bool = True) -> Path:
    """Copy the cached tree for `version` to `dest` (a writable site-packages) and return it."""
    source = site_packages(version, with_flash_attn=with_flash_attn)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".complete"),
                    copy_function=_copy_or_link, dirs_exist_ok=True)
    return dest


def _copy_or_link(src: str, dst: str) -> None:
    """Copy sources; link the multi-hundred-MB extension files, which nothing modifies."""
    if src.endswith(".so"):
        try:
            os.link(src, dst)
            return
        except OSError:
            pass
    shutil.copy2(src, dst)


def hardcode_like_corex(site: Path) -> None:
    """Edit a writable copy the way the CoreX fork does: EngineArgs hardcodes both flags to True.

    Tests and the benchmark build the vendor's file from the real upstream one this way.
    """
    path = Path(site) / "vllm" / "engine" / "arg_utils.py"
    text = path.read_text()
    for name in ("enforce_eager", "disable_custom_all_reduce"):
        upstream = f"{name}=self.{name},"
        if text.count(upstream) != 1:
            raise PatchopsError(f"{path}: expected one `{upstream}`, found {text.count(upstream)}")
        text = text.replace(upstream, f"{name}=True,")
    path.write_text(text)
