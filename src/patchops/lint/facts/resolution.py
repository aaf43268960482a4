"""Which shipped release stands for a stated vLLM version, and how exactly.

A release PyPI has (`0.8.4`, `0.10.1.1`, `0.8.5.post1`) is its own facts. Everything else takes
another release's facts by a stated rule, and says so (PO010 facts-of-another-release):

- a local label (`0.8.5+corex.4.2`, `0.8.5-corex.4.2`): its public release; a fork may differ;
- a dev build or pre-release (`0.8.5.dev84+g9c1d5b456`, `0.9.0rc1`): the release before it;
- a release newer than the newest shipped, or a version unreadable as one (`dev`): the newest;
- a version between shipped releases that PyPI never had (`0.9.9`): the release below it.
A version older than the oldest shipped release is an error.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional

from packaging.version import InvalidVersion, Version

from patchops.core.errors import LintInputError
from patchops.core.records import StrEnum
from patchops.lint.facts.packs import shipped_releases
from patchops.lint.vllm.releases import parse_release



class ResolutionKind(StrEnum):
    """How a stated version came to another release's facts (the module docstring's list)."""

    EXACT = "exact"
    LOCAL = "local"
    PRE = "pre"
    NEWER = "newer"
    UNLISTED = "unlisted"
    UNREADABLE = "unreadable"


class Resolution(NamedTuple):
    asked: str     # the version as stated
    used: str      # the shipped release whose facts are used
    kind: ResolutionKind

    def describe(self) -> str:
        """Say which facts stand for the asked version and why (empty for an exact release)."""
        asked, used = self.asked, self.used
        return {
            ResolutionKind.EXACT: "",
            ResolutionKind.LOCAL: f"vLLM {asked} is a local build of {used}: linted as {used}; a fork may "
                                  "differ",
            ResolutionKind.PRE: f"vLLM {asked} is a dev build or rc: linted against {used}, the release before it",
            ResolutionKind.NEWER: f"vLLM {asked} is newer than the shipped facts: linted against {used}, the "
                                  "newest",
            ResolutionKind.UNLISTED: f"vLLM {asked} is not a release on PyPI: linted against {used}, the "
                                     "release below it",
            ResolutionKind.UNREADABLE: f"vLLM {asked!r} is not a version number: linted against {used}, the "
                                       "newest release",
        }[self.kind]


def resolve(version: str) -> Resolution:
    """Return the shipped release that stands for `version` (see the module docstring).

    Raise LintInputError for an empty version or one older than every shipped release.
    """
    known = shipped_releases()
    asked = str(version or "").strip()
    if not asked:
        raise LintInputError(f"vLLM version {version!r} is empty; {_listing(known)}")
    if asked in known:
        return Resolution(asked, asked, ResolutionKind.EXACT)
    try:
        parsed: Optional[Version] = Version(asked)
        local = parsed.local is not None
    except InvalidVersion:   # a vendor's label on a release: 0.8.5-corex.4.2
        parsed, local = parse_release(asked), True
    if parsed is None:
        return Resolution(asked, known[-1], ResolutionKind.UNREADABLE)
    public = Version(parsed.public)
    same = [v for v in known if Version(v) == public]
    if same and not public.is_prerelease:
        return Resolution(asked, same[0], ResolutionKind.LOCAL if local else ResolutionKind.EXACT)
    below = [v for v in known if Version(v) < public]
    if not below:
        raise LintInputError(f"no shipped facts for vLLM {asked}: it is older than {known[0]}, the "
                             f"oldest release patchops knows; {_listing(known)}")
    if public.is_prerelease:   # dev, rc, alpha, beta: the release before it
        return Resolution(asked, below[-1], ResolutionKind.PRE)
    newest = below[-1] == known[-1]
    return Resolution(asked, below[-1], ResolutionKind.NEWER if newest else ResolutionKind.UNLISTED)


def _listing(known: List[str]) -> str:
    if not known:
        return "no shipped facts are installed"
    return f"shipped facts cover every vLLM release from {known[0]} to {known[-1]}"
