"""Run the rule catalogue over one config: version filter, select/ignore, suppressions."""

from __future__ import annotations

import dataclasses
from typing import Iterable, List, Sequence

from patchops.errors import UsageError
from patchops.lint.config import ServeConfig
from patchops.lint.facts import Facts
from patchops.lint.reading import read_as_vllm
from patchops.lint.rule import Diagnostic, Example
from patchops.lint.rules import ALL_RULES
from patchops.lint.rules.unused_suppression import UnusedSuppression

# The generic parser findings step aside when a specific rule already explains the same
# setting (num_scheduler_steps on 0.10.1+ is "multistep-removed", not just "unknown"; a YAML
# `yes` refused as a value is "yaml-11-boolean", not just "invalid value").
GENERIC_CODES = ("PO101", "PO107")


def is_selected(code: str, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> bool:
    """Return whether `code` passes ruff-style prefix --select/--ignore lists."""
    if select and not any(code.startswith(prefix) for prefix in select):
        return False
    return not any(code.startswith(prefix) for prefix in ignore)


def check_selectors(select: Sequence[str] = (), ignore: Sequence[str] = ()) -> None:
    """Refuse a --select/--ignore prefix that names no rule: a typo would silently lint nothing."""
    for option, prefixes in (("--select", select), ("--ignore", ignore)):
        for prefix in prefixes:
            if not any(rule.code.startswith(prefix) for rule in ALL_RULES):
                raise UsageError(f"{option} {prefix} matches no rule code; `patchops rules` lists them")


def lint_config(cfg: ServeConfig, facts: Facts, *, select: Sequence[str] = (),
                ignore: Sequence[str] = ()) -> List[Diagnostic]:
    """Return the findings for `cfg` against `facts`, sorted by position then code."""
    check_selectors(select, ignore)
    seen = read_as_vllm(cfg, facts)
    found: List[Diagnostic] = []
    for rule_class in ALL_RULES:
        if rule_class is UnusedSuppression or not is_selected(rule_class.code, select, ignore):
            continue
        if rule_class.applies_to(facts.version):
            found.extend(rule_class().check(seen, facts))
    found = _drop_explained(found)
    kept = [d for d in found if not cfg.suppressed(d.line, d.code)]
    if is_selected(UnusedSuppression.code, select, ignore):
        kept.extend(UnusedSuppression().check_suppressions(cfg, found))
    return sorted(kept, key=lambda d: (d.line, d.column, d.code))


def _drop_explained(found: Iterable[Diagnostic]) -> List[Diagnostic]:
    found = list(found)
    specific = {(d.line, d.column) for d in found if d.code not in GENERIC_CODES}
    return [d for d in found if d.code not in GENERIC_CODES or (d.line, d.column) not in specific]


def lint_example(example: Example) -> List[Diagnostic]:
    """Lint a rule's Example against the shipped facts of its vLLM version."""
    from patchops.lint.facts import facts_for_version
    from patchops.lint.loaders import load_text

    facts = facts_for_version(example.vllm)
    if example.facts:
        overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in example.facts.items()}
        facts = dataclasses.replace(facts, **overrides)
    cfg = load_text(example.text, path="example.yaml", kind=example.kind)
    return lint_config(cfg, facts)
