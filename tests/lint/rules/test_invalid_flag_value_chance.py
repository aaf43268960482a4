"""PO107 on a choice only some of a field's Literal types hold (0.8.5 guided decoding)."""

from __future__ import annotations

from lintkit import linter

lint = linter("PO107")


def test_a_value_of_one_literal_only_is_refused_with_the_reason():
    [found] = lint("model: m\nargs:\n  guided-decoding-backend: outlines\n")
    assert found.severity == "error"
    assert "invalid choice: 'outlines' (choose from 'auto', 'guidance', 'xgrammar')" in found.explanation
    assert "changes from launch to launch (PYTHONHASHSEED does not fix it)" in found.explanation
    assert found.vllm_message.endswith("(choose from 'auto', 'guidance', 'xgrammar')")


def test_values_every_literal_holds_pass_and_unknown_ones_list_all_choices():
    assert lint("model: m\nargs:\n  guided-decoding-backend: guidance\n") == []
    [found] = lint("model: m\nargs:\n  guided-decoding-backend: bogus\n")
    assert "'lm-format-enforcer', 'outlines'" in found.explanation and "PYTHONHASHSEED" not in found.explanation
    assert lint("model: m\nargs:\n  guided-decoding-backend: outlines\n", vllm="0.10.1.1") == []


def test_the_launches_that_accept_it_go_on_with_the_value():
    """Half of the launches take 'outlines': V0 then runs (the V1 oracle refuses it), chunked
    prefill stays off and the batch budget is checked against max_model_len (gen/serve-097)."""
    from lintkit import findings

    budget = "  max-num-batched-tokens: 64\n  max-model-len: 4096\n"
    by_chance = findings(None, "model: m\nargs:\n  guided-decoding-backend: outlines\n" + budget)
    assert {(d.code, d.severity) for d in by_chance} >= {("PO107", "error"), ("PO201", "error")}
    refused = findings(None, "model: m\nargs:\n  guided-decoding-backend: bogus\n" + budget)
    assert "PO107" in {d.code for d in refused} and "PO201" not in {d.code for d in refused}
