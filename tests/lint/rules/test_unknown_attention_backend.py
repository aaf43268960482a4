"""PO501 unknown-attention-backend across the releases whose backend enums differ."""

from __future__ import annotations

import pytest

from patchops.lint.rules.unknown_attention_backend import UnknownAttentionBackend
from patchops.lint.vllm.messages import BACKEND_FALLS_BACK_TO_V0 as MSG_FALLBACK
from patchops.lint.vllm.routing import v1_oracle_backends

from lintkit import findings


def lint(backend, vllm, use_v1=None, **facts_changes):
    env = f"  VLLM_ATTENTION_BACKEND: {backend}\n"
    if use_v1 is not None:
        env += f"  VLLM_USE_V1: '{use_v1}'\n"
    return findings(UnknownAttentionBackend.code, f"model: m\nenv:\n{env}", vllm, **facts_changes)


@pytest.mark.parametrize("vllm,severity,vllm_message", [
    ("0.6.3.post1", "error", "Invalid attention backend 'FLASH_ATTENTION'. Available backends: "),
    ("0.7.3", "warning", None),
    ("0.8.5", "warning", MSG_FALLBACK.format(x="FLASH_ATTENTION")),
    ("0.10.0", "warning", MSG_FALLBACK.format(x="FLASH_ATTENTION")),
    ("0.10.2", "error", "Invalid attention backend: 'FLASH_ATTENTION'. Valid backends are: ["),
    ("0.11.0", "error", MSG_FALLBACK.format(x="FLASH_ATTENTION")),
    ("0.12.0", "error", "Invalid value 'FLASH_ATTENTION' for VLLM_ATTENTION_BACKEND. Valid options: ["),
])
def test_unknown_name_by_version(vllm, severity, vllm_message):
    [found] = lint("FLASH_ATTENTION", vllm)
    assert found.severity == severity
    assert found.fix == "did you mean VLLM_ATTENTION_BACKEND=FLASH_ATTN?"
    if vllm_message is None:
        assert found.vllm_message is None
    else:
        assert found.vllm_message.startswith(vllm_message)


def test_lower_case_gets_the_case_note():
    [found] = lint("flash_attn", "0.6.3.post1")
    assert "(names are case-sensitive)" in found.explanation
    assert found.fix == "did you mean VLLM_ATTENTION_BACKEND=FLASH_ATTN?"


def test_use_v1_decides_the_fallback():
    [found] = lint("XFORMERS", "0.9.2", use_v1=1)
    assert found.severity == "error"
    assert found.vllm_message == "VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND=XFORMERS."
    assert found.fields == ("VLLM_ATTENTION_BACKEND", "VLLM_USE_V1")
    assert lint("XFORMERS", "0.9.2", use_v1=0) == []       # V0 chosen on purpose
    assert lint("XFORMERS", "0.11.0") == []                # a V1 backend in 0.11


def test_valid_name_outside_the_v1_list_crashes_0_11():
    [found] = lint("IPEX", "0.11.0")
    assert found.severity == "error" and "assert envs.VLLM_USE_V1" in found.explanation


def test_name_only_the_v1_oracle_knows_is_ignored_on_0_8_5():
    # FLASHINFER_VLLM_V1 is in 0.8.5's V1 list but not in its _Backend enum
    [found] = lint("FLASHINFER_VLLM_V1", "0.8.5")
    assert found.severity == "warning" and found.vllm_message is None
    assert "silently ignores it" in found.explanation


def test_v1_oracle_table():
    assert "XFORMERS_VLLM_V1" in v1_oracle_backends("0.10.1.1")
    assert "XFORMERS" in v1_oracle_backends("0.11.0")
    assert v1_oracle_backends("0.7.3") is None and v1_oracle_backends("0.12.0") is None


def test_quiet_without_a_backend_list_or_the_variable():
    assert lint("WHATEVER", "0.8.5", attention_backends=()) == []
    assert lint("WHATEVER", "0.8.5", attention_env_var=False) == []
    # 0.15+ has no variable: only --attention-backend is checked.
    assert lint("WHATEVER", "0.15.0") == []


# --- the quoted vLLM messages are vLLM's own text ---------------------------------------------


def _source(vllm_site, version, relative):
    return (vllm_site(version) / relative).read_text(encoding="utf-8")


@pytest.mark.vllm
@pytest.mark.parametrize("version,relative,fragments", [
    ("0.6.3.post1", "vllm/attention/selector.py",
     ["f\"Invalid attention backend '{backend_name}'. \"",
      "f\"Available backends: {', '.join(backend_members)} \"", '"(case-sensitive).")']),
    ("0.10.2", "vllm/attention/selector.py",
     ["f\"Invalid attention backend: '{backend_by_env_var}'. \"", 'f"Valid backends are: ']),
    ("0.12.0", "vllm/envs.py",
     ["f\"Invalid value '{value}' for {env_name}. \"", 'f"Valid options: {actual_choices}."']),
    ("0.8.5", "vllm/engine/arg_utils.py",
     ['f"{feature_name} is not supported by the V1 Engine. "', '"Falling back to V0. "',
      'f"We recommend to remove {feature_name} from your config "', '"in favor of the V1 Engine."',
      'f"VLLM_USE_V1=1 is not supported with {feature_name}.")',
      'name = f"VLLM_ATTENTION_BACKEND={envs.VLLM_ATTENTION_BACKEND}"']),
    ("0.11.0", "vllm/entrypoints/openai/api_server.py", ["assert envs.VLLM_USE_V1"]),
])
def test_quoted_messages_are_in_the_source(vllm_site, version, relative, fragments):
    text = _source(vllm_site, version, relative)
    for fragment in fragments:
        assert fragment in text, (version, relative, fragment)


@pytest.mark.vllm
@pytest.mark.parametrize("version,relative,start", [
    ("0.8.5", "vllm/engine/arg_utils.py", "V1_BACKENDS = ["),
    ("0.9.2", "vllm/engine/arg_utils.py", "V1_BACKENDS = ["),
    ("0.10.1.1", "vllm/engine/arg_utils.py", "V1_BACKENDS = ["),
    ("0.10.2", "vllm/engine/arg_utils.py", "V1_BACKENDS = ["),
    ("0.11.0", "vllm/engine/arg_utils.py", "V1_BACKENDS = ["),
])
def test_v1_oracle_table_matches_the_source(vllm_site, version, relative, start):
    import ast

    text = _source(vllm_site, version, relative)
    begin = text.index(start) + len("V1_BACKENDS = ")
    listed = ast.literal_eval(text[begin:text.index("]", begin) + 1])
    assert tuple(listed) == v1_oracle_backends(version)


def test_the_failure_is_later_only_where_the_selector_raises():
    from patchops.lint.rules.unknown_attention_backend import UnknownAttentionBackend as rule

    assert [rule.stage_in(v) for v in ("0.10.0", "0.10.1.1", "0.10.2", "0.11.0")] == \
        ["config", "later", "later", "config"]
