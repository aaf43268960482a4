"""Facts of a vLLM copy on disk: extracted once, then read back while its sources are unchanged.

A cache entry (under $PATCHOPS_CACHE/facts) is two files: `NAME.json` lists every file
extraction consulted, present or absent, with the sha256 of its bytes and its stat stamp,
and the digest of that list; `NAME.facts.json` holds the facts of that digest. A hit reads
both and stats those files, hashing only those whose stamp moved; a cached lint result asks
only the first (the facts are two thirds of the bytes a hit would read). A miss asks facts/vouch.py,
which takes a release's facts for the groups whose files are the release's; the `ast` readers
(`facts_extract`) load only for the others.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from patchops.core.cache import cache_root, write_json
from patchops.core.digest_cache import RACY_SECONDS

if TYPE_CHECKING:  # a cached lint result checks an entry without loading Facts
    from patchops.lint.facts.model import Facts


def extract_facts(site_dir: Path, extra_paths: Sequence[Path] = ()) -> Facts:
    """Read the facts of the vLLM copy in `site_dir` (the folder holding `vllm/`), uncached.

    `extra_paths` are further import roots searched for `flashinfer`.
    """
    from patchops.lint import extract as facts_extract

    return facts_extract.extract(Path(site_dir), extra_paths)[0]


def facts_cache_dir() -> Path:
    """Return $PATCHOPS_CACHE/facts, else ~/.cache/patchops/facts."""
    return cache_root() / "facts"


def _extractor_stamp() -> List[Any]:
    """Identify the extractor code, so an upgraded patchops ignores older cache entries."""
    from patchops.lint.facts.model import FACTS_SCHEMA

    stamp: List[Any] = [FACTS_SCHEMA]
    lint = Path(__file__).resolve().parents[1]
    for path in [lint / "facts" / "model.py", lint / "facts" / "vouch.py", *sorted((lint / "extract").glob("*.py"))]:
        stamp.append(_stat_list(path))
    return stamp


def _cache_path(site: Path, extra_paths: Sequence[Path]) -> Path:
    """Name a copy's cache entry by checksums (no OpenSSL to load): a hit checks the folder and
    extra roots the entry records, so a clash costs an extraction, never wrong facts."""
    key = "\0".join([str(site)] + [str(Path(p).resolve()) for p in extra_paths]).encode("utf-8", "surrogateescape")
    return facts_cache_dir() / f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}.json"


def _facts_path(entry_path: Path) -> Path:
    return entry_path.with_suffix(".facts.json")


def _fingerprint(path: Path) -> Optional[str]:
    """Return the sha256 of a file's bytes (of a folder's names), None when absent.

    By content, not mtime: vendor images often carry one fixed mtime for every file. A
    folder's names say whether a package (flashinfer) came or went beside the copy. Only the
    presence of a compiled extension matters (flash-attention), and it weighs hundreds of MB.
    """
    import hashlib  # only when a file is read again: a hit on unchanged stamps needs none

    try:
        if path.suffix == ".so":
            return "present" if path.is_file() else None
        if path.is_dir():
            return hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _fingerprints(site: Path, rels: Sequence[str], extras: Sequence[str],
                  hashed: Optional[Dict[str, str]] = None) -> Dict[str, Dict[str, Optional[str]]]:
    """Fingerprint each input, taking the sha256 of those in `hashed` (just computed) as found."""
    hashed = hashed or {}
    return {"inputs": {rel: hashed[rel] if rel in hashed else _fingerprint(site / rel) for rel in rels},
            "extras": {path: _fingerprint(Path(path)) for path in extras}}




def _file_stamp(path: "os.PathLike[str] | str") -> Optional[List[int]]:
    """Return what any write to `path` moves: device, inode, size, mtime and ctime."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _stamps(site: Path, rels: Sequence[str], hashed_at: float) -> Dict[str, List[int]]:
    """Return the stamps of the inputs hashed at `hashed_at`, leaving out racily clean ones."""
    stamps = {}
    for rel in rels:
        stamp = _file_stamp(site / rel)
        if stamp is not None and stamp[4] / 1e9 < hashed_at - RACY_SECONDS:
            stamps[rel] = stamp
    return stamps


