"""Fetch the official wheel of one release from PyPI, once, into patchops's cache.

`patchops capture --from-wheel` reads a vLLM file's pristine text from it; the tests and the
benchmark unpack real vLLM trees from the same cache (devtools/wheelcache.py), and the
conformance judge the transformers its vLLM venvs were installed with. `final_releases` lists
what an index offers (`scripts/generate_facts.py --new`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import List

from patchops.core.cache import cache_root
from patchops.core.errors import PatchopsError


def vllm_wheel(version: str) -> Path:
    """Download the vLLM wheel for `version` (once) with pip and return its path."""
    return wheel("vllm", version)


def wheel(project: str, version: str) -> Path:
    """Download the wheel of `project` `version` (once) with pip and return its path."""
    folder = cache_root() / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    pattern = f"{project.replace('-', '_')}-{version}-*.whl"
    found = sorted(folder.glob(pattern))
    if found:
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--quiet", "--dest", str(folder), f"{project}=={version}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(folder.glob(pattern))
    if done.returncode != 0 or not found:
        raise PatchopsError(f"could not download {project}=={version} from PyPI: {done.stderr.strip()}")
    return found[0]


PYPI_SIMPLE = "https://pypi.org/simple"


def final_releases(project: str, index_url: str = PYPI_SIMPLE) -> List[str]:
    """Return every final release of `project` (no rc, dev or local) with a wheel, oldest first.

    Read from the index's simple JSON API (PEP 691). A yanked release still counts when its
    wheel is served: pip installs it when pinned, so users run it.
    """
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    url = f"{index_url.rstrip('/')}/{project}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            files = json.load(response)["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PatchopsError(f"could not list the releases of {project} at {url}: {exc}") from None
    found = set()
    for entry in files:
        try:
            version = parse_wheel_filename(str(entry.get("filename", "")))[1]
        except InvalidWheelFilename:
            continue   # an sdist, or not a distribution file
        if not (version.is_prerelease or version.local):   # is_prerelease: dev builds too
            found.add(version)
    return [str(v) for v in sorted(found)]
