"""Check every file of a vLLM copy against the hash pip recorded for it in RECORD.

Every wheel install writes `<site>/vllm-X.dist-info/RECORD`: one `path,algo=digest,size` line
per file, the digest urlsafe base64 without padding (PEP 376, PEP 627). Like `debsums`, this
compares what is on disk with it, and tells apart the files patchops itself rewrote (its
store records what it wrote), so a drift check can ignore them.

Fast on a full 0.33.0 copy (5,800 files, 840 MB): a size that differs from RECORD needs no
hash; a file whose inode, size, mtime and ctime are those it had when an earlier run hashed it
gets that run's digest (git's index does the same: any write moves ctime, which no user can
set back); the rest are hashed, largest first, by a thread pool when there is enough to hash
(hashlib releases the GIL on large buffers). The digests are cached in
$PATCHOPS_CACHE/verify/, outside the copy.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from patchops.core.digest_cache import UNREADABLE, DigestCache
from patchops.core.errors import PatchopsError
from patchops.host.locate import distinct_copies
from patchops.store.site_store import Store

MODIFIED = "modified"   # differs from RECORD and patchops did not write it
MISSING = "missing"     # listed in RECORD, not on disk
EXTRA = "extra"         # a .py file in the package that RECORD does not list
PATCHED = "patched"     # patchops wrote it, over a file that matched RECORD

# Below this many bytes to hash, starting threads costs more than it saves.
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class RecordEntry:
    """One RECORD line: where, which hash (hex), how big (None when RECORD omits it)."""

    path: str          # relative to the site dir, forward slashes, as RECORD spells it
    algorithm: str     # "sha256"
    digest: str        # hex
    size: Optional[int]


@dataclass(frozen=True)
class FileFinding:
    """One file that differs from RECORD, or that patchops rewrote."""

    path: str                       # relative to the site dir: vllm/engine/arg_utils.py
    state: str                      # modified | missing | extra | patched
    detail: str
    patchsets: Tuple[str, ...] = ()  # for patched files (and files changed after patchops)


@dataclass(frozen=True)
class CopyVerification:
    """One copy checked against its RECORD."""

    site_dir: Path
    version: Optional[str]
    record: Optional[Path]
    listed: int                     # RECORD entries with a hash, inside the site dir
    hashed: int                     # files whose hash had to be computed
    findings: Tuple[FileFinding, ...]
    skipped: Tuple[str, ...] = ()   # RECORD entries outside the site dir (console scripts)
    error: Optional[str] = None     # why the copy could not be verified

    @property
    def differs(self) -> bool:
        """Say whether anything differs that patchops did not write."""
        return any(f.state != PATCHED for f in self.findings)


def b64_digest_to_hex(text: str) -> str:
    """Return the hex form of a RECORD digest (urlsafe base64, padding dropped)."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).hex()


