"""Whether patchops can write a file or folder, and if not why: read-only filesystem, immutable,
read-only mode, or another owner; each with the fix that fits it.

Asked before an apply plans anything (a copy patchops cannot write is named up front, not
after the plan was printed), and to word a write that failed anyway.
"""

from __future__ import annotations

import array
import fcntl
import os
import stat
from pathlib import Path
from typing import Iterable, Optional

from patchops.core.records import record

# linux/fs.h: FS_IOC_GETFLAGS is _IOR('f', 1, long); the flags chattr +i and +a set.
_FS_IOC_GETFLAGS = 0x80086601 if array.array("l").itemsize == 8 else 0x80046601
_FS_IMMUTABLE_FL, _FS_APPEND_FL = 0x10, 0x20

READ_ONLY_FS = "read-only filesystem"
IMMUTABLE = "immutable"
READ_ONLY_MODE = "read-only mode"
NOT_OWNER = "not the owner"


@record(frozen=True)
class Unwritable:
    """A file or folder patchops cannot write, the cause (one of the names above), its fix."""

    path: Path
    cause: str
    reason: str     # "is on a read-only filesystem (mounted at /opt)"
    fix: str        # "remount /opt read-write"

    def message(self) -> str:
        return f"{self.path} {self.reason}; {self.fix}"


def check(path: Path, *, folder: bool) -> Optional[Unwritable]:
    """Return why patchops cannot replace files in `folder` (or replace the file `path`)."""
    try:
        info = os.stat(path)
    except OSError:
        return None  # missing: the write itself names what fails
    if os.statvfs(path).f_flag & os.ST_RDONLY:
        mount = _mount_point(path)
        return Unwritable(path, READ_ONLY_FS, f"is on a read-only filesystem (mounted at {mount})",
                          f"remount {mount} read-write (root does not help on a read-only mount)")
    flags = _attr_flags(path)
    if flags & (_FS_IMMUTABLE_FL | _FS_APPEND_FL):
        which = "immutable (chattr +i)" if flags & _FS_IMMUTABLE_FL else "append-only (chattr +a)"
        return Unwritable(path, IMMUTABLE, f"is {which}",
                          f"clear the flag with `chattr -{'i' if flags & _FS_IMMUTABLE_FL else 'a'} "
                          f"{path}` (root does not help while it is set)")
    if folder and not os.access(path, os.W_OK | os.X_OK):
        mode = oct(stat.S_IMODE(info.st_mode))
        if info.st_uid == os.geteuid():
            return Unwritable(path, READ_ONLY_MODE, f"is read-only (mode {mode})",
                              f"make it writable with `chmod u+w {path}`")
        return Unwritable(path, NOT_OWNER,
                          f"belongs to uid {info.st_uid} (mode {mode}), not to uid {os.geteuid()}",
                          "run patchops as its owner (root on vendor images)")
    return None


def first_unwritable(folders: Iterable[Path], files: Iterable[Path]) -> Optional[Unwritable]:
    """Return the first of `folders` (entries replaced) or `files` (replaced) patchops cannot write."""
    for path in folders:
        found = check(path, folder=True)
        if found:
            return found
    for path in files:
        found = check(path, folder=False)
        if found:
            return found
    return None


def _attr_flags(path: Path) -> int:
    """Return the inode flags chattr sets, 0 where the filesystem has none (ENOTTY)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return 0
    try:
        buf = array.array("i", [0])  # the kernel writes an int, whatever the macro says
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buf, True)
        return buf[0]
    except OSError:
        return 0
    finally:
        os.close(fd)


def _mount_point(path: Path) -> Path:
    """Return the mount point holding `path` (a bind mount of a folder onto itself included)."""
    real = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as handle:
            points = [line.split()[4].replace("\\040", " ") for line in handle]
    except OSError:
        points = []
    inside = [p for p in points if real == p or real.startswith(p.rstrip("/") + "/")]
    if inside:
        return Path(max(inside, key=len))
    found = Path(real)
    while not os.path.ismount(found) and found.parent != found:
        found = found.parent
    return found
