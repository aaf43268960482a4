"""PO102 yaml-false-dropped beyond its examples."""

from __future__ import annotations

from patchops.lint.rules.yaml_false_dropped import YamlFalseDropped

from lintkit import linter


lint = linter(YamlFalseDropped.code, vllm="0.8.5", kind="spec")


def test_yaml11_no_on_a_switch_is_named():
    [found] = lint("model: m\nargs:\n  enable-prefix-caching: no\n")
    assert found.message.startswith('the value no of "enable-prefix-caching" (false to YAML) is dropped')
    assert found.fix == "write no-enable-prefix-caching: true (vLLM reads it as --no-enable-prefix-caching)"
    assert found.fields == ("enable_prefix_caching",) and found.vllm_message is None


def test_store_boolean_off_switch_on_073():
    [found] = lint("model: m\nargs:\n  enable-chunked-prefill: false\n", vllm="0.7.3")
    assert found.fix == 'write enable-chunked-prefill: "false" (quoted, vLLM reads the word)'


def test_default_false_is_quiet():
    assert lint("model: m\nargs:\n  trust-remote-code: false\n  enforce-eager: false\n") == []
    assert lint("model: m\nargs:\n  enforce-eager: false\n", vllm="0.9.2") == []


def test_unknown_key_with_false_is_reported_here():
    [found] = lint("model: m\nargs:\n  enable-frobnication: false\n")
    assert "has no --enable-frobnication flag either" in found.explanation


def test_non_boolean_option_keeps_its_default():
    [found] = lint("model: m\nswap_space: false\n", kind="config")
    assert "so swap_space keeps its default (4)" in found.explanation


def test_versions_and_entrypoint():
    assert not YamlFalseDropped.applies_to("0.6.3.post1")   # 0.6.3 sends `--k False`
    assert YamlFalseDropped.applies_to("0.33.0")
    text = "model: m\nentrypoint: api_server\nargs:\n  enable-prefix-caching: false\n"
    assert lint(text, vllm="0.33.0") == []                  # api_server reads --no-k (0.30+)
    assert len(lint(text.replace("api_server", "serve"), vllm="0.33.0")) == 1


def test_chunked_prefill_fix_depends_on_the_engine():
    text = "model: m\nargs:\n  enable-chunked-prefill: false\n"
    [v1] = lint(text, vllm="0.9.2")
    assert v1.fix.startswith("remove the key: the V1 engine of vLLM 0.9.2 turns chunked prefill on")
    [v0] = lint(text + "env:\n  VLLM_USE_V1: '0'\n", vllm="0.9.2")
    assert v0.fix.startswith("write no-enable-chunked-prefill: true")
    [new] = lint(text, vllm="0.12.0")
    assert new.fix.startswith("write no-enable-chunked-prefill: true")
