"""releases.in_range: PEP 440's answer for every rule's range, without importing packaging.specifiers."""

from __future__ import annotations

import itertools

import pytest
from packaging.specifiers import SpecifierSet

from patchops.lint.facts.model import shipped_versions
from patchops.lint.rules import ALL_RULES
from patchops.lint.vllm import releases

from handmade import hand_facts

BOUNDARIES = {str(value) for value in vars(releases).values() if isinstance(value, releases.Boundary)}


def neighbours(version: str):
    """Yield `version` and the releases just below and above it at each of its places."""
    parts = [int(p) for p in version.split(".")]
    yield version
    for index in range(len(parts)):
        for step in (-1, 1):
            moved = parts[:index] + [parts[index] + step] + parts[index + 1:]
            if moved[index] >= 0:
                yield ".".join(map(str, moved))


RANGES = sorted({rule.versions for rule in ALL_RULES} | {"", ">=0", "==0.8", "!=0.8.5", ">0.7", "<=0.10",
                                                        "==0.11.*", "!=0.11.*", "==0.8.5.*", "!=0.*"})
# every range's own bounds too, so a rule's ">=0.6" meets a release below it
RANGE_BOUNDS = {spec.version.removesuffix(".*") for r in RANGES for spec in SpecifierSet(r)}
CANDIDATES = sorted({v for b in BOUNDARIES | RANGE_BOUNDS for v in neighbours(b)} | set(shipped_versions())
                    | {"0.8.5-corex.4.2", "0.8.5rc1", "0.10.1.1", "dev", "0.7.3.post1"})


@pytest.mark.parametrize("spec", RANGES)
def test_in_range_agrees_with_packaging_on_both_sides_of_every_bound(spec):
    wrong = [version for version in CANDIDATES
             if releases.in_range(version, spec)
             != SpecifierSet(spec).contains(releases.release(version), prereleases=True)]
    assert not wrong, f"{spec!r}: {wrong}"
    # the range really splits the candidates (a check that can fail), unless it is open
    answers = {releases.in_range(version, spec) for version in CANDIDATES}
    assert answers == ({True} if spec in ("", ">=0") else {True, False})


@pytest.mark.parametrize("spec", ["~=0.8.0", ">=0.8rc1", "===0.8.5"])
def test_other_spellings_go_to_packaging(spec):
    for version in CANDIDATES:
        assert releases.in_range(version, spec) == \
            SpecifierSet(spec).contains(releases.release(version), prereleases=True), (spec, version)


def test_every_candidate_pair_orders_as_packaging_does():
    for low, high in itertools.combinations(CANDIDATES, 2):
        assert releases.in_range(low, f"<{releases.release(high)}") == \
            (releases.release(low) < releases.release(high))


# Release numbers read from Facts and from version strings.


def test_release_reads_post_releases_and_local_versions():
    assert releases.release("0.6.3.post1") == releases.Version("0.6.3")
    assert releases.release(hand_facts("0.10.1.1")) == releases.Version("0.10.1.1")
    assert releases.release("0.8.5+corex.4.2") == releases.Version("0.8.5")
    assert releases.release("0.8.5-corex.4.2") == releases.Version("0.8.5")
    assert releases.release("dev") == releases.NEWEST
