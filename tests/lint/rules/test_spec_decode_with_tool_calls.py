"""PO906: any speculative method, either way of saying the server answers tool calls."""

from __future__ import annotations

from lintkit import linter

lint = linter("PO906", vllm="0.33.0")
MTP = "model: m\nargs:\n  speculative-config: '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'\n"


def test_mtp_with_a_tool_workload_is_a_correctness_warning():
    [hit] = lint(MTP + "workload:\n  tools: true\n")
    assert (hit.severity, hit.line, hit.column) == ("warning", 3, 3)
    assert hit.message == "speculative decoding (mtp, 1 speculative token) with tool calls risks wrong tool calls"
    assert hit.explanation.startswith("tool calls: the workload sends tools. This is a correctness risk, not a "
                                      "speed one")


def test_no_tools_no_warning():
    assert lint(MTP) == []
    assert lint(MTP + "workload:\n  tools: false\n") == []
    assert lint("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: hermes\n"
                "workload:\n  tools: true\n") == []
