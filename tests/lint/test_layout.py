"""Where lint knowledge lives: rules import the rule API and lint/vllm/, never each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import patchops
from patchops.lint.rules import ALL_RULES

SRC = Path(patchops.__file__).resolve().parent
RULES = SRC / "lint" / "rules"
# What a rule may import from patchops: the rule API, the data it checks, and lint/vllm/.
RULE_IMPORTS = ("patchops.lint.rule", "patchops.lint.config", "patchops.lint.facts", "patchops.lint.vllm")


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
