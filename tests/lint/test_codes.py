"""The one table of code prefixes and areas, and old codes acting as their new ones everywhere."""

from __future__ import annotations

import re

import pytest

from patchops import api
from patchops.lint import codes, selectors
from patchops.lint.codes import CATEGORIES, REDIRECTS
from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.rules import ALL_RULES
from patchops.lint.rules.multistep_falls_back_to_v0 import MultistepFallsBackToV0
from patchops.lint.runner import lint_config

MULTISTEP = "model: m\nargs:\n  num-scheduler-steps: 8{}\n"   # PO302 at 3:3 on 0.8.5
OLD = "PO399"


@pytest.fixture
def old_code(monkeypatch):
    """Make OLD an old code of multistep-falls-back-to-v0, as a renumbering leaves one."""
    monkeypatch.setitem(REDIRECTS, OLD, MultistepFallsBackToV0.code)
    return OLD


def _codes(text, **options):
    return [d.code for d in lint_config(load_text(MULTISTEP.format(text)), facts_for_version("0.8.5"), **options)]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_code_sits_under_exactly_one_category(rule):
    holding = [category for category in CATEGORIES if rule.code.startswith(category.prefix)]
    assert holding == [rule.category()], f"{rule.code} {rule.name}: add its prefix to lint/codes.py"


def test_categories_are_distinct_areas_that_each_hold_a_rule():
    prefixes = [category.prefix for category in CATEGORIES]
    assert all(re.fullmatch(r"PO\d{1,2}", prefix) for prefix in prefixes)
    assert prefixes == sorted(prefixes)
    assert not [(a, b) for a in prefixes for b in prefixes if a != b and b.startswith(a)]  # none nests
    names = [category.name for category in CATEGORIES]
    assert len(set(names)) == len(names) and all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n) for n in names)
    assert all(len(category.description) <= 100 and "\n" not in category.description for category in CATEGORIES)
    held = {rule.category() for rule in ALL_RULES}
    assert [category for category in CATEGORIES if category not in held] == []


def test_a_code_under_no_prefix_is_refused():
    with pytest.raises(LookupError, match="QQ999 is under no prefix"):
        codes.category_of("QQ999")


def test_redirects_lead_old_codes_to_live_ones_in_one_step():
    live = {rule.code for rule in ALL_RULES}
    assert all(re.fullmatch(r"PO\d{3}", old) for old in REDIRECTS)
    assert not live & set(REDIRECTS), "an old code is never reused"
    assert set(REDIRECTS.values()) <= live


@pytest.mark.parametrize("old,new", sorted(REDIRECTS.items()))
def test_each_old_code_names_exactly_the_rule_with_its_new_code(old, new):
    assert [rule.code for rule in api.rules(old)] == [new]
    assert [rule.code for rule in ALL_RULES if selectors.matches(old, rule.code, rule.name)] == [new]
    assert codes.old_codes(new) == (old,)


def test_an_old_code_selects_and_ignores_as_its_new_one(old_code):
    assert selectors.matches(old_code.lower(), "PO302", "multistep-falls-back-to-v0")
    assert not selectors.matches(old_code, "PO301", "multistep-removed")
    assert _codes("", select=[old_code]) == ["PO302"]
    assert "PO302" not in _codes("", ignore=[f"PO101,{old_code}"])


def test_an_old_code_in_a_suppression_suppresses_and_counts_as_used(old_code):
    assert _codes(f"  # patchops: ignore[{old_code}]") == []
    assert _codes(f"  # patchops: ignore[{old_code}, PO302]") == []
    stale = lint_config(load_text(f"model: m\nargs:\n  max-model-len: 4096  # patchops: ignore[{old_code}]\n"),
                        facts_for_version("0.8.5"))
    assert [(d.code, d.message) for d in stale] == [("PO001", f"suppression of {old_code} matches no finding on this line")]


def test_rules_and_the_renamed_list_take_an_old_code(old_code):
    assert api.rules(old_code) == [MultistepFallsBackToV0]
    assert api.renamed_codes([old_code, old_code.lower(), "PO302", "PO3"]) == [(old_code, "PO302")]
    assert api.renamed_codes(["PO302"]) == []
