"""Where lint knowledge lives: rules import the rule API and lint/vllm/, never each other."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import patchops
from patchops.lint.rules import ALL_RULES

SRC = Path(patchops.__file__).resolve().parent
RULES = SRC / "lint" / "rules"
# What a rule may import from patchops: the rule API (its fix edits too), the data it checks (the
# facts and which release they are of), and lint/vllm/.
RULE_IMPORTS = ("patchops.lint.rule", "patchops.lint.edits", "patchops.lint.input.serve_config",
                "patchops.lint.reading.read_config", "patchops.lint.facts.model", "patchops.lint.facts.groups",
                "patchops.lint.facts.resolution", "patchops.lint.vllm")


def allowed_in_a_rule(module: str) -> bool:
    return any(module == allowed or module.startswith(allowed + ".") for allowed in RULE_IMPORTS)


def imported_modules(path: Path):
    """Yield (line, module) for every import in `path`, function-level ones included."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_imports_only_the_rule_api_and_lint_vllm(rule):
    path = RULES / (rule.__module__.rsplit(".", 1)[-1] + ".py")
    bad = [(line, module) for line, module in imported_modules(path)
           if module.split(".")[0] == "patchops" and not allowed_in_a_rule(module)]
    assert bad == [], f"{path.name} imports {bad}"


def test_layout_check_sees_a_rule_importing_a_rule(tmp_path):
    path = tmp_path / "r.py"
    path.write_text("def f():\n    from patchops.lint.rules.unknown_flag import known_names\n")
    assert list(imported_modules(path)) == [(2, "patchops.lint.rules.unknown_flag")]
    assert not allowed_in_a_rule("patchops.lint.rules.unknown_flag")
    assert not allowed_in_a_rule("patchops.versions")
    assert allowed_in_a_rule("patchops.lint.rule") and allowed_in_a_rule("patchops.lint.vllm.routing")



# --- the extractor reads vLLM, the rules judge it ---------------------------------------------

EXTRACT = SRC / "lint" / "extract"
RULE_MODULES = ("patchops.lint.rule", "patchops.lint.rules", "patchops.lint.runner")


def rule_knowledge(path: Path) -> list:
    """Return what `path` knows of the rules: imports of them, a rule's code or name in its text."""
    text = path.read_text(encoding="utf-8")
    found = [module for _, module in imported_modules(path)
             if any(module == m or module.startswith(m + ".") for m in RULE_MODULES)]
    found += re.findall(r"\bPO\d{3}\b", text)
    return found + [rule.name for rule in ALL_RULES if re.search(rf"(?<![\w-]){rule.name}(?![\w-])", text)]


def test_the_extractor_knows_no_rule():
    """Which rule words which vLLM check is the rules' to say (Rule.explains), not the reader's."""
    found = {path.name: rule_knowledge(path) for path in sorted(EXTRACT.glob("*.py"))}
    assert {name: known for name, known in found.items() if known} == {}


def test_rule_knowledge_check_sees_a_code_a_name_and_an_import(tmp_path):
    path = tmp_path / "x.py"
    path.write_text('from patchops.lint.rules import ALL_RULES\nOWNED = ("max_num_batched", "PO201")\n'
                    "# left to value-out-of-range\n")
    assert rule_knowledge(path) == ["patchops.lint.rules", "PO201", "value-out-of-range"]
    path.write_text("# a value out of range, PO2011 is no code\n")
    assert rule_knowledge(path) == []

# --- version literals ------------------------------------------------------------------------

RELEASES = SRC / "lint" / "vllm" / "releases.py"
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
PARSERS = ("Version", "Boundary", "parse_version", "parse_release", "release", "SpecifierSet", "in_range")


def _version_tuple(node: ast.AST) -> bool:
    """A literal like (0, 10, 2): two to four ints, the first 0 (every vLLM release so far)."""
    return (isinstance(node, ast.Tuple) and 2 <= len(node.elts) <= 4
            and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
            and node.elts[0].value == 0)


def _version_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        any(ch.isdigit() for ch in node.value)


def version_literals(source: str):
    """Yield (line, text) for each comparison against a vLLM version written as a literal.

    Caught: `v < (0, 10, 2)`; `Version("0.9")`, `release("0.8.5")`, `SpecifierSet(">=0.9")` and
    the other parsers called on a literal; `facts.version == "0.8.5"`. A rule's own `versions`
    range and an Example's `vllm=` are declarations, not comparisons, and are not looked at.
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops):
            for operand in [node.left] + node.comparators:
                if _version_tuple(operand):
                    yield node.lineno, ast.unparse(node)
                elif _version_string(operand) and "version" in ast.unparse(node).lower():
                    yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in PARSERS and any(_version_string(arg) for arg in node.args):
                yield node.lineno, ast.unparse(node)


def test_no_version_literal_outside_releases():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path == RELEASES:
            continue
        found += [f"{path.relative_to(SRC)}:{line}: {text}"
                  for line, text in version_literals(path.read_text(encoding="utf-8"))]
    assert found == [], "compare against a named boundary in lint/vllm/releases.py:\n" + "\n".join(found)


@pytest.mark.parametrize("code", [
    "if v < (0, 10, 2): pass", "x = (0, 9) <= v < (0, 10, 1)", "if v >= Version('0.9'): pass",
    "LIMIT = Version('0.20')", "ok = SpecifierSet('>=0.8,<0.9').contains(v)", "same = facts.version == '0.8.5'",
    "x = release('0.8.5')",
])
def test_version_literal_check_catches(code):
    assert list(version_literals(code))


@pytest.mark.parametrize("code", [
    "if cc < (8, 0): pass", "if value in (0, 1): pass", "pos = (0, 0)", "if v < LISTS_EXPANDED: pass",
    "versions = '>=0.7.3'", "Example('x: 1\\n', vllm='0.8.5')", "if n == 3: pass",
])
def test_version_literal_check_passes(code):
    assert list(version_literals(code)) == []
