"""config-check-refuses leaves a vLLM check to an enabled rule that explains its message."""

from __future__ import annotations

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.rules.config_check_refuses import ConfigCheckRefuses
from patchops.lint.rules.value_out_of_range import ValueOutOfRange
from patchops.lint.runner import lint_config
from patchops.lint.vllm import messages

GPU_UTILIZATION = "model: m\nargs:\n  gpu-memory-utilization: 1.5\n"


def codes(text: str, version: str, **selection) -> list:
    return [(d.code, d.vllm_message) for d in lint_config(load_text(text), facts_for_version(version), **selection)]


def test_a_check_another_enabled_rule_explains_is_left_to_it():
    found = codes(GPU_UTILIZATION, "0.8.5")
    assert [code for code, _ in found] == [ValueOutOfRange.code]


def test_with_that_rule_ignored_the_check_is_quoted():
    found = codes(GPU_UTILIZATION, "0.8.5", ignore=[ValueOutOfRange.code])
    assert found == [(ConfigCheckRefuses.code, "ValueError: GPU memory utilization must be less than 1.0. Got 1.5.")]


def test_a_rule_explains_a_check_by_a_fragment_of_its_text_or_by_its_facts():
    facts = facts_for_version("0.8.5")
    assert ValueOutOfRange.explains_check("GPU memory utilization must be less than 1.0. Got ", facts)
    assert messages.GPU_MEMORY_UTILIZATION_CHECK in ValueOutOfRange.explains
    assert not ConfigCheckRefuses.explains_check("GPU memory utilization must be less than 1.0. Got ", facts)
    guards = [(c.get("message") or "").split("{")[0] for c in facts.value_ranges.values() if c.get("how") == "guard"]
    guards = [g for g in guards if len(g) > 8]
    assert guards and all(ValueOutOfRange.explains_check(g, facts) for g in guards)
    assert not ValueOutOfRange.explains_check("enable_expert_parallel must be True to use EPLB.", facts)
