"""PO403 cuda-graph-sizes-meaning-changed beyond its examples."""

from __future__ import annotations


from lintkit import linter, said


CODE = "PO403"


lint = linter(CODE, vllm="0.12.0", kind="command")


def test_single_value_means_only_that_size():
    [found] = lint("vllm serve m --cuda-graph-sizes 512\n")
    assert "capture only batch size 512" in said(found) and "padded up to 512" in said(found)
    assert "max-cudagraph-capture-size: 512" in found.fix
    assert found.vllm_message.startswith("--cuda-graph-sizes is deprecated")


def test_a_size_above_the_budget_is_dropped():
    [found] = lint("vllm serve m --cuda-graph-sizes 4096 --max-num-batched-tokens 2048\n")
    assert "dropped" in said(found)


def test_quiet_cases():
    assert lint("vllm serve m --cuda-graph-sizes 1 2 4\n") == []
    assert lint("vllm serve m --cuda-graph-sizes 512 --enforce-eager\n") == []
    assert lint("vllm serve m --cuda-graph-sizes 512\n", vllm="0.10.2") == []
