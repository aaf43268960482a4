"""PO203 chunked-prefill-off-ignored beyond its examples."""

from __future__ import annotations

from lintkit import linter


CODE = "PO203"
CMD = "vllm serve /models/Qwen2.5-7B-Instruct --no-enable-chunked-prefill --max-model-len 8192\n"


lint = linter(CODE, kind="command")


def test_v1_ignores_false():
    [found] = lint(CMD, "0.9.2")
    assert found.severity == "warning" and "ignored" in found.message
    assert found.fields == ("enable_chunked_prefill",)
    assert "VLLM_USE_V1=0" in found.fix
    [found] = lint(CMD, "0.11.0")
    assert "0.12" in found.fix


def test_0_12_respects_it_with_a_note():
    [found] = lint(CMD, "0.33.0")
    assert found.severity == "info"
    assert found.vllm_message.startswith("This model does not officially support disabling chunked prefill.")


def test_quiet_where_false_is_honoured_or_never_arrives():
    assert lint("VLLM_USE_V1=0 " + CMD, "0.8.5") == []
    assert lint(CMD.replace("--no-enable", "--num-scheduler-steps 8 --no-enable"), "0.8.5") == []
    # a YAML false is dropped before vLLM sees it: PO102 explains that one
    assert lint("model: m\nenable-chunked-prefill: false\n", "0.8.5", kind="config") == []
    assert lint(CMD.replace("8192", "8192 --task embed"), "0.9.2") == []
