"""PO305 multistep-chunked-prefill-with-pp beyond its examples."""

from __future__ import annotations

from lintkit import linter


CODE = "PO305"


lint = linter(CODE, kind="command")


def test_explicit_chunked_prefill_is_an_error():
    [found] = lint("vllm serve m -pp 2 --num-scheduler-steps 8 --enable-chunked-prefill true\n", "0.7.3")
    assert found.severity == "error" and (found.line, found.column) == (1, 14)
    assert found.vllm_message == "Multi-Step Chunked-Prefill is not supported for pipeline-parallel-size > 1"


def test_automatic_chunked_prefill_is_possible():
    [found] = lint("vllm serve m -pp 2 --num-scheduler-steps 8 --max-model-len 131072\n", "0.9.2")
    assert found.severity == "warning" and "possibly" in found.explanation
    assert "max_model_len" in found.fields


def test_quiet_cases():
    assert lint("vllm serve m -pp 2 --num-scheduler-steps 8 --max-model-len 8192\n", "0.9.2") == []
    assert lint("vllm serve m -tp 2 --num-scheduler-steps 8 --max-model-len 131072\n", "0.9.2") == []
    assert lint("vllm serve m -pp 2 --max-model-len 131072 --enable-chunked-prefill true\n", "0.7.3") == []