def read_record(path: Path) -> List[RecordEntry]:
    """Parse a RECORD file; entries without a hash (RECORD itself, .pyc files) are left out."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PatchopsError(f"{path}: cannot read RECORD: {getattr(exc, 'strerror', None) or exc}") from None
    entries = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), 1):
        if not row or not row[0]:
            continue
        if len(row) != 3:
            raise PatchopsError(f"{path}:{number}: not a RECORD line (path,hash,size): {','.join(row)!r}")
        name, hashed, size = row
        if not hashed:
            continue
        algorithm, _, digest = hashed.partition("=")
        if algorithm not in hashlib.algorithms_guaranteed or not digest:
            raise PatchopsError(f"{path}:{number}: hash {hashed!r} of {name} is not algorithm=digest")
        try:
            hex_digest = b64_digest_to_hex(digest)
        except ValueError:
            raise PatchopsError(f"{path}:{number}: hash of {name} is not urlsafe base64") from None
        entries.append(RecordEntry(name, algorithm, hex_digest, int(size) if size.isdigit() else None))
    return entries


def find_record(site_dir: Path, version: Optional[str], package: str = "vllm") -> Path:
    """Return the RECORD of `package` in `site_dir`, the one of `version` if several exist."""
    found = sorted(site_dir.glob(f"{package}-*.dist-info/RECORD"))
    if not found:
        raise PatchopsError(
            f"{site_dir}: no {package}-*.dist-info/RECORD: this copy was not installed by pip "
            f"from a wheel (a vendor image or `setup.py install`?), so there is no record of "
            f"what was installed to check it against")
    if len(found) == 1:
        return found[0]
    exact = [p for p in found if version and p.parent.name == f"{package}-{version}.dist-info"]
    if len(exact) == 1:
        return exact[0]
    names = ", ".join(p.parent.name for p in found)
    raise PatchopsError(f"{site_dir}: several {package} dist-info folders ({names}) and none "
                        f"matches vLLM {version or 'unknown'}; remove the stale ones")


def verify_copy(site_dir: Path, version: Optional[str], package: str = "vllm",
                workers: Optional[int] = None, cache: bool = True) -> CopyVerification:
    """Check one copy's files against its RECORD; an unverifiable copy says why in `error`.

    With `cache`, digests of files unchanged since an earlier run are reused (see above).
    """
    site_dir = Path(site_dir)
    try:
        record = find_record(site_dir, version, package)
        entries = read_record(record)
    except PatchopsError as exc:
        return CopyVerification(site_dir, version, None, 0, 0, (), error=exc.message)
    root = os.path.realpath(site_dir)
    inside: List[Tuple[RecordEntry, str]] = []
    skipped: List[str] = []
    for entry in entries:
        full = os.path.normpath(os.path.join(root, entry.path))
        if full.startswith(root + os.sep):
            inside.append((entry, full))
        else:
            skipped.append(entry.path)

    findings: List[FileFinding] = []
    known = DigestCache(root if cache else None, "verify")
    checked: List[Tuple[RecordEntry, str, str]] = []       # (entry, path, digest)
    to_hash: List[Tuple[RecordEntry, str, os.stat_result]] = []
    for entry, full in inside:
        try:
            info = os.stat(full)
        except FileNotFoundError:
            findings.append(FileFinding(entry.path, MISSING, "listed in RECORD, not on disk"))
            continue
        if entry.size is not None and info.st_size != entry.size:
            findings.append(FileFinding(entry.path, MODIFIED, f"{info.st_size} bytes, RECORD says {entry.size}"))
            continue
        digest = known.get(full, info, entry.algorithm)
        if digest is None:
            to_hash.append((entry, full, info))
        else:
            checked.append((entry, full, digest))
    digests = _hash_all([(entry.algorithm, full, info.st_size) for entry, full, info in to_hash], workers)
    for (entry, full, info), digest in zip(to_hash, digests):
        known.put(full, info, entry.algorithm, digest)
        checked.append((entry, full, digest))
    known.save()
    current: Dict[str, str] = {}
    for entry, full, digest in sorted(checked, key=lambda item: item[0].path):
        if digest != entry.digest:
            current[entry.path] = digest
            detail = digest if digest.startswith(UNREADABLE) else \
                f"{entry.algorithm} {digest[:12]}, RECORD says {entry.digest[:12]}"
            findings.append(FileFinding(entry.path, MODIFIED, detail))
    findings = _mark_patchops_writes(site_dir, package, findings, {e.path: e for e, _ in inside}, current)
    listed = {entry.path for entry, _ in inside}
    findings += [FileFinding(rel, EXTRA, "a .py file RECORD does not list")
                 for rel in _python_files(site_dir, _top_dirs(listed)) if rel not in listed]
    findings.sort(key=lambda f: f.path)
    return CopyVerification(site_dir, version, record, len(inside), len(to_hash), tuple(findings),
                            tuple(skipped))


def verify(copies: Sequence, workers: Optional[int] = None) -> List[CopyVerification]:
    """Check each copy (a patchops.host.locate.VllmCopy), once per set of files reached."""
    return [verify_copy(copy.site_dir, copy.version, copy.package_dir.name, workers)
            for copy in distinct_copies(copies)]


def _hash_all(items: Sequence[Tuple[str, str, int]], workers: Optional[int]) -> List[str]:
    """Return the hex digest of each (algorithm, path, size); threads when it pays."""
    total = sum(size for _, _, size in items)
    workers = workers or min(8, os.cpu_count() or 1)
    if workers < 2 or total < PARALLEL_MIN_BYTES:
        return [_hash_file(algorithm, path) for algorithm, path, _ in items]
    # Largest first, so one big extension module does not finish last on its own.
    order = sorted(range(len(items)), key=lambda i: -items[i][2])
    out: List[str] = [""] * len(items)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for i, digest in zip(order, pool.map(lambda i: _hash_file(items[i][0], items[i][1]), order)):
            out[i] = digest
    return out


def hash_bytes(algorithm: str, data: bytes) -> str:
    """Return the hex digest of `data`, as RECORD entries are compared."""
    return hashlib.new(algorithm, data).hexdigest()


def _hash_file(algorithm: str, path: str) -> str:
    digest = hashlib.new(algorithm)
    try:
        with open(path, "rb") as handle:
            while True:
                chunk = handle.read(CHUNK)
                if not chunk:
                    break
                digest.update(chunk)
    except OSError as exc:
        return f"{UNREADABLE}{exc.strerror or exc}"
    return digest.hexdigest()


def _mark_patchops_writes(site_dir: Path, package: str, findings: List[FileFinding],
                          entries: Dict[str, RecordEntry], current: Dict[str, str]) -> List[FileFinding]:
    """Turn a modified file that holds what patchops wrote over the RECORD bytes into `patched`."""
    store = Store(site_dir, package)
    if not store.exists():
        return findings
    state = store.read_state()
    out = []
    for finding in findings:
        rel = finding.path[len(package) + 1:] if finding.path.startswith(package + "/") else None
        entry = state.files.get(rel) if rel else None
        record = entries.get(finding.path)
        if entry is None or finding.state != MODIFIED or record is None:
            out.append(finding)
            continue
        names = tuple(entry.patchsets)
        digest = current.get(finding.path) or _hash_file("sha256", str(site_dir / finding.path))
        if record.algorithm != "sha256":
            out.append(finding)
        elif digest == entry.written and entry.original == record.digest:
            out.append(FileFinding(finding.path, PATCHED, "rewritten by patchops", names))
        elif digest == entry.written:
            out.append(FileFinding(finding.path, MODIFIED, "patchops rewrote it, but the file it "
                                   "started from already differed from RECORD", names))
        else:
            out.append(FileFinding(finding.path, MODIFIED, finding.detail + "; changed since "
                                   "patchops wrote it", names))
    return out


def _top_dirs(listed: Iterable[str]) -> List[str]:
    """Return the top-level package folders RECORD covers (not dist-info, not .data)."""
    tops = {path.split("/", 1)[0] for path in listed if "/" in path}
    return sorted(t for t in tops if not t.endswith((".dist-info", ".data")) and t != "__pycache__")


def _python_files(site_dir: Path, tops: Sequence[str]) -> List[str]:
    """Return every .py file under the `tops` folders, relative to the site dir."""
    found: List[str] = []
    stack = [(site_dir / top, top) for top in tops]
    while stack:
        folder, rel = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append((Path(entry.path), f"{rel}/{entry.name}"))
            elif entry.name.endswith(".py"):
                found.append(f"{rel}/{entry.name}")
    return found
