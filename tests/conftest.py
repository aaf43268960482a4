"""Shared fixtures: real vLLM trees unpacked from PyPI wheels (see devtools/wheelcache.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import offline_loop, wheelcache

# The versions the integration tests run on: V0-only, the V0/V1 overlap, and recent V1 releases.
OLD, MID, NEW = "0.6.3.post1", "0.8.5", "0.11.0"
NEWEST = "0.33.0"

# Lint reads the environment it runs in (offline Hugging Face, PO908): tests state theirs.
for _name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.pop(_name, None)
# The suite never asks the real Hub: lint fetches nothing unless a test turns it on (against
# tests/support/hub_stand_in.py).
os.environ["PATCHOPS_FETCH"] = "0"

COREX_LIB = "usr/local/corex/lib/python3/dist-packages"
COREX_LIB64 = "usr/local/corex/lib64/python3/dist-packages"


@pytest.fixture(scope="session")
def vllm_site():
    """Return a function version -> read-only site-packages folder of that real vLLM."""
    return wheelcache.site_packages


@pytest.fixture
def corex_tree(tmp_path):
    """Return a function building a CoreX-style root with vLLM in `lib` and `lib64`.

    `corex_tree(version)` returns (root, [lib_site, lib64_site]); pass `lib64_symlink=True`
    to make lib64 a symlink to lib, as some images do.
    """

    def build(version: str, *, lib64_symlink: bool = False, with_flash_attn: bool = True):
        root = tmp_path / "corex-root"
        lib = root / COREX_LIB
        lib64 = root / COREX_LIB64
        wheelcache.copy_site_packages(version, lib, with_flash_attn=with_flash_attn)
        if lib64_symlink:
            lib64.parent.parent.parent.mkdir(parents=True, exist_ok=True)
            (root / "usr/local/corex/lib64").symlink_to(root / "usr/local/corex/lib")
        else:
            wheelcache.copy_site_packages(version, lib64, with_flash_attn=with_flash_attn)
        return root, [lib, lib64]

    return build


def vendor_hardcode(site: Path) -> None:
    """Apply what the CoreX fork does to EngineArgs: hardcode both flags to True."""
    wheelcache.hardcode_like_corex(site)


def pytest_configure(config):
    """The fast loop (`-m "not vllm"`, or PATCHOPS_TEST_OFFLINE=1) may not touch a wheel."""
    if offline_loop.wanted(config.option.markexpr):
        offline_loop.forbid_wheels()


def pytest_collection_modifyitems(config, items):
    """Mark `vllm` every test that builds a real vLLM tree, through a fixture or a helper."""
    for item in items:
        if offline_loop.reads_wheels(item):
            item.add_marker(pytest.mark.vllm)
