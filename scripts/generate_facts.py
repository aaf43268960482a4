#!/usr/bin/env python3
"""Generate the shipped facts for released vLLM versions from their PyPI wheels.

    python scripts/generate_facts.py --new               # every final release not yet shipped
    python scripts/generate_facts.py 0.8.5 0.9.2 ...     # or --all: every release shipped now
    python scripts/generate_facts.py --reads 0.8.5 ...   # what each fact group reads, per release

Each wheel is downloaded once into the patchops cache (devtools/wheelcache.py), its
sources are read with `ast` exactly as for an installed copy, and the result goes into its
minor series' pack in src/patchops/lint/facts/shipped/ (lint/facts/packs.py). The packs are
data, regenerated rather than edited. `--new` asks the index (PyPI's simple API) for the final
releases from FIRST_RELEASE on that have no facts yet. `--reads` writes instead what each fact
group read of the wheel (facts/vouch.py) to src/patchops/lint/facts/reads/<version>.json.gz.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zipfile
from pathlib import Path

from packaging.version import Version

from patchops.host import pypi
from patchops.host.installed_version import _version_from_metadata
from patchops.lint.facts import packs
from patchops.lint.facts.model import Facts, shipped_versions
from patchops.lint.extract import extract
from patchops.lint.facts.vouch import READS_DIR, group_reads

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # devtools/, beside src/
from devtools import release_day, wheelcache  # noqa: E402

FIRST_RELEASE = "0.6.0"   # facts ship for every final release from here on


def shipped_facts(version: str) -> Facts:
    """Extract facts from the official wheel of `version`, labelled with the wheel's name."""
    wheel = wheelcache.wheel_path(version)
    site = wheelcache.site_packages(version)
    facts, _ = extract(site)
    if facts.version != version:
        # 0.6.2's wheel was built from a commit before its tag: vllm/_version.py says
        # 0.6.1.dev238+ge2c6e0a82 while its dist-info says 0.6.2. PyPI's name is the release.
        stated = _version_from_metadata(site)
        if stated is None or stated[0] != version:
            raise SystemExit(f"error: wheel {wheel.name} says it is vLLM {facts.version}, not {version}")
        facts = facts.replace(version=version, notes=facts.notes + (
            f"vllm/_version.py of this release says {facts.version}; its dist-info says {version}",))
    # flashinfer, ray and bitblas are separate packages: their presence is a fact of an
    # install, not of a release, so shipped facts leave it unknown. Every install has
    # transformers; which one is the install's, so a release's facts name the one an install
    # on its release day resolved to (the conformance venvs are that install), marked with that day.
    return facts.replace(origin=f"shipped facts from vllm-{version} wheel ({wheel.name})",
                         has_flashinfer=None, has_ray=None, has_bitblas=None,
                         transformers=release_day.transformers_of(version, site))


def new_releases(index_url: str = pypi.PYPI_SIMPLE) -> list:
    """Return the final vLLM releases from FIRST_RELEASE on that the index has and no pack holds."""
    shipped = set(shipped_versions())
    return [v for v in pypi.final_releases("vllm", index_url)
            if Version(v) >= Version(FIRST_RELEASE) and v not in shipped]


def write_reads(version: str, out: Path) -> Path:
    """Write what each fact group reads of `version`'s wheel, gzipped, and return the file.

    The cache unpacks the sources and dist-info of a wheel, not all of it: a file a group
    looked for and did not find must be absent from the whole wheel too, or the record would
    call an unmodified install changed.
    """
    reads = group_reads(wheelcache.site_packages(version))
    members = set(zipfile.ZipFile(wheelcache.wheel_path(version)).namelist())
    unpacked_only = sorted(key for key, digest in reads["files"].items() if digest is None and key in members)
    if unpacked_only:
        raise SystemExit(f"error: vLLM {version}: groups look for files the cache did not unpack: {unpacked_only}")
    path = out / f"{version}.json.gz"
    # mtime=0: the same reads give the same bytes, so regenerating leaves no diff
    path.write_bytes(gzip.compress(json.dumps(reads, sort_keys=True).encode(), mtime=0))
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="vLLM versions, e.g. 0.8.5")
    parser.add_argument("--all", action="store_true", help="regenerate every release shipped now")
    parser.add_argument("--new", action="store_true", help="add the final releases the index has and no pack holds")
    parser.add_argument("--index-url", default=pypi.PYPI_SIMPLE, help="the simple index --new asks")
    parser.add_argument("--reads", action="store_true", help="write what each fact group reads instead")
    parser.add_argument("--out", type=Path, default=READS_DIR, help="with --reads: the output folder")
    args = parser.parse_args(argv)
    versions = list(args.versions) + (shipped_versions() if args.all else [])
    if args.new:
        found = new_releases(args.index_url)
        print(f"new final releases on {args.index_url}: {', '.join(found) or 'none'}")
        versions += found
    if not versions and not args.new:
        parser.error("give versions, --all or --new")
    if args.reads:
        args.out.mkdir(parents=True, exist_ok=True)
        for version in versions:
            path = write_reads(version, args.out)
            print(f"{path}: {len(json.loads(gzip.decompress(path.read_bytes()))['files'])} files and listings")
        return 0
    releases = packs.every_release_dict(shipped_versions())
    for version in versions:   # one at a time, each pack rewritten as soon as its release is read
        facts = shipped_facts(version)
        releases[version] = facts.to_dict()
        path, = packs.write(releases, only={packs.series(version)})
        print(f"{path}: {version}: {len(facts.flags)} flags, {len(facts.field_defaults)} defaults"
              f"{', ' + str(len(facts.notes)) + ' notes' if facts.notes else ''}")
    packs.forget()
    for version in versions:   # every pack reads back to the facts extracted
        assert Facts.from_dict(packs.release_dict(version)) == Facts.from_dict(releases[version]), version
    return 0


if __name__ == "__main__":
    sys.exit(main())
