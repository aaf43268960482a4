"""PO503 attention-backend-env-removed beyond its examples."""

from __future__ import annotations


import pytest

from patchops.lint.rules.attention_backend_env_removed import AttentionBackendEnvRemoved
from patchops.lint.vllm.messages import UNKNOWN_ENV_VARIABLE as MSG_UNKNOWN_ENV

from lintkit import linter, said


lint = linter(AttentionBackendEnvRemoved.code, kind="spec")


ENV = "model: m\nenv:\n  VLLM_ATTENTION_BACKEND: {}\n"


def test_0_15_ignores_it_without_a_word():
    [found] = lint(ENV.format("FLASHINFER"), "0.15.0")
    assert found.severity == "warning" and found.vllm_message is None
    assert "without a word" in said(found)


def test_0_20_warns_and_can_fail_hard():
    [found] = lint(ENV.format("FLASHINFER"), "0.20.0")
    assert found.vllm_message == MSG_UNKNOWN_ENV
    text = ENV.format("FLASHINFER") + "args:\n  fail-on-environ-validation: true\n"
    [found] = lint(text, "0.20.0")
    assert found.severity == "error"
    assert "fail_on_environ_validation" in found.fields


def test_fix_spells_the_option_value():
    [found] = lint(ENV.format("flash_attn_vllm_v1"), "0.33.0")
    assert found.fix == ("remove the variable and pass --attention-backend FLASH_ATTN "
                         "(in the spec's args: attention-backend: FLASH_ATTN)")


def test_quiet_while_the_variable_is_read():
    assert lint(ENV.format("FLASHINFER"), "0.12.0") == []
    assert lint("model: m\nargs:\n  attention-backend: FLASHINFER\n", "0.33.0") == []


@pytest.mark.vllm
def test_messages_and_removal_are_in_the_source(vllm_site):
    envs_015 = (vllm_site("0.15.0") / "vllm/envs.py").read_text(encoding="utf-8")
    assert '"VLLM_ATTENTION_BACKEND"' not in envs_015
    assert "Unknown vLLM environment variable detected" not in envs_015
    envs_020 = (vllm_site("0.20.0") / "vllm/envs.py").read_text(encoding="utf-8")
    assert 'f"Unknown vLLM environment variable detected: {env}"' in envs_020
    assert '"Unknown vLLM environment variable detected: %s", env' in envs_020
