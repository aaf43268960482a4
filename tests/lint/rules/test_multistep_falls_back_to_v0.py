"""PO302 multistep-falls-back-to-v0 beyond its examples."""

from __future__ import annotations

from lintkit import linter


CODE = "PO302"
CMD = "vllm serve /models/Qwen2.5-7B-Instruct --num-scheduler-steps 8\n"


lint = linter(CODE, kind="command")


def test_silent_fallback_is_a_warning_with_vllms_log_line():
    [found] = lint(CMD, "0.9.2")
    assert found.severity == "warning" and "V0" in found.message
    assert found.vllm_message == (
        "--num-scheduler-steps is not supported by the V1 Engine. Falling back to V0. We recommend "
        "to remove --num-scheduler-steps from your config in favor of the V1 Engine.")


def test_forced_v1_is_an_error():
    [found] = lint("VLLM_USE_V1=1 " + CMD, "0.8.5")
    assert found.severity == "error"
    assert found.fields == ("num_scheduler_steps", "VLLM_USE_V1")
    assert found.vllm_message == "VLLM_USE_V1=1 is not supported with --num-scheduler-steps."


def test_quiet_cases():
    assert lint("VLLM_USE_V1=0 " + CMD, "0.10.0") == []
    assert lint(CMD.replace(" 8", " 1"), "0.9.2") == []
    assert lint(CMD, "0.7.3") == []           # V0 is 0.7.3's default
    # an earlier oracle check already sends the launch to V0 and is the one vLLM names
    assert lint(CMD.replace("\n", " --preemption-mode swap\n"), "0.8.5") == []
