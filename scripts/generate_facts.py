#!/usr/bin/env python3
"""Generate the shipped facts for released vLLM versions from their PyPI wheels.

    python scripts/generate_facts.py 0.8.5 0.9.2 ...     # or --all for the usual set
    python scripts/generate_facts.py --reads --all       # what each fact group reads, per release

Each wheel is downloaded once into the patchops cache (tests/support/wheelcache.py), its
sources are read with `ast` exactly as for an installed copy, and the result is written to
src/patchops/lint/facts/shipped/<version>.json. The files are data, regenerated rather than edited.
`--reads` writes instead what each fact group read of the wheel (facts/vouch.py) to
src/patchops/lint/facts/reads/<version>.json.gz.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zipfile
from pathlib import Path

from patchops.host.installed_version import _version_from_metadata
from patchops.lint.facts.model import SHIPPED_DIR, Facts
from patchops.lint.extract import extract
from patchops.lint.facts.vouch import READS_DIR, group_reads

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support, beside src/
from tests.support import release_day, wheelcache  # noqa: E402

# The 14 releases the reference note was checked against (vllm-launch-checks.md), and 0.32.0,
# a release the conformance harness records.
DEFAULT_VERSIONS = (
    "0.6.3.post1", "0.7.3", "0.8.5", "0.9.2", "0.10.0", "0.10.1.1", "0.10.2", "0.11.0",
    "0.12.0", "0.15.0", "0.20.0", "0.25.0", "0.30.0", "0.32.0", "0.33.0",
)


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


def render(facts: Facts) -> str:
    """Serialise with one flag per line: small files whose diffs stay readable."""
    data = facts.to_dict()
    flags = data.pop("flags")
    lines = ["{"]
    for key in sorted(data):
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key], sort_keys=True)},")
    lines.append('  "flags": {')
    items = sorted(flags.items())
    for i, (dest, flag) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"    {json.dumps(dest)}: {json.dumps(flag, sort_keys=True)}{comma}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


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
    parser.add_argument("--all", action="store_true", help="the default set: " + " ".join(DEFAULT_VERSIONS))
    parser.add_argument("--out", type=Path, help="output folder (default: shipped/, or reads/ with --reads)")
    parser.add_argument("--reads", action="store_true", help="write what each fact group reads instead")
    args = parser.parse_args(argv)
    versions = list(args.versions) + (list(DEFAULT_VERSIONS) if args.all else [])
    if not versions:
        parser.error("give versions or --all")
    args.out = args.out or (READS_DIR if args.reads else SHIPPED_DIR)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.reads:
        for version in versions:
            path = write_reads(version, args.out)
            print(f"{path}: {len(json.loads(gzip.decompress(path.read_bytes()))['files'])} files and listings")
        return 0
    for version in versions:
        facts = shipped_facts(version)
        text = render(facts)
        assert Facts.from_json(text) == facts, version  # the file reads back to the same facts
        path = args.out / f"{version}.json"
        path.write_text(text, encoding="utf-8")
        print(f"{path}: {len(facts.flags)} flags, {len(facts.field_defaults)} defaults"
              f"{', ' + str(len(facts.notes)) + ' notes' if facts.notes else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
