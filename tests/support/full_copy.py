"""Writable full vLLM copies (every file of the wheel, as pip installs it), cheap to make.

The shared wheel cache unpacks only .py and dist-info files, so RECORD would list hundreds of
files that are not there; verify tests need what a real install has. A copy here is a tree of
hard links to the cached full tree: `unlink_write` breaks a file's link before changing it,
so the cache stays intact.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support import wheelcache


def full_copy(version: str, dest: Path, *, link: bool = True) -> Path:
    """Return `dest`, a site-packages holding every file of vLLM `version`'s wheel.

    `link=False` copies the bytes (840 MB for 0.33.0): for tests of inode stamps, which any
    process linking the shared inodes (another test run making its copy) would move.
    """
    source = wheelcache.site_packages(version, full=True)
    shutil.copytree(source, dest, copy_function=os.link if link else shutil.copy2,
                    ignore=shutil.ignore_patterns(".complete"))
    return dest


def unlink_write(path: Path, data: bytes) -> None:
    """Give `path` new bytes without touching the cached file it may be linked to."""
    path.unlink()
    path.write_bytes(data)


def flip_byte(path: Path, offset: int) -> None:
    """Change one byte of `path` in place (the size stays the same)."""
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    unlink_write(path, bytes(data))
