"""PO405: decode steps of 1 + k tokens per request against the largest captured size."""

from __future__ import annotations

from lintkit import findings

from patchops.lint.rules.spec_decode_batch_above_capture import NGRAM

SIZES = "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16, 32]}'\n"


def spec(levels: str, tokens: int = 3) -> str:
    return "model: m\nargs:\n" + SIZES + NGRAM % tokens + f"workload:\n  concurrency: {levels}\n"


def test_a_step_of_exactly_the_largest_size_is_captured_one_more_request_is_not():
    assert findings("PO405", spec("[8]"), vllm="0.10.1.1") == []          # 8 x 4 = 32
    [hit] = findings("PO405", spec("[8]", tokens=4), vllm="0.10.1.1")    # 8 x 5 = 40
    assert (hit.severity, hit.line) == ("warning", 6)
    assert "8 (40 tokens)" in hit.explanation and "largest CUDA graph capture size 32" in hit.message


def test_levels_above_the_largest_size_are_left_to_concurrency_without_cuda_graphs():
    text = spec("[8, 9, 64]")
    [hit] = findings("PO405", text, vllm="0.10.1.1")
    assert "concurrency 9 (36 tokens) are" in hit.explanation and "64" not in hit.explanation.split(" are ")[0]
    assert [d.code for d in findings("PO401", text, vllm="0.10.1.1")] == ["PO401"]


def test_without_speculative_tokens_there_is_nothing_to_multiply():
    text = "model: m\nargs:\n" + SIZES + "workload:\n  concurrency: [32]\n"
    assert findings("PO405", text, vllm="0.10.1.1") == []
