"""Rules declare what they read (Rule.needs), and the runner acts on it: no rule skips silently.

For every INVALID example of every rule: with each input the rule does not declare hidden
behind a tripwire, the rule still fires and never touches one (an undeclared read fails);
with each input it requires taken away, the rule fires or the runner lists it as not run.
"""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint import runner
from patchops.lint.facts.model import facts_for_version
from patchops.lint.input import model_source
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.rules import ALL_RULES

GUARDED = ("hardware.", "workload.")


class UndeclaredRead(AssertionError):
    pass


class Tripwire:
    """Stands for the model facts of a rule that does not declare them: any use fails."""

    def __getattr__(self, name):
        raise UndeclaredRead(f"read model_facts.{name} without declaring needs model")

    def __bool__(self):
        raise UndeclaredRead("tested model_facts without declaring needs model")


class GuardedContext(dict):
    """A spec's context whose undeclared `hardware.*` / `workload.*` fields fail when read."""

    def __init__(self, data, allowed):
        super().__init__(data)
        self.allowed = set(allowed)

    def _check(self, key):
        if isinstance(key, str) and key.startswith(GUARDED) and key not in self.allowed:
            raise UndeclaredRead(f"read {key} without declaring it in needs")

    def __getitem__(self, key):
        self._check(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._check(key)
        return super().get(key, default)

    def __contains__(self, key):
        self._check(key)
        return super().__contains__(key)


def _cases():
    for rule in ALL_RULES:
        if rule.name in ("unused-suppression", "input-not-linted"):
            continue  # the runner calls neither check(): they judge the suppressions and the input
        for index, example in enumerate(rule.INVALID):
            yield pytest.param(rule, example, id=f"{rule.code}-{rule.name}-invalid{index}")


def _prepared(example, drop=()):
    facts = runner.example_facts(example)
    cfg = load_text(example.text, path="example.yaml", kind=example.kind)
    for key in drop:
        cfg.context.pop(key, None)
    given = model_source.GivenConfigs(read=model_facts_from_dict(example.model)) \
        if example.model is not None and "model" not in drop else model_source.GivenConfigs()
    return cfg, facts, given


@pytest.mark.parametrize("rule,example", list(_cases()))
def test_a_rule_reads_only_what_it_declares(rule, example):
    cfg, facts, given = _prepared(example)
    seen = runner.prepare(cfg, facts, given)
    if runner.missing(rule.needs, seen) or not rule.applies_to(facts.version):
        pytest.skip("the example itself lacks a required input")  # test_rule_catalogue catches it
    declared = set(rule.needs.required) | set(rule.needs.optional)
    if "model" not in declared:
        seen = dataclasses.replace(seen, model_facts=Tripwire())
    seen = dataclasses.replace(seen, written=dataclasses.replace(
        seen.written, context=GuardedContext(seen.context, declared)))
    found = [d for d in rule().check(seen, facts) if d.code == rule.code]
    assert found, f"{rule.code} did not fire with its declared inputs only"


@pytest.mark.parametrize("rule,example", list(_cases()))
def test_without_a_required_input_the_rule_fires_or_is_listed_not_run(rule, example):
    for name in rule.needs.required:
        cfg, facts, given = _prepared(example, drop=(name,))
        run = runner.run_rules(cfg, facts, given=given)
        fired = any(d.code == rule.code for d in run.diagnostics)
        listed = [n for n in run.not_run if n.rule == rule.name]
        assert fired or listed, f"{rule.code} skipped silently without {name}"
        assert all(n.reason and n.hint for n in listed)


def test_the_runner_does_not_call_a_rule_that_lacks_its_input():
    heads = next(rule for rule in ALL_RULES if rule.name == "heads-not-divisible-by-tp")
    cfg = load_text("model: org/not-here\nargs:\n  tensor-parallel-size: 3\n", path="s.yaml")
    run = runner.run_rules(cfg, facts_for_version("0.8.5"))
    assert [n for n in run.not_run if n.rule == heads.name] == [
        runner.NotRun(heads.name, "s.yaml", *model_source.NOT_HERE)]
