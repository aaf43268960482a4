"""Every rule brings its own tests: its VALID and INVALID examples run here."""

from __future__ import annotations

import re

import pytest
from packaging.specifiers import SpecifierSet

from patchops.lint.rule import SEVERITIES
from patchops.lint.rules import ALL_RULES
from patchops.lint.runner import lint_example

# Codes once shipped are never reused for another rule; add new ones here when you add a rule.
RETIRED_CODES: frozenset = frozenset()


def _cases(attr):
    for rule in ALL_RULES:
        for index, example in enumerate(getattr(rule, attr)):
            yield pytest.param(rule, example, id=f"{rule.code}-{rule.name}-{attr.lower()}{index}")


def test_codes_unique_sorted_and_never_reused():
    codes = [rule.code for rule in ALL_RULES]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    assert not RETIRED_CODES & set(codes)
    names = [rule.name for rule in ALL_RULES]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_is_documented(rule):
    assert re.fullmatch(r"PO\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert rule.severity in SEVERITIES
    SpecifierSet(rule.versions)  # parses
    docs = rule.docs()
    for heading in ("## What it does", "## Why is this bad?", "## Fix"):
        assert heading in docs, f"{rule.code} docs lack {heading!r}"
    assert rule.summary()
    assert rule.VALID and rule.INVALID, f"{rule.code} needs passing and failing examples"
    assert all(example.at for example in rule.INVALID)
    module = rule.__module__.rsplit(".", 1)[-1]
    assert module == rule.name.replace("-", "_"), "one rule per file, named after the rule"


@pytest.mark.parametrize("rule,example", list(_cases("VALID")))
def test_valid_example_passes(rule, example):
    found = [d for d in lint_example(example) if d.code == rule.code]
    assert found == []


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_invalid_example_is_caught(rule, example):
    found = [d for d in lint_example(example) if d.code == rule.code]
    assert found, f"{rule.code} did not fire on:\n{example.text}"
    assert (found[0].line, found[0].column) == example.at
    assert found[0].severity == (example.severity or rule.severity)
    assert found[0].name == rule.name
    assert found[0].message and found[0].message[0].islower()
