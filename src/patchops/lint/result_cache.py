"""Whole lint results, cached by everything they were computed from (as ruff caches its own).

A hit answers without importing YAML, the rules or the facts. The key holds what a run is
given: the options, the detected hardware, the relevant environment, the working folder, the
interpreter and its import path, and patchops's own source and parsing libraries. What a run
reads from disk is not known before it runs (the spec names a model whose config.json names a
quantization file; the winning vLLM copy depends on listings of the import path), so a miss
runs inside a ReadLog, which records every stat, listing and read the code makes, and a hit
holds only while each still answers the same: a read file by its stamp or else its sha256, a
listing by its names, a stat by what it showed. Reads under patchops itself (its source stamp
is in the key) and the cache root are not recorded; the facts cache vouches for what it reads
(a hit asks facts_cache.still_answers(), which knows what its own stamps mean). A file read
whole in binary (the input) is hashed as it is read: storing a run does not read it again.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import stat as stat_kinds
import sys
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from patchops.core.cache import cache_root, write_json
from patchops.core.digest_cache import RACY_SECONDS

SCHEMA = 2
# The environment lint reads: the settings and cache (PATCHOPS_*), the Hugging Face cache that
# holds the model's config.json (HF_*, HOME), the import path (PYTHON*, VIRTUAL_ENV), the
# interpreters and tools found on PATH. tests/lint/test_result_cache.py checks that every
# variable the lint code names is covered.
ENV_PREFIXES = ("PATCHOPS_", "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "VLLM_", "PYTHON")
ENV_NAMES = ("HOME", "PATH", "VIRTUAL_ENV", "XDG_CACHE_HOME")
# Parsing libraries whose version changes what lint reads (YAML 1.1 booleans, version order).
LIBRARIES = ("yaml", "packaging")
PACKAGE = Path(__file__).resolve().parents[1]


def results_dir() -> Path:
    return cache_root() / "lint-results"


def key_of(given: Dict[str, Any]) -> Dict[str, Any]:
    """Return the key of a run given `given` (its options, JSON-ready) in this process."""
    return {"schema": SCHEMA, "given": given, "cwd": os.getcwd(), "python": sys.executable,
            "sys_path": list(sys.path), "env": relevant_env(os.environ),
            "patchops": source_stamp(PACKAGE), "libraries": library_stamps(sys.path)}


def relevant_env(env) -> Dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if k.startswith(ENV_PREFIXES) or k in ENV_NAMES}


def source_stamp(root: Path) -> List[Any]:
    """Return (path, size, mtime) of every file of patchops's package: an edit or upgrade moves it."""
    found: List[Any] = []
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        pending.append(entry.path)
                elif not entry.name.endswith(".pyc"):
                    info = entry.stat()
                    found.append([entry.path[len(str(root)):], info.st_size, info.st_mtime_ns])
    return found


def library_stamps(path: List[str]) -> Dict[str, Any]:
    """Return where each parsing library would be imported from and its __init__.py's stamp."""
    found: Dict[str, Any] = {}
    for name in LIBRARIES:
        for entry in path:
            init = os.path.join(entry or ".", name, "__init__.py")
            try:
                info = os.stat(init)
            except OSError:
                continue
            found[name] = [init, info.st_size, info.st_mtime_ns]
            break
    return found


def _entry_path(key: Dict[str, Any]) -> Path:
    """Name an entry by checksums (no OpenSSL to load) of the inputs, options and folder.

    The entry holds the whole key and is compared whole; what moves on its own (the free GPU
    memory detection reports, the environment) replaces the entry instead of adding one.
    """
    named = {"given": {k: v for k, v in key["given"].items() if k != "hardware"}, "cwd": key["cwd"]}
    text = json.dumps(named, sort_keys=True).encode("utf-8", "surrogateescape")
    return results_dir() / f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}.json"


