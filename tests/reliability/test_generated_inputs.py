"""Property tests: generated serve specs, configs, commands and patchsets keep the promise.

CI runs a few dozen examples of each; `bench/reliability.py` runs hundreds.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from devtools import generated_inputs as generated
from devtools import reliability_harness as harness
from reliability_fixtures import source  # noqa: F401 (fixtures)

FEW = settings(max_examples=int(os.environ.get("RELIABILITY_EXAMPLES", "40")), deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture
def no_vllm(monkeypatch, tmp_path):
    """No vLLM on the path, a private facts cache: lint answers from shipped facts or says why."""
    monkeypatch.setenv("PATCHOPS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATCHOPS_ROOTS", "")
    monkeypatch.delenv("PATCHOPS_FAULT", raising=False)


@FEW
@given(text=generated.SPEC_TEXT)
def test_generated_serve_specs(text, tmp_path, no_vllm):
    assert generated.check_lint(tmp_path / "in", text) == []


@FEW
@given(text=generated.CONFIG_TEXT)
def test_generated_vllm_configs(text, tmp_path, no_vllm):
    assert generated.check_lint(tmp_path / "in", text, kind="config.yaml") == []


@FEW
@given(command=generated.COMMAND)
def test_generated_launch_commands(command, tmp_path, no_vllm):
    assert generated.check_command(tmp_path / "in", command) == []


@pytest.fixture(scope="module")
def world(source, tmp_path_factory):
    return harness.build_world(tmp_path_factory.mktemp("generated"), source)


@FEW
@given(text=generated.PATCHSET_TEXT)
def test_generated_patchsets(text, world, no_vllm):
    assert generated.check_patchset(world, text) == []
