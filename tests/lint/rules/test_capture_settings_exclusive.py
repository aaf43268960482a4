"""PO404 capture-settings-exclusive beyond its examples."""

from __future__ import annotations


from lintkit import linter, said


CODE = "PO404"


lint = linter(CODE, vllm="0.12.0", kind="config")


def test_cuda_graph_sizes_with_compilation_config():
    [found] = lint("model: m\ncompilation-config: '{\"cudagraph_capture_sizes\": [1, 2]}'\n"
                   "cuda-graph-sizes: [4]\n")
    assert (found.line, found.column) == (3, 1)
    assert found.vllm_message == ("cuda_graph_sizes and compilation_config.cudagraph_capture_sizes "
                                  "are mutually exclusive")


def test_max_in_both_places():
    [found] = lint("model: m\ncompilation-config: '{\"max_cudagraph_capture_size\": 64}'\n"
                   "max-cudagraph-capture-size: 64\n")
    assert found.vllm_message == ("max_cudagraph_capture_size and compilation_config."
                                  "max_cudagraph_capture_size are mutually exclusive")


def test_max_must_match_the_list_after_the_budget_filter():
    text = ("model: m\nvllm: {{version: 0.12.0}}\nhardware: {hw}\nargs:\n"
            "  cudagraph-capture-sizes: [1, 2, 4, 8, 4096]\n  max-cudagraph-capture-size: 4096\n")
    [found] = lint(text.format(hw="{gpus: 1, memory_gib: 48}"), kind="spec")
    assert found.severity == "error" and (found.line, found.column) == (6, 3)
    assert found.vllm_message == ("customized max_cudagraph_capture_size(=4096) should be consistent "
                                  "with the max value of cudagraph_capture_sizes(=8)")
    assert "dropped" in said(found)
    [found] = lint(text.format(hw="{gpus: 1}"), kind="spec")
    assert found.severity == "warning" and "possibly" in found.message
    assert lint(text.format(hw="{gpus: 1, memory_gib: 80, compute_capability: 9.0}"), kind="spec") == []


def test_empty_list_from_compilation_config():
    [found] = lint("model: m\ncompilation-config: '{\"cudagraph_capture_sizes\": []}'\n")
    assert found.vllm_message == ("cudagraph_capture_sizes should contain at least one element when "
                                  "using cuda graph.")
    assert lint("model: m\nenforce-eager: true\ncompilation-config: '{\"cudagraph_capture_sizes\": []}'\n") == []


def test_quiet_before_0_12():
    assert lint("model: m\ncompilation-config: '{\"cudagraph_capture_sizes\": [1, 2]}'\n"
                "cuda-graph-sizes: [4]\n", vllm="0.11.0") == []
