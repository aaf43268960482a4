"""Errors a user can act on: each message names the file (and line) and what to do."""

from typing import Optional

# The exit codes every command uses, named once: api functions return them, the CLI exits with them.
OK = 0
PROBLEMS_FOUND = 1         # findings, a refusal, a fix --diff would make
USAGE_OR_INPUT_ERROR = 2   # a command line or an input patchops cannot act on
DRIFTED = 3
STORE_FAILED = 4
IO_ERROR = 5               # FileIOError: a read or write failed, naming the file


class PatchopsError(Exception):
    """Base class; the CLI prints `error: <message>` and exits with `exit_code`."""

    exit_code = USAGE_OR_INPUT_ERROR

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

    exit_code = DRIFTED


class StoreError(PatchopsError):
    """The backup store or journal is missing, locked or fails its hash check."""

    exit_code = STORE_FAILED


class LockedError(StoreError):
    """Another patchops holds the store's lock."""


class LinkError(StoreError):
    """A store path, or a target's path inside the copy, is a symbolic link patchops will not follow.

    Following it would let whoever can write to site-packages make patchops (often root)
    overwrite or delete a file anywhere.
    """


class FileIOError(PatchopsError):
    """Reading or writing a file failed (disk full, I/O error, read-only, permission)."""

    exit_code = IO_ERROR

    def __init__(self, message: str, errno: Optional[int] = None):
        super().__init__(message)
        self.errno = errno


class LocateError(PatchopsError):
    """No vLLM copy, or an interpreter that could not report its sys.path."""


class LintInputError(PatchopsError):
    """A serve spec, vLLM config or launch command that cannot be read."""
