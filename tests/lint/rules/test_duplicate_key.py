"""PO104 duplicate-key beyond its examples."""

from __future__ import annotations

from patchops.lint.rules.duplicate_key import DuplicateKey

from lintkit import linter


lint = linter(DuplicateKey.code, vllm="0.8.5", kind="spec")


def test_same_value_twice_is_info():
    [found] = lint("model: m\nargs:\n  max-model-len: 4096\n  max_model_len: 4096\n")
    assert found.severity == "info" and (found.line, found.column) == (3, 3)
    assert "same value (4096)" in found.message


def test_env_and_context_duplicates():
    found = lint("model: m\nenv:\n  VLLM_USE_V1: '1'\n  VLLM_USE_V1: '0'\n")
    assert [(d.line, d.fields) for d in found] == [(3, ("VLLM_USE_V1",))]
    assert "overrides it with '0'" in found[0].explanation


def test_command_line_duplicate_points_at_the_first():
    [found] = lint("vllm serve m --max-num-seqs 64 --max-num-seqs=128\n", kind="command")
    assert (found.line, found.column) == (1, 14)
    assert found.message.startswith('duplicate option "--max-num-seqs": this value (64)')
    assert "at column 32" in found.message


def test_no_duplicates_no_findings():
    assert lint("model: m\nargs:\n  max-model-len: 4096\n") == []


def test_dotted_o_keys_are_told_apart_by_their_values():
    """`-O.x v` is a key of its own with value v (not `-O` with value `.x`): the later value wins."""
    [found] = lint("vllm serve m -O.cudagraph_mode PIECEWISE -O.cudagraph_mode FULL\n", kind="command")
    assert found.severity == "warning" and (found.line, found.column) == (1, 14)
    assert "this value (PIECEWISE) is silently ignored" in found.explanation and "with FULL" in found.explanation
    [same] = lint("vllm serve m -O3 -O3\n", kind="command")
    assert same.severity == "info" and "same value (3)" in same.message
