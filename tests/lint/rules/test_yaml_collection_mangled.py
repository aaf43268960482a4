"""PO105 yaml-collection-mangled beyond its examples."""

from __future__ import annotations

from patchops.lint.rules.yaml_collection_mangled import YamlCollectionMangled

from lintkit import linter


lint = linter(YamlCollectionMangled.code, vllm="0.8.5", kind="spec")


def test_list_to_a_text_option_is_accepted_as_brackets():
    [found] = lint("model: m\nargs:\n  served-model-name: [qwen, qwen-7b]\n")
    assert found.severity == "warning"
    assert "the text \"['qwen', 'qwen-7b']\"" in found.explanation
    assert found.fix == "remove the key and pass it on the command line: --served-model-name qwen qwen-7b"
    assert found.vllm_message is None


def test_lists_are_fine_from_0_10_2():
    assert lint("model: m\nargs:\n  served-model-name: [qwen, qwen-7b]\n", vllm="0.10.2") == []


def test_mapping_fix_offers_dotted_keys_from_0_9_only():
    [old] = lint("model: m\nargs:\n  speculative-config: {method: ngram, num_speculative_tokens: 4}\n")
    assert "dotted keys" not in old.fix
    [new] = lint("model: m\nargs:\n  compilation-config: {level: 3}\n", vllm="0.9.2")
    assert new.severity == "error"
    assert new.fix == ("write it as a JSON string: compilation-config: '{\"level\": 3}', "
                       "or as dotted keys (compilation-config.level: 3)")


def test_literal_eval_compilation_config_is_accepted_on_0_7_and_0_8():
    assert lint("model: m\nargs:\n  compilation-config: {level: 3}\n", vllm="0.7.3") == []
    assert lint("model: m\nargs:\n  compilation-config: {level: 3}\n", vllm="0.8.5") == []


def test_mappings_are_json_from_0_20():
    assert not YamlCollectionMangled.applies_to("0.20.0")
    assert YamlCollectionMangled.applies_to("0.15.0")
    [found] = lint("model: m\nargs:\n  compilation-config: {mode: 3}\n", vllm="0.15.0")
    assert found.severity == "error"


def test_command_line_lists_are_not_yaml():
    assert lint("vllm serve m --served-model-name qwen qwen-7b\n", kind="command") == []
