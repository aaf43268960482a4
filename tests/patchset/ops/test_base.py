"""The op protocol's shared pieces: site counts, version ranges, value normalisation."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from patchops.patchset.ops.base import SiteCount, normalize_expr, version_in


@pytest.mark.parametrize("text, low, high, shown", [
    (1, 1, 1, "1"), ("2", 2, 2, "2"), (">=1", 1, None, ">=1"), (">0", 1, None, ">=1"),
    ("<=3", 0, 3, "<=3"), ("<2", 0, 1, "<=1"), (0, 0, 0, "0"),
])
def test_site_count(text, low, high, shown):
    count = SiteCount.parse(text)
    assert (count.low, count.high, str(count)) == (low, high, shown)
    assert low in count and (high is None or high + 1 not in count)


@pytest.mark.parametrize("bad", [-1, True, "many", "<0", "1.5", None])
def test_site_count_rejects(bad):
    with pytest.raises(ValueError):
        SiteCount.parse(bad)


@pytest.mark.parametrize("version, spec, expected", [
    ("0.6.3.post1", ">=0.6.3", True),
    ("0.8.5+corex.4.2.0", ">=0.6.3,<0.9", True),
    ("0.11.0rc1", "<0.11", False),
    ("0.12.0rc1", ">=0.12", False),        # PEP 440: a release candidate comes before 0.12.0
    ("0.12.1rc1", ">=0.12", True),
    ("0.5.4", ">=0.6.3", False),
    (None, ">=99", True),
    ("0.8.5-corex-custom", "<0.9", True),  # not PEP 440: cut to 0.8.5
    ("corex", ">=99", True),               # unreadable: unknown
])
def test_version_in(version, spec, expected):
    assert version_in(version, SpecifierSet(spec)) is expected


def test_normalize_ignores_layout_and_comments():
    assert normalize_expr("self.x") == normalize_expr("(\n  self.x  # why\n)")
    assert normalize_expr("True") != normalize_expr("'True'")
