"""PO103 yaml-11-boolean beyond its examples."""

from __future__ import annotations

from patchops.lint.rules.yaml_11_boolean import Yaml11Boolean

from lintkit import linter


lint = linter(Yaml11Boolean.code, vllm="0.8.5", kind="spec")


def test_true_for_a_value_option_stops_vllm():
    [found] = lint("model: m\nargs:\n  load-format: on\n")
    assert found.severity == "error"
    assert found.vllm_message == "vllm serve: error: argument --load-format: expected one argument"
    assert found.fix.startswith("write one of its choices: auto, pt, safetensors")


def test_quoted_words_and_switches_are_quiet():
    assert lint('model: m\nargs:\n  load-format: "on"\n') == []
    assert lint("model: m\nargs:\n  trust-remote-code: true\n  enable-prefix-caching: false\n") == []
    assert lint("model: m\nargs:\n  hf-token: yes\n") == []          # nargs="?": a bare flag is True
    assert lint("model: m\nargs:\n  swap-space: 0\n") == []


def test_a_switch_gets_the_boolean_meant_and_says_so_as_info():
    [found] = lint("model: m\nargs:\n  trust-remote-code: yes\n  enable-prefix-caching: off\n")
    assert (found.line, found.column, found.severity) == (3, 3, "info")
    assert found.vllm_message is None and found.fix == "write trust-remote-code: true"
    assert [(e.start_at, e.end_at, e.content) for e in found.autofix.edits] == [((3, 22), (3, 25), "true")]
    # a dropped `off` is yaml-false-dropped's (or harmless), never this arm's
    assert lint("model: m\nargs:\n  enforce-eager: off\n") == []
    # 0.6.3 turns it into the text "True" after a store_true flag: yaml-true-breaks-store-true
    assert lint("model: m\nargs:\n  trust-remote-code: yes\n", vllm="0.6.3.post1") == []


def test_env_values_are_text_in_a_spec():
    assert lint("model: m\nenv:\n  VLLM_USE_V1: yes\n") == []


def test_old_vllm_passes_the_text():
    # 0.6.3: `--swap-space False` (a float option rejects it), `--code-revision False` (taken)
    [found] = lint("model: m\nargs:\n  swap-space: off\n", vllm="0.6.3.post1")
    assert found.severity == "error"
    assert found.vllm_message == "vllm serve: error: argument --swap-space: invalid float value: 'False'"
    assert found.fix == "write swap-space: 0 if you meant off"
    [found] = lint("model: m\nargs:\n  code-revision: no\n", vllm="0.6.3.post1")
    assert found.severity == "warning"
    assert 'vLLM gets the text "False" instead' in found.explanation
