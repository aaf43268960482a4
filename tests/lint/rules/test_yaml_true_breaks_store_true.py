"""PO106 yaml-true-breaks-store-true beyond its examples."""

from __future__ import annotations

from patchops.lint.rules.yaml_true_breaks_store_true import YamlTrueBreaksStoreTrue

from lintkit import linter


lint = linter(YamlTrueBreaksStoreTrue.code, vllm="0.6.3.post1", kind="spec")


def test_false_breaks_too():
    [found] = lint("model: m\nargs:\n  enforce-eager: false\n")
    assert found.vllm_message == "vllm: error: unrecognized arguments: False"
    assert found.fix == "remove the key: --enforce-eager is off unless given"


def test_store_boolean_flags_take_the_value():
    assert lint("model: m\nargs:\n  enable-chunked-prefill: false\n") == []


def test_yes_is_true_too():
    [found] = lint("model: m\nargs:\n  disable-log-requests: yes\n")
    assert found.message.startswith('the value yes of "disable-log-requests" becomes '
                                    '"--disable-log-requests True"')


def test_only_0_6():
    assert YamlTrueBreaksStoreTrue.applies_to("0.6.3.post1")
    assert not YamlTrueBreaksStoreTrue.applies_to("0.7.3")
