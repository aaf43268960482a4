"""Open, read and replace files relative to a folder fd, never following a symbolic link.

The store and the target files sit in site-packages, which vendor images often make group
writable; patchops runs as root. A link planted at `.patchops/state.json` (or any path patchops
writes) must not make it write elsewhere, so every open here is `O_NOFOLLOW` relative to a folder
it opened itself, and a link is refused with a message naming it and where it points. Every
failing syscall becomes a FileIOError naming the file the user knows (never a temp file).
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from pathlib import Path
from typing import List, Optional

from patchops.store import faults, writability
from patchops.core.errors import FileIOError, LinkError

TMP_SUFFIX = ".patchops-tmp"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def link_error(path: Path, what: str = "patchops store") -> LinkError:
    """Return the refusal for a link at `path`, saying where it points."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return LinkError(f"{path} is a symbolic link (to {target}); patchops refuses to follow links "
                     f"in its {what}, since that would write outside the vLLM copy. Nothing was "
                     f"written. Remove the link (and check who can write to {path.parent})")


def io_error(exc: OSError, verb: str, path: Path) -> FileIOError:
    """Return a FileIOError for a failed syscall on `path`, with what to do about it."""
    reason = exc.strerror or str(exc)
    hint = ""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        found = writability.first_unwritable([path.parent], [path])
        hint = (f"; {found.message()}" if found else
                f"; run patchops as the owner of {path.parent} (root on vendor images)")
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "; free some space and run the command again"
    return FileIOError(f"cannot {verb} {path}: {reason}{hint}", exc.errno)


def _is_link(dir_fd: Optional[int], name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_dir(dir_fd: Optional[int], name: str, shown: Path, *, create: bool = False,
             what: str = "patchops store") -> Optional[int]:
    """Open folder `name` in `dir_fd` without following a link; None when absent (create=False)."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            return None
    except OSError as exc:
        if _is_link(dir_fd, name):
            raise link_error(shown, what) from exc
        raise io_error(exc, "open", shown) from exc
    try:
        faults.point("mkdir", shown)
        os.mkdir(name, 0o755, dir_fd=dir_fd)
    except FileExistsError:
        pass  # made by another patchops in between
    except OSError as exc:
        raise io_error(exc, "create", shown) from exc
    return open_dir(dir_fd, name, shown, what=what)


def open_path_dir(path: Path) -> int:
    """Open an absolute folder patchops resolved itself (links allowed: lib64 -> lib)."""
    try:
        return os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise io_error(exc, "open", path) from exc


def open_file(dir_fd: int, name: str, shown: Path, flags: int, mode: int = 0o644,
              what: str = "patchops store") -> int:
    """Open a file in `dir_fd` without following a link."""
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if _is_link(dir_fd, name):
            raise link_error(shown, what) from exc
        raise io_error(exc, "open", shown) from exc


def read_at(dir_fd: int, name: str, shown: Path, what: str = "patchops store") -> Optional[bytes]:
    """Return the file's bytes, None when it does not exist."""
    try:
        fd = open_file(dir_fd, name, shown, os.O_RDONLY, what=what)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError as exc:
        raise io_error(exc, "read", shown) from exc
    finally:
        os.close(fd)


def write_at(dir_fd: int, name: str, data: bytes, shown: Path, what: str = "patchops store") -> None:
    """Replace `name` in `dir_fd` with `data` so readers see the old or the new bytes, never a mix.

    Temp file in the same folder, write, fsync, the old file's mode and owner, rename, fsync
    the folder. A link at `name` is refused. A new file gets 0o666 minus the umask.
    """
    try:
        old: Optional[os.stat_result] = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    except OSError as exc:
        raise io_error(exc, "read", shown) from exc
    if old is not None and stat.S_ISLNK(old.st_mode):
        raise link_error(shown, what)
    tmp = f".{name}.{uuid.uuid4().hex[:12]}{TMP_SUFFIX}"
    fd = open_file(dir_fd, tmp, shown, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, what)
    try:
        try:
            faults.point("write", shown)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            faults.point("fsync", shown)
            os.fsync(fd)
            if old is not None:
                keep_owner(fd, old)
                # After chown: chown clears setuid/setgid bits, chmod puts them back.
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
            else:
                os.fchmod(fd, 0o666 & ~_umask())
        finally:
            os.close(fd)
        faults.point("rename", shown)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as exc:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise io_error(exc, "write", shown) from exc
        raise
    fsync_dir_fd(dir_fd, shown.parent)


def append_at(dir_fd: int, name: str, data: bytes, shown: Path, what: str = "patchops store") -> None:
    """Append `data` to `name` (created if missing) and fsync it before returning.

    A crash mid-append leaves a torn last line; `data` then starts on a fresh one.
    """
    try:
        fd = open_file(dir_fd, name, shown, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644, what)
    except FileNotFoundError as exc:
        raise io_error(exc, "write", shown) from exc
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        faults.point("append", shown)
        os.write(fd, data)
        faults.point("fsync", shown)
        os.fsync(fd)
    except OSError as exc:
        raise io_error(exc, "write", shown) from exc
    finally:
        os.close(fd)
    if not size:
        fsync_dir_fd(dir_fd, shown.parent)


def unlink_at(dir_fd: int, name: str, shown: Path) -> bool:
    """Remove `name` (a link is removed itself, never its target); False when it was absent."""
    try:
        faults.point("unlink", shown)
        os.unlink(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise io_error(exc, "remove", shown) from exc


def list_at(dir_fd: int) -> List[str]:
    """Return the names in a folder opened with open_dir (which stays open)."""
    return sorted(os.listdir(dir_fd))


def fsync_dir_fd(dir_fd: int, shown: Path) -> None:
    """Flush a folder's entry list, so a rename survives a power cut."""
    try:
        faults.point("dirsync", shown)
        os.fsync(dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.EBADF):  # a filesystem that cannot sync folders
            return
        raise io_error(exc, "flush folder", shown) from exc


def keep_owner(fd: int, old: os.stat_result) -> None:
    """Give the temp file the old file's owner: root must, anyone else does when allowed."""
    if (old.st_uid, old.st_gid) == (os.geteuid(), os.getegid()):
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except PermissionError:
        if os.geteuid() == 0:
            raise
        # Not root: keep the group at least when we belong to it, else the file is ours.
        try:
            os.fchown(fd, -1, old.st_gid)
        except PermissionError:
            pass


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
