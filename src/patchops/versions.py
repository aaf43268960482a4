"""vLLM versions as patchops compares them: by release number, tolerant of vendor spellings.

Vendor builds report versions PEP 440 cannot read (`0.8.5-corex.4.2`, `dev`); every range check
and comparison goes through here so none of them can crash on one.
"""

from __future__ import annotations

import re
from typing import Optional, Tuple, Union

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

_RELEASE_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
NEWEST = Version("999")  # an unreadable version (a source build's "dev") is taken as the newest


def parse_release(version: Optional[str]) -> Optional[Version]:
    """Return the release part ("0.6.3.post1" -> 0.6.3, "0.8.5-corex.4.2" -> 0.8.5), None if unreadable."""
    if not version:
        return None
    try:
        return Version(Version(version).base_version)
    except InvalidVersion:
        match = _RELEASE_RE.match(version)
        return Version(match.group(1)) if match else None


def parse_version(version: Optional[str]) -> Optional[Version]:
    """Return `version` as PEP 440 reads it (pre-releases kept), else its release part, else None."""
    try:
        return Version(version) if version else None
    except InvalidVersion:
        return parse_release(version)


def release(version: Optional[str]) -> Version:
    """Return the release part of `version`, NEWEST when it cannot be read."""
    return parse_release(version) or NEWEST


def release_tuple(version: Optional[str]) -> Tuple[int, int, int]:
    """Return (major, minor, micro) of `version`'s release part."""
    parts = tuple(release(version).release) + (0, 0, 0)
    return (parts[0], parts[1], parts[2])


def in_range(version: Optional[str], spec: Union[str, SpecifierSet]) -> bool:
    """Say whether `version`'s release is inside a PEP 440 range (an unreadable one is the newest)."""
    return SpecifierSet(str(spec)).contains(release(version), prereleases=True)