def lookup(key: Dict[str, Any]) -> Optional[List[Any]]:
    """Return the results stored under `key` if every read they were computed from still holds."""
    try:
        with open(_entry_path(key), encoding="utf-8") as handle:
            entry = json.load(handle)
        if entry.get("key") == json.loads(json.dumps(key)) and all(_holds(r) for r in entry["reads"]):
            return entry["results"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def store(key: Dict[str, Any], log: "ReadLog", results: List[Any]) -> None:
    """Store `results` under `key` with what `log` saw, unless something moved during the run."""
    reads = log.records()
    if reads is not None:
        write_json(_entry_path(key), {"key": key, "reads": reads, "results": results})


def cached(given: Dict[str, Any], compute: Callable[[], List[Any]], encode: Callable[[Any], Any],
           decode: Callable[[Any], Any]) -> List[Any]:
    """Return decoded cached results for `given`, else compute them under a ReadLog and store them."""
    key = key_of(given)
    found = lookup(key)
    if found is not None:
        return [decode(r) for r in found]
    with ReadLog(ignored=(cache_root(), PACKAGE)) as log:
        results = compute()
    store(key, log, [encode(r) for r in results])
    return results


def encode_result(result) -> Dict[str, Any]:
    """Return an api.LintResult as JSON-ready data (its findings with their fixes)."""
    from patchops.core.records import as_dict

    return as_dict(result)


def decode_result(result_class, data: Dict[str, Any]):
    """Rebuild a `result_class` (api.LintResult) from encode_result's data."""
    from patchops.lint.diagnostic import Diagnostic, Edit, Fix, NotRun

    def fix(found):
        if found is None:
            return None
        edits = tuple(Edit(e["start"], e["end"], e["content"], tuple(e["start_at"]), tuple(e["end_at"]),
                           e.get("file")) for e in found["edits"])
        return Fix(found["applicability"], edits, found["title"])

    diagnostics = [Diagnostic(**{**d, "fields": tuple(d["fields"]), "autofix": fix(d["autofix"])})
                   for d in data["diagnostics"]]
    return result_class(**{**data, "diagnostics": diagnostics,
                           "source_lines": tuple(data["source_lines"]),
                           "not_run": [NotRun(**n) for n in data["not_run"]]})


# ---------------------------------------------------------------- what the code saw


def _view(path: str, follow: bool) -> Optional[List[Any]]:
    """Return what a stat of `path` tells: absent (None), a folder, a link's target, a file's size and mtime.

    A folder's own mtime is left out: it moves with every entry added anywhere in it (/tmp),
    and what the code learns of its entries it learns from a listing, recorded as one. A
    file's ctime is left out too: a hard link made elsewhere moves it (wheel caches link
    big files), and code that reads the content has a read record, checked by hash.
    """
    try:
        info = _REAL["stat"](path) if follow else _REAL["lstat"](path)
    except OSError:
        return None
    if stat_kinds.S_ISDIR(info.st_mode):
        return ["dir"]
    if stat_kinds.S_ISLNK(info.st_mode):
        try:
            return ["link", os.readlink(path)]
        except OSError:
            return ["link", None]
    return ["file", info.st_mode, info.st_size, info.st_mtime_ns]


def _listing(path: str) -> Optional[List[str]]:
    """Return a folder's names, folders marked with a trailing `/`, sorted; None when unreadable."""
    try:
        with _REAL["scandir"](path) as entries:
            return sorted(e.name + ("/" if e.is_dir() else "") for e in entries)
    except OSError:
        return None


def _stamp(path: str) -> Optional[List[int]]:
    """Return what any write to a file moves: device, inode, size, mtime and ctime."""
    try:
        info = _REAL["stat"](path)
    except OSError:
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _digest(path: str) -> Optional[str]:
    import hashlib  # only on a miss, or when a read file's stamp moved

    try:
        with _REAL["open"](path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _holds(record: List[Any]) -> bool:
    """Return whether one recorded observation still holds."""
    kind, path, seen = record
    if kind == "stat":
        return _view(path, True) == seen
    if kind == "lstat":
        return _view(path, False) == seen
    if kind == "list":
        return _listing(path) == seen
    if kind == "facts":
        from patchops.lint.facts import cache as facts_cache

        return facts_cache.still_answers(path, *seen)
    if kind == "env":
        return os.environ.get(path) == seen
    if kind == "interpreter":
        from patchops.core.errors import PatchopsError
        from patchops.host.locate import locate

        try:
            return [list(e) for e in locate(python=path).search_path] == seen
        except PatchopsError:
            return False
    digest, stamp = seen
    now = _stamp(path)
    if now is not None and stamp is not None and now == stamp:
        return True
    return _digest(path) == digest


_REAL: Dict[str, Callable[..., Any]] = {"stat": os.stat, "lstat": os.lstat, "listdir": os.listdir,
                                        "scandir": os.scandir, "open": io.open}
_RUNNING: List["ReadLog"] = []  # the log of the run under way, if any
VOUCHED = ("facts", "interpreter")  # the kinds vouch() records, checked by their owners


@contextmanager
def unrecorded() -> Iterator[None]:
    """Leave out of the running log what the block reads: a vouch() answers for it instead."""
    log = _RUNNING[-1] if _RUNNING else None
    if log is not None:
        log.paused += 1
    try:
        yield
    finally:
        if log is not None:
            log.paused -= 1


def uncacheable() -> None:
    """Keep the run under way out of the cache: what it learnt came from outside the file system."""
    if _RUNNING:
        _RUNNING[-1].keyable = False


def vouch(kind: str, path: str, seen: Any) -> None:
    """Record in the running log an observation whose kind _holds() knows how to check again."""
    if _RUNNING:
        _RUNNING[-1].seen[(kind, path)] = seen


def _unordered(name: str) -> Callable[..., Any]:
    """Return io.BufferedReader's method `name`, which leaves the bytes hashed out of file order."""
    def method(self, *args):
        self._in_order = False
        return getattr(io.BufferedReader, name)(self, *args)
    return method


class _HashedRead(io.BufferedReader):
    """A file opened `rb` under a ReadLog, hashed as the code reads it: read in order to its
    end, its digest goes to the log (`digests`), which then need not read it again."""

    def __init__(self, file, full: str, log: "ReadLog"):
        import hashlib  # a ReadLog only runs on a miss

        super().__init__(io.FileIO(file, "rb"))
        self._hash, self._full, self._log = hashlib.sha256(), full, log
        self._in_order, self._at_end = True, False

    def read(self, size: Optional[int] = -1) -> bytes:
        data = super().read(size)
        self._hash.update(data)
        self._at_end = self._at_end or size is None or size < 0 or len(data) < size
        return data

    seek, readinto, read1 = _unordered("seek"), _unordered("readinto"), _unordered("read1")
    readline, readlines, __next__ = _unordered("readline"), _unordered("readlines"), _unordered("__next__")

    def close(self) -> None:
        if self._in_order and self._at_end and not self.closed:
            self._log.digests.setdefault(self._full, self._hash.hexdigest())
        super().close()


class ReadLog:
    """Record what the file system tells the code run inside `with ReadLog(): ...`.

    It wraps os.stat, os.lstat, os.listdir, os.scandir and open (pathlib, glob and os.path
    all go through them; the import system does not, it has its own). Reads under `ignored`
    folders are not recorded; an access by file descriptor cannot be, and makes the run
    uncacheable.
    """

    def __init__(self, ignored=()):
        self.ignored = tuple(os.path.join(os.path.abspath(p), "") for p in ignored)
        self.seen: Dict[Tuple[str, str], Any] = {}
        self.opened: Dict[str, Optional[List[int]]] = {}
        self.digests: Dict[str, str] = {}   # files read whole as _HashedRead: their sha256
        self.keyable = True
        self.paused = 0

    def _path(self, path, dir_fd=None) -> Optional[str]:
        if self.paused:
            return None
        if dir_fd is not None or isinstance(path, int):
            self.keyable = False
            return None
        full = os.path.abspath(os.fsdecode(path))
        return None if full.startswith(self.ignored) or full + os.sep in self.ignored else full

    def _note(self, kind: str, path, dir_fd=None, follow=True) -> None:
        full = self._path(path, dir_fd)
        if full is not None and (kind, full) not in self.seen:
            self.seen[(kind, full)] = _listing(full) if kind == "list" else _view(full, follow)

    def __enter__(self) -> "ReadLog":
        log = self

        def stat(path, *, dir_fd=None, follow_symlinks=True):
            log._note("stat" if follow_symlinks else "lstat", path, dir_fd, follow_symlinks)
            return _REAL["stat"](path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

        def lstat(path, *, dir_fd=None):
            log._note("lstat", path, dir_fd, False)
            return _REAL["lstat"](path, dir_fd=dir_fd)

        def listdir(path="."):
            log._note("list", path)
            return _REAL["listdir"](path)

        def scandir(path="."):
            log._note("list", path)
            return _REAL["scandir"](path)

        def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,
                  closefd=True, opener=None):
            full = log._path(file) if not isinstance(file, int) and not set(mode) & set("wax+") else None
            if full is not None and full not in log.opened:
                log.opened[full] = _stamp(full)
                log._note("stat", full)
            if full is not None and sorted(mode) == ["b", "r"] and (buffering, closefd, opener) == (-1, True, None):
                return _HashedRead(file, full, log)
            return _REAL["open"](file, mode, buffering, encoding, errors, newline, closefd, opener)

        os.stat, os.lstat, os.listdir, os.scandir = stat, lstat, listdir, scandir
        builtins.open = io.open = open_
        _RUNNING.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _RUNNING.remove(self)
        os.stat, os.lstat, os.listdir, os.scandir = (_REAL[n] for n in ("stat", "lstat", "listdir", "scandir"))
        builtins.open = io.open = _REAL["open"]

    def records(self) -> Optional[List[Any]]:
        """Return the observations as stored, None when the run cannot be cached.

        Each file system observation is checked once more here: a file that moved while lint
        ran was read in one state and would be recorded in another. A read file is checked by
        its stamp at open, its digest that of the bytes read when read whole (a racy file is not
        read again); what was vouched for was just answered by its owner.
        """
        if not self.keyable:
            return None
        records: List[Any] = [[kind, path, seen] for (kind, path), seen in sorted(self.seen.items())]
        now = time.time()
        for path, stamp in sorted(self.opened.items()):
            if stamp is None:
                continue  # it could not be opened: the stat recorded beside it says so
            racy = stamp[4] / 1e9 >= now - RACY_SECONDS
            digest = self.digests.get(path) or _digest(path)
            records.append(["read", path, [digest, None if racy else stamp]])
            if _stamp(path) != stamp:
                return None
        return records if all(_holds(r) for r in records if r[0] not in (*VOUCHED, "read")) else None
