"""A copy's facts vouched for by its files: a release's own facts where its files are the release's.

Extracting a copy's facts costs seconds (0.33.0: about 9 s of `ast`), and for an unmodified
release they are the facts patchops ships. scripts/generate_facts.py records per release what each
fact group (extract/readers.py) reads: the sha256 of every file, the absence of every file it
looked for, the names of every folder it lists, and the notes it gives (reads/<release>.json.gz).
Here a copy's files are checked against that record, their digests trusted while their stat
stamps hold (core/digest_cache.py): groups whose files all agree take the release's facts, the
others are read again from the copy (a vendor fork, an applied patchset). Facts the install
alone decides (its version, the packages beside it) are always read.
"""

from __future__ import annotations

import fnmatch
import gzip
import json
import os
import stat
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from patchops.core.digest_cache import DigestCache, sha256
from patchops.core.errors import PatchopsError
from patchops.lint.facts.model import FACTS_SCHEMA, Facts, HowRead, ReadKind, facts_for_version

READS_DIR = Path(__file__).resolve().parent / "reads"
FOLDER = "folder"  # what a looked-up folder records: it exists (its names are listings of their own)


def digest_of(site: Path, key: str, cache: DigestCache) -> Optional[str]:
    """Return what `key` is in `site` now: a file's sha256, FOLDER, a listing's digest, None if absent.

    A key with a `*` is a listing (`vllm/platforms/*.py`, Source.names): the names it matches.
    """
    folder, _, pattern = key.rpartition("/")
    if "*" in pattern:
        try:
            names = sorted(fnmatch.filter(os.listdir(site / folder), pattern))
        except OSError:
            names = []
        return sha256("\n".join(names).encode("utf-8", "surrogateescape"))
    path = os.path.join(site, key)
    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return FOLDER
    found = cache.get(key, info, "sha256")
    if found is None:
        try:
            with open(path, "rb") as handle:
                found = sha256(handle.read())
        except OSError:
            return None
        cache.put(key, info, "sha256", found)
    return found


def group_reads(site: Path) -> Dict[str, Any]:
    """Return what each fact group reads of the copy in `site`, each group read alone.

    A group read after others would find files already parsed and not record them; alone,
    it records everything its facts depend on (scripts/generate_facts.py, per release).
    """
    from patchops.lint.extract.readers import GROUPS, Reading

    files: Dict[str, Optional[str]] = {}
    groups: Dict[str, Any] = {}
    cache = DigestCache(None, "vouch")
    for group in GROUPS:
        reading, notes = Reading.alone(site, group.name)
        keys = sorted(reading.src.consulted | set(reading.src.listings))
        for key in keys:
            files.setdefault(key, digest_of(site, key, cache))
        groups[group.name] = {"files": keys, "notes": notes, "parsed": sorted(set(reading.src.notes))}
    return {"schema": FACTS_SCHEMA, "files": dict(sorted(files.items())), "groups": groups}


@lru_cache(maxsize=4)
def release_reads(release: str) -> Optional[Dict[str, Any]]:
    """Return the reads recorded for `release`, decompressed once; None without a record."""
    try:
        data = json.loads(gzip.decompress((READS_DIR / f"{release}.json.gz").read_bytes()))
    except (OSError, ValueError):
        return None
    return data if data.get("schema") == FACTS_SCHEMA else None


def current(site: Path, reads: Dict[str, Any]) -> Dict[str, Optional[str]]:
    """Return what each file, folder and listing the record names is in `site` now (digest_of)."""
    cache = DigestCache(str(site), "vouch")
    now = {key: digest_of(site, key, cache) for key in reads["files"]}
    cache.save()
    return now


def changed_groups(reads: Dict[str, Any], now: Dict[str, Optional[str]]) -> List[str]:
    """Return the names of the groups some of whose files are not as recorded, sorted."""
    differ = {key for key, want in reads["files"].items() if now[key] != want}
    return sorted(name for name, group in reads["groups"].items() if differ.intersection(group["files"]))


def read_facts(site: Path, extra_paths: Sequence[Path] = ()) -> Tuple[Facts, List[str], Dict[str, str]]:
    """Return the facts of the copy in `site`, the files they depend on, and the sha256 of those
    it hashed (the facts cache hashes each input; it need not hash these twice).

    The release to compare with is the one the copy's version names (facts_for_version);
    a copy of no release patchops has a record of is extracted whole.
    """
    from patchops.host.installed_version import read_version
    from patchops.lint.extract.readers import GROUPS, Reading

    reading = Reading(site, extra_paths)
    every = [group.name for group in GROUPS]
    release, reads = _release_of(read_version(site)[0])
    if release is None or reads is None or set(reads["groups"]) != set(every):
        return reading.facts(every).replace(read=HowRead(ReadKind.EXTRACTED)), sorted(reading.src.consulted), {}
    now = current(site, reads)
    changed = changed_groups(reads, now)
    facts = reading.facts(changed, release, reads["groups"])
    label = HowRead(ReadKind.VOUCHED) if not changed else HowRead(ReadKind.EXTRACTED) \
        if len(changed) == len(every) else HowRead(ReadKind.PARTIAL, len(changed), len(every))
    # The facts cache hashes files and folders; a listing's folder stands for the listing.
    inputs = reading.src.consulted | {key.rpartition("/")[0] or "." if "*" in key else key for key in reads["files"]}
    hashed = {key: digest for key, digest in now.items() if digest is not None and digest != FOLDER
              and "*" not in key}
    return facts.replace(read=label), sorted(inputs), hashed


def _release_of(version: Optional[str]) -> Tuple[Optional[Facts], Optional[Dict[str, Any]]]:
    if not version:
        return None, None
    try:
        release = facts_for_version(version)
    except PatchopsError:  # older than any release shipped: nothing to vouch with
        return None, None
    return release, release_reads(release.version)
