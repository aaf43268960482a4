"""lint/vllm/nested_fields.py: a JSON config flag's keys against the fields of vLLM's class."""

from __future__ import annotations

from patchops.lint.facts.model import facts_for_version
from patchops.lint.vllm.nested_fields import field_problem


def spec(version, dest):
    return facts_for_version(version).nested_configs[dest]


def test_a_key_the_class_lacks_is_refused_in_pydantics_or_dataclass_words():
    assert field_problem(spec("0.33.0", "speculative_config"), "method", "ngram") is None
    found = field_problem(spec("0.33.0", "speculative_config"), "num_spec_tokens", 2)
    assert found.headline == "has no field 'num_spec_tokens' in SpeculativeConfig"
    assert found.severity is None and found.vllm_message == "Extra inputs are not permitted"


def test_a_bound_on_a_field_holds_at_its_edge():
    speculative = spec("0.33.0", "speculative_config")       # num_speculative_tokens: gt=0
    assert field_problem(speculative, "num_speculative_tokens", 1) is None
    found = field_problem(speculative, "num_speculative_tokens", 0)
    assert found.vllm_message == "Input should be greater than 0"


def test_lax_mode_takes_a_numeric_string_for_an_int_but_not_a_word():
    speculative = spec("0.33.0", "speculative_config")
    assert field_problem(speculative, "num_speculative_tokens", "2") is None
    assert field_problem(speculative, "num_speculative_tokens", 2.0) is None
    found = field_problem(speculative, "num_speculative_tokens", "two")
    assert found.vllm_message == "Input should be a valid integer"


def test_a_choice_names_what_it_takes():
    found = field_problem(spec("0.33.0", "speculative_config"), "method", "medusa2")
    assert found.headline.startswith("method 'medusa2' is not one of its") and "'ngram'" in found.takes


def test_an_enum_by_name_takes_any_case_and_a_nested_class_names_its_path():
    compilation = spec("0.33.0", "compilation_config")
    assert field_problem(compilation, "cudagraph_mode", "piecewise") is None
    assert field_problem(compilation, "cudagraph_mode", "partial").vllm_message == "KeyError: 'PARTIAL'"
    assert field_problem(compilation, "mode", 3) is None
    assert field_problem(compilation, "mode", 4).vllm_message == "mode: Input should be 0, 1, 2 or 3"
    found = field_problem(compilation, "pass_config", {"fuse_norm_quant": True, "fuse_everything": True})
    assert found.vllm_message == "pass_config.fuse_everything: Unexpected keyword argument"


def test_a_class_without_validation_takes_any_value_of_its_fields_and_refuses_other_keys():
    old = spec("0.8.5", "speculative_config")          # a plain dataclass
    assert field_problem(old, "num_speculative_tokens", "two") is None
    assert field_problem(old, "num_spec_tokens", 2).vllm_message == \
        "SpeculativeConfig.__init__() got an unexpected keyword argument 'num_spec_tokens'"


def test_a_class_that_ignores_extra_keys_gets_a_warning_for_one():
    found = field_problem(spec("0.10.1.1", "speculative_config"), "num_spec_tokens", 2)
    assert found.severity == "warning" and found.vllm_message is None
