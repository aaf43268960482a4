"""Every rule brings its own tests: its VALID and INVALID examples run here."""

from __future__ import annotations

import dataclasses
import re

import pytest
from packaging.specifiers import SpecifierSet

from patchops.lint.facts.model import shipped_versions
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


# --- every example on every shipped release ----------------------------------------------------

# The releases the matrix runs on: the 15 shipped before every final release was.
# The other releases lint as themselves (tests/lint/facts/test_resolution.py); on them some rules'
# examples do not fire yet (0.6.0-0.6.2, 0.8.0-0.8.4, 0.9.0-0.9.1, 0.11.1-0.11.2, 0.13-0.19,
# 0.27-0.29: ranges or examples still to fit), so they are not in the matrix until triaged.
MATRIX = ["0.6.3.post1", "0.7.3", "0.8.5", "0.9.2", "0.10.0", "0.10.1.1", "0.10.2", "0.11.0", "0.12.0",
          "0.15.0", "0.20.0", "0.25.0", "0.30.0", "0.32.0", "0.33.0"]

# (code, release) pairs a rule claims but cannot fire on, and why.
NEVER_FIRES = {
    ("PO201", "0.11.0"): "V1 forces chunked prefill on and VLLM_USE_V1=0 crashes the launch first",
    ("PO403", "0.15.0"): "cuda_graph_sizes is gone from 0.15 (unknown-flag reports it)",
    ("PO403", "0.20.0"): "cuda_graph_sizes is gone from 0.15 (unknown-flag reports it)",
    ("PO403", "0.25.0"): "cuda_graph_sizes is gone from 0.15 (unknown-flag reports it)",
    ("PO403", "0.30.0"): "cuda_graph_sizes is gone from 0.15 (unknown-flag reports it)",
    ("PO403", "0.32.0"): "cuda_graph_sizes is gone from 0.15 (unknown-flag reports it)",
    ("PO403", "0.33.0"): "cuda_graph_sizes is gone from 0.15 (unknown-flag reports it)",
    ("PO901", "0.10.0"): "the examples' reasoning parser is an argparse choice there, so invalid-flag-value (PO107) reports it",
    ("PO901", "0.10.1.1"): "the examples' reasoning parser is an argparse choice there, so invalid-flag-value (PO107) reports it",
    ("PO901", "0.10.2"): "the examples' reasoning parser is an argparse choice there, so invalid-flag-value (PO107) reports it",
    ("PO901", "0.11.0"): "the examples' reasoning parser is an argparse choice there, so invalid-flag-value (PO107) reports it",
}


# Findings a suppression comment does not silence, by design.
UNSUPPRESSIBLE = {
    "PO001": "it reports the suppression comments themselves",
    "PO003": "the input could not be read, so it is reported whatever suppressions say",
}


def _suppress(text: str, line: int, code: str) -> str:
    lines = text.split("\n")
    lines[line - 1] += f"  # patchops: ignore[{code}]"
    return "\n".join(lines)


@pytest.mark.vllm  # the release matrix: every rule on every release's facts
@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_examples_on_every_shipped_release(rule):
    """Run each example through the full runner on each MATRIX release's facts.

    Inside the rule's range some INVALID example fires on each release (see NEVER_FIRES),
    every finding is well formed, and `# patchops: ignore[CODE]` on its line silences it
    without leaving an unused suppression; outside the range the rule never fires.
    """
    silent = []
    assert set(MATRIX) <= set(shipped_versions())
    for release in MATRIX:
        claimed = rule.applies_to(release)
        fired = False
        for example in list(rule.VALID) + list(rule.INVALID):
            on = dataclasses.replace(example, vllm=release)
            found = [d for d in lint_example(on) if d.code == rule.code]
            if not claimed:
                assert found == [], f"{rule.code} fired on {release}, outside {rule.versions}"
                continue
            for d in found:
                assert d.severity in SEVERITIES and d.name == rule.name and d.message[0].islower()
                # a YAML error at the end of the stream sits one line past the last
                assert 1 <= d.line <= len(example.text.splitlines()) + 1 and d.column >= 1
            if found and example in rule.INVALID and rule.code not in UNSUPPRESSIBLE:
                fired = True
                muted = dataclasses.replace(on, text=_suppress(on.text, found[0].line, rule.code))
                left = [d for d in lint_example(muted) if d.line == found[0].line]
                assert rule.code not in {d.code for d in left} and "PO001" not in {d.code for d in left}
            elif found and example in rule.INVALID:
                fired = True
        if claimed and not fired and (rule.code, release) not in NEVER_FIRES:
            silent.append(release)
    assert silent == [], f"no INVALID example of {rule.code} fires on {silent}"


def _example_only_constants(tree):
    """Return (module constants, those used only as example data: inside VALID/INVALID or each other)."""
    import ast

    constants = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                constants[target.id] = node
    in_examples = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("VALID", "INVALID")
                                                for t in node.targets):
            in_examples |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    uses = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in constants:
            uses[node.id] = uses.get(node.id, 0) + 1
    in_examples_count = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("VALID", "INVALID")
                                                for t in node.targets):
            for n in ast.walk(node.value):
                if isinstance(n, ast.Name) and n.id in constants:
                    in_examples_count[n.id] = in_examples_count.get(n.id, 0) + 1
    # a constant is example data when every use is in the examples or in another example constant
    data = {name for name in constants if uses.get(name, 0) and uses[name] == in_examples_count.get(name, 0)}
    grew = True
    while grew:
        grew = False
        for name, node in constants.items():
            if name in data or not uses.get(name):
                continue
            users = [other for other, onode in constants.items() if other in data and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(onode.value))]
            used_by_data = sum(1 for other in users for n in ast.walk(constants[other].value)
                               if isinstance(n, ast.Name) and n.id == name)
            if uses[name] == in_examples_count.get(name, 0) + used_by_data:
                data.add(name)
                grew = True
    return constants, data


def _holds_literal(value) -> bool:
    import ast

    return any(isinstance(n, ast.Constant) and isinstance(n.value, (str, int, float)) and not isinstance(n.value, bool)
               for n in ast.walk(value))


def test_rule_modules_hold_no_vllm_knowledge():
    """A rule module's constants are its own example data; vLLM's messages, names, tables live in lint/vllm/."""
    import ast
    from pathlib import Path

    import patchops.lint.rules as rules_package

    offenders = []
    for path in sorted(Path(rules_package.__file__).parent.glob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text())
        constants, data = _example_only_constants(tree)
        for name, node in constants.items():
            if name not in data and _holds_literal(node.value):
                offenders.append(f"{path.name}:{node.lineno} {name}")
    assert not offenders, "move to lint/vllm/ (or use only in VALID/INVALID): " + ", ".join(offenders)


def test_the_knowledge_check_tells_example_data_from_a_message():
    import ast

    tree = ast.parse("MSG = 'vLLM refuses'\nQWEN = {'model_type': 'qwen2'}\nSPEC = 'model: m\\n'\n"
                     "BOTH = dict(QWEN, x=1)\n"
                     "class R:\n    vllm_message = MSG\n    VALID = [Example(SPEC, model=BOTH)]\n"
                     "    INVALID = [Example(SPEC, model=QWEN)]\n")
    _, data = _example_only_constants(tree)
    assert data == {"QWEN", "SPEC", "BOTH"}
