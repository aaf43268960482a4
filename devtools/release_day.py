"""What PyPI offered when a vLLM release came out: the one cutoff its dependencies are taken at.

The conformance venvs install a release with `uv pip install --exclude-newer <cutoff>`, and
the shipped facts name the transformers such an install resolves to (the newest release by
then that the wheel's Requires-Dist allows), so both describe the same install.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import (InvalidSdistFilename, InvalidWheelFilename, canonicalize_name, parse_sdist_filename,
                             parse_wheel_filename)
from packaging.version import Version

if TYPE_CHECKING:
    from patchops.lint.facts.groups import Transformers

# Dependencies PyPI had this long after the release: what `pip install vllm==X` gave then.
GRACE = dt.timedelta(days=4)


@functools.lru_cache(maxsize=None)
def upload_times(project: str) -> Dict[str, dt.datetime]:
    """Return version -> the first upload of its files, from PyPI's simple JSON index (yanked left out)."""
    request = urllib.request.Request(f"https://pypi.org/simple/{project}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        index = json.load(response)
    times: Dict[str, dt.datetime] = {}
    for entry in index["files"]:
        if entry.get("yanked") or not entry.get("upload-time"):
            continue
        try:
            name = entry["filename"]
            version = str(parse_wheel_filename(name)[1] if name.endswith(".whl") else parse_sdist_filename(name)[1])
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue
        when = dt.datetime.fromisoformat(entry["upload-time"].replace("Z", "+00:00"))
        times[version] = min(when, times.get(version, when))
    return times


def cutoff(vllm_version: str) -> dt.datetime:
    """Return the moment vLLM `vllm_version`'s dependencies are taken at (midnight UTC after upload + GRACE)."""
    uploaded = upload_times("vllm").get(str(Version(vllm_version)))
    if uploaded is None:
        raise RuntimeError(f"PyPI lists no file of vllm {vllm_version}")
    day = (uploaded + GRACE).date()
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)


def newest_by(project: str, moment: dt.datetime, specifier: str = "") -> Optional[str]:
    """Return the newest final release of `project` uploaded before `moment` that `specifier` allows."""
    allowed = SpecifierSet(specifier)
    found = [Version(v) for v, when in upload_times(project).items()
             if when < moment and not Version(v).is_prerelease and Version(v) in allowed]
    return str(max(found)) if found else None


def resolved_dependency(vllm_version: str, site: Path, project: str) -> Optional[str]:
    """Return the release of `project` an install of vLLM `vllm_version` took on its release day:
    the newest by `cutoff` that the wheel's Requires-Dist (in `site`'s dist-info) allows."""
    for metadata in sorted(Path(site).glob("vllm-*.dist-info/METADATA")):
        for line in metadata.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.startswith("Requires-Dist:"):
                continue
            requirement = Requirement(line.split(":", 1)[1].strip())
            if canonicalize_name(requirement.name) == canonicalize_name(project) and not requirement.marker:
                return newest_by(project, cutoff(vllm_version), str(requirement.specifier))
    return None


def transformers_of(vllm_version: str, site: Path) -> Transformers:
    """Return the facts of the transformers an install of vLLM `vllm_version` (in `site`) took on
    its release day, marked with that day; empty when the wheel names none."""
    from patchops.lint.extract.source_tree import Source
    from patchops.lint.extract.transformers_beside import transformers_facts
    from patchops.lint.facts.groups import Transformers
    from . import wheelcache

    wanted = resolved_dependency(vllm_version, site, "transformers")
    found = transformers_facts(Source(wheelcache.transformers_site(wanted))) if wanted else {}
    return Transformers.from_dict(dict(found, resolved_on=cutoff(vllm_version).date().isoformat()) if found else {})
