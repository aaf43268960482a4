"""`lint --engine`: real vLLM 0.8.5 (the conformance venv, built when absent) judges a launch.

The box has no GPU, so vLLM answers a declared profile; every check is vLLM's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchops import api
from patchops.cli.app import app
from patchops.run.engine_check import DEFAULT_PROFILE, profile_from
from patchops.host.hardware import parse_hardware

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conformance import venvs  # noqa: E402

MODEL = Path(__file__).resolve().parents[1] / "conformance" / "corpus" / "models" / "Qwen2.5-32B-Instruct"
# The seed's first failed launch, on V0 with the model's own 32K context.
REFUSED = (f"VLLM_USE_V1=0 vllm serve {MODEL} --max-model-len 32768 --max-num-batched-tokens 8192 "
           "--no-enable-chunked-prefill")
SMALLER = "max_num_batched_tokens (8192) is smaller than max_model_len (32768)"


@pytest.fixture(scope="module")
def python():
    return str(venvs.ensure("0.8.5").python)


def test_profile_from_hardware_fills_what_is_unstated():
    assert profile_from(None) == DEFAULT_PROFILE
    turing = profile_from(parse_hardware("4xT4:15GiB:cc7.5"))
    assert (turing["name"], turing["capability"], turing["memory_gib"], turing["count"]) == \
        ("T4", [7, 5], 15.0, 4)
    assert turing["sms"] == DEFAULT_PROFILE["sms"]


@pytest.mark.vllm
def test_engine_reproduces_the_seed_refusal_without_loading_a_model(python):
    found = api.engine_check(command=REFUSED, python=python, static_errors=1)
    verdict = found.verdict
    assert (verdict.ok, verdict.stage, verdict.error_type) == (False, "engine-config", "ValueError")
    assert verdict.message.startswith(SMALLER)
    assert verdict.profile == DEFAULT_PROFILE and found.profiled_because == "no GPU is visible here"
    assert found.agrees and found.vllm_version == "0.8.5"


@pytest.mark.vllm
def test_engine_ok_reports_what_vllm_resolved_and_a_disagreement(python):
    ok = REFUSED.replace("--no-enable-chunked-prefill", "--enable-chunked-prefill")
    found = api.engine_check(command=ok, python=python, hardware=parse_hardware("2xT4:15GiB:cc7.5"),
                             static_errors=1)
    verdict = found.verdict
    assert verdict.ok, verdict.message
    assert verdict.resolved["engine"] == "V0" and verdict.resolved["max_num_batched_tokens"] == 8192
    assert verdict.resolved["chunked_prefill"] is True
    assert verdict.profile["capability"] == [7, 5] and verdict.profile["count"] == 2
    assert not found.agrees          # the static side was told it found an error


@pytest.mark.vllm
def test_cli_prints_both_verdicts_and_exits_on_the_engine_error(python, tmp_path):
    done = CliRunner().invoke(app, ["lint", "--engine", "--no-detect-hardware", "--python", python,
                                    "--cmd", REFUSED], env={"PATCHOPS_ROOTS": "", "PYTHONPATH": ""})
    assert done.exit_code == 1, done.output
    assert "[PO201 batched-tokens-below-model-len]" in done.output
    assert f"<command>: engine: error at engine-config (vLLM 0.8.5 via {python}" in done.output
    assert "declared GPU profile: 8 x NVIDIA A100-SXM4-80GB" in done.output
    assert SMALLER in done.output and "agrees with the static lint" in done.output
