"""Errors a user can act on: each message names the file (and line) and what to do."""

from typing import Optional


class PatchopsError(Exception):
    """Base class; the CLI prints `error: <message>` and exits with `exit_code`."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(PatchopsError):
    """A command line that asks for nothing sensible (no file to lint, no patchset to roll back)."""


class PatchsetError(PatchopsError):
    """A patchset file is invalid, unknown, or does not fit the vLLM it targets."""


class DriftError(PatchopsError):
    """A target file is neither pristine nor in the wanted state, or changed since patchops wrote it."""

    exit_code = 3


class StoreError(PatchopsError):
    """The backup store or journal is missing, locked or fails its hash check."""

    exit_code = 4


class LockedError(StoreError):
    """Another patchops holds the store's lock."""


class LinkError(StoreError):
    """A store path, or a target's path inside the copy, is a symbolic link patchops will not follow.

    Following it would let whoever can write to site-packages make patchops (often root)
    overwrite or delete a file anywhere.
    """


class FileIOError(PatchopsError):
    """Reading or writing a file failed (disk full, I/O error, read-only, permission)."""

    exit_code = 5

    def __init__(self, message: str, errno: Optional[int] = None):
        super().__init__(message)
        self.errno = errno


class LocateError(PatchopsError):
    """No vLLM copy, or an interpreter that could not report its sys.path."""


class LintInputError(PatchopsError):
    """A serve spec, vLLM config or launch command that cannot be read."""