def _inputs_read_again(site: Path, recorded: Dict[str, Dict[str, Optional[str]]],
                       stamps: Dict[str, List[int]]) -> Optional[List[str]]:
    """Return the inputs whose stamp moved and whose content is as recorded; None if one changed.

    Any write moves a file's ctime, which no user can set back, so a file whose stamp is
    unchanged is not read again (git's index and patching/verify.py do the same); vendor images that
    fix every mtime are still caught, by ctime and by content.
    """
    read = []
    root = str(site)
    for rel, digest in recorded["inputs"].items():
        now = _file_stamp(os.path.join(root, rel))  # strings: a Path per input costs more than its stat
        if (now is None and digest is None) or (now is not None and now == stamps.get(rel)):
            continue  # still absent, or written by nobody since it was hashed
        if _fingerprint(site / rel) != digest:
            return None
        if now is not None:
            read.append(rel)
    if {p: _fingerprint(Path(p)) for p in recorded["extras"]} != recorded["extras"]:
        return None
    return read


def _stat_list(path: Path) -> Optional[List[int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def facts_for_copy(site_dir: Path, extra_paths: Sequence[Path] = ()) -> Facts:
    """Return the facts of the copy in `site_dir`, from the cache when its sources are unchanged.

    The cache entry lists every file extraction consulted (present or absent) with the
    sha256 of its bytes and its stat stamp; a hit costs reading the entry and its facts and a
    stat of those files (hashing only those whose stamp moved, and then re-stamping them). A lint run
    whose result is cached records the entry, not those reads: its hit asks still_answers().
    """
    from patchops.lint import result_cache
    from patchops.lint.facts.model import Facts

    site = Path(site_dir).resolve()
    extras = [str(Path(p).resolve()) for p in extra_paths]
    with result_cache.unrecorded():
        entry, facts = _entry_for(site, extra_paths)
    result_cache.vouch("facts", str(site), [extras, entry["digest"]])
    return Facts.from_dict(facts)


def still_answers(site: str, extras: List[str], digest: str) -> bool:
    """Return whether the cache entry of `site` is the one `digest` names and its files are unchanged."""
    try:
        entry = json.loads(_cache_path(Path(site), extras).read_text(encoding="utf-8"))
        return entry.get("site") == site and list(entry["fingerprints"]["extras"]) == extras and \
            entry["digest"] == digest == _digest(entry["fingerprints"]) and \
            _inputs_read_again(Path(site), entry["fingerprints"], entry.get("stamps") or {}) is not None
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _digest(fingerprints: Dict[str, Any]) -> str:
    text = json.dumps(fingerprints, sort_keys=True).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}"


def _entry_for(site: Path, extra_paths: Sequence[Path]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Return the cache entry of the copy in `site` and its facts, extracting (and storing) them when stale."""
    import time

    path = _cache_path(site, extra_paths)
    stamp = _extractor_stamp()
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        stamps = entry.get("stamps") or {}
        hashed_at = time.time()
        read = None
        if entry.get("stamp") == stamp and entry.get("site") == str(site) and \
                list(entry["fingerprints"]["extras"]) == [str(Path(p).resolve()) for p in extra_paths] and \
                entry["digest"] == _digest(entry["fingerprints"]):
            read = _inputs_read_again(site, entry["fingerprints"], stamps)
        if read is not None:
            stored = json.loads(_facts_path(path).read_text(encoding="utf-8"))
            if stored["digest"] == entry["digest"]:
                fresh = _stamps(site, read, hashed_at)
                if fresh:  # stamp what was read again and is no longer racily clean
                    entry["stamps"] = {**stamps, **fresh}
                    write_json(path, entry)
                return entry, stored["facts"]
    except (OSError, ValueError, KeyError, TypeError):
        pass

    from patchops.lint.facts import vouch

    hashed_at = time.time()
    facts, inputs, hashed = vouch.read_facts(site, extra_paths)
    fingerprints = _fingerprints(site, sorted(inputs), [str(Path(p).resolve()) for p in extra_paths], hashed)
    entry = {"stamp": stamp, "site": str(site), "fingerprints": fingerprints, "digest": _digest(fingerprints),
             "stamps": _stamps(site, sorted(inputs), hashed_at)}
    # The facts first: an entry is never written before the facts of its digest.
    # A read-only home: facts are still correct, only slower next time.
    data = facts.to_dict()
    write_json(_facts_path(path), {"digest": entry["digest"], "facts": data})
    write_json(path, entry)
    return entry, data
