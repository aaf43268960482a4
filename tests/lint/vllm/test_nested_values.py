"""lint/vllm/nested_values.py: a nested config's own post-init checks run on the user's JSON value."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.vllm.nested_values import refusal


def spec(version, dest):
    return facts_for_version(version).nested_configs[dest]


@pytest.mark.parametrize("version, message, exc", [
    ("0.10.1.1", "Can only specify 'none' or 'all'", "AssertionError"),
    ("0.33.0", "custom_ops can contain only one base mode: 'all' or 'none'", "ValueError")])
def test_the_release_refuses_two_base_modes_in_its_own_words(version, message, exc):
    assert refusal(spec(version, "compilation_config"), {"custom_ops": ["all", "none"]}) == \
        (message, exc, ["custom_ops"])
    assert refusal(spec(version, "compilation_config"), {"custom_ops": ["all", "+rms_norm"]}) is None


def test_a_check_a_release_lacks_refuses_nothing():
    assert refusal(spec("0.10.1.1", "compilation_config"), {"custom_ops": ["rms_norm"]}) is None
    message, _, _ = refusal(spec("0.33.0", "compilation_config"), {"custom_ops": ["rms_norm"]})
    assert message.startswith("Invalid syntax 'rms_norm' for custom op")


def test_a_conditional_append_counts_only_when_every_launch_refuses():
    # 0.33's post-init may append +rotary_embedding: -rotary_embedding conflicts only then
    compilation = spec("0.33.0", "compilation_config")
    assert refusal(compilation, {"custom_ops": ["-rotary_embedding"]}) is None
    message, _, _ = refusal(compilation, {"custom_ops": ["+rotary_embedding", "-rotary_embedding"]})
    assert "enable and disable the same operation(s): rotary_embedding." in message


def test_a_value_of_another_type_than_the_field_is_not_judged():
    pooler = spec("0.33.0", "pooler_config")         # logit_sigma: Optional[float]
    assert refusal(pooler, {"logit_sigma": 0.0}) == \
        ("logit_sigma cannot be 0 (division by zero)", "ValueError", ["logit_sigma"])
    assert refusal(pooler, {"logit_sigma": 0}) is None          # pydantic coerces an int first
    assert refusal(pooler, {"logit_sigma": "0"}) is None
    assert refusal(pooler, {"logit_sigma": 0.5}) is None


def test_a_check_reads_a_field_the_user_wrote():
    kv = spec("0.33.0", "kv_transfer_config")
    assert refusal(kv, {}) is None                             # the defaults alone pass
    message, exc, fields = refusal(kv, {"kv_connector": "NixlConnector"})
    assert message.startswith("Please specify kv_role when kv_connector is set") and exc == "ValueError"
    assert refusal(kv, {"kv_connector": "NixlConnector", "kv_role": "kv_both"}) is None


def test_no_checks_or_no_mapping_no_refusal():
    assert refusal(spec("0.33.0", "speculative_config"), {"method": "ngram"}) is None
    assert refusal(spec("0.33.0", "pooler_config"), ["logit_sigma"]) is None
