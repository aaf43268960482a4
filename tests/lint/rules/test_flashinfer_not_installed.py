"""PO502 flashinfer-not-installed beyond its examples."""

from __future__ import annotations

import pytest

from patchops.lint.rules.flashinfer_not_installed import FlashinferNotInstalled
from patchops.lint.vllm.messages import FLASHINFER_MISSING_IMPORT as MSG_IMPORT
from patchops.lint.vllm.messages import FLASHINFER_MISSING_MODEL_CONFIG as MSG_MODEL_CONFIG
from patchops.lint.vllm.messages import FLASHINFER_MISSING_NONE_CALL as MSG_NONE_CALL

from lintkit import findings


def lint(backend, vllm, has_flashinfer=False, **facts):
    text = f"model: m\nenv:\n  VLLM_ATTENTION_BACKEND: {backend}\n"
    return findings(FlashinferNotInstalled.code, text, vllm, has_flashinfer=has_flashinfer, **facts)


def test_message_by_version_and_name():
    assert lint("FLASHINFER", "0.7.3")[0].vllm_message == MSG_NONE_CALL
    for vllm in ("0.8.5", "0.9.2", "0.10.2", "0.11.0", "0.12.0"):
        assert lint("FLASHINFER", vllm)[0].vllm_message == MSG_MODEL_CONFIG, vllm
    assert lint("FLASHINFER_MLA", "0.11.0")[0].vllm_message == MSG_IMPORT


def test_unknown_presence_is_an_info_note():
    found = lint("FLASHINFER", "0.8.5", has_flashinfer=None, required_dists=())
    assert [d.severity for d in found] == ["info"]
    assert "cannot tell" in found[0].explanation
    assert lint("FLASHINFER", "0.8.5", has_flashinfer=True) == []


def test_shipped_facts_answer_with_the_wheels_dependencies():
    [found] = lint("FLASHINFER", "0.10.1.1", has_flashinfer=None)
    assert found.severity == "error"
    assert "not among the dependencies of the vLLM 0.10.1.1 wheel" in found.explanation
    assert "--vllm SITE_PACKAGES" in found.fix
    # 0.12.0 requires flashinfer-python; an inspected copy wins over the wheel's list.
    assert lint("FLASHINFER", "0.12.0", has_flashinfer=None) == []
    assert [d.severity for d in lint("FLASHINFER", "0.12.0", has_flashinfer=False)] == ["error"]


def test_names_this_version_does_not_know_are_left_to_po501():
    assert lint("FLASHINFER_VLLM_V1", "0.8.5") == []        # not in 0.8.5's enum
    assert lint("flashinfer", "0.12.0") == []


def test_message_reads_well():
    [found] = lint("FLASHINFER", "0.8.5")
    assert found.message == 'no flashinfer beside vLLM 0.8.5 for VLLM_ATTENTION_BACKEND="FLASHINFER"'
    assert found.explanation == "vLLM refuses to start"
    assert found.fields == ("VLLM_ATTENTION_BACKEND",)


@pytest.mark.vllm
@pytest.mark.parametrize("version,relative", [
    ("0.8.5", "vllm/config.py"), ("0.10.2", "vllm/config/__init__.py"),
    ("0.11.0", "vllm/config/model.py"), ("0.12.0", "vllm/config/model.py"),
])
def test_model_config_message_is_in_the_source(vllm_site, version, relative):
    text = (vllm_site(version) / relative).read_text(encoding="utf-8")
    for fragment in ('"VLLM_ATTENTION_BACKEND is set to FLASHINFER, but flashinfer "',
                     '"module was not found. See "',
                     '"https://github.com/vllm-project/vllm/blob/main/docker/Dockerfile "',
                     '"for instructions on how to install it."', 'backend == "FLASHINFER"'):
        assert fragment in text, (version, fragment)


@pytest.mark.vllm
def test_old_flashinfer_backend_swallows_the_import_error(vllm_site):
    text = (vllm_site("0.7.3") / "vllm/attention/backends/flashinfer.py").read_text(encoding="utf-8")
    assert "except ImportError:" in text and "BatchDecodeWithPagedKVCacheWrapper = None" in text
