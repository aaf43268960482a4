"""Field workload situations (CoreX, long contexts, speculative decoding) as serve specs beside their model's config.json, linted as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchops import api

HERE = Path(__file__).resolve().parent / "workload_specs"


def lint(name: str, monkeypatch):
    monkeypatch.chdir(Path("/"))   # relative paths must resolve from the spec's folder, not from here
    return api.lint(HERE / name)


def test_request_too_long_against_the_length_derived_from_config_json(monkeypatch):
    result = lint("request-too-long.yaml", monkeypatch)
    assert result.model_config == str(HERE / "models" / "Qwen2.5-7B-Instruct" / "config.json")
    [hit] = [d for d in result.diagnostics if d.code == "PO209"]
    assert (hit.severity, hit.line, hit.column) == ("error", 11, 3)
    assert "prompt_tokens 31000 + max_tokens 2048 = 33048 > max_model_len 32768" in hit.message
    assert hit.explanation.startswith("max_model_len 32768 (derived from the model's config.json, "
                                      "max_position_embeddings)")
    assert hit.vllm_message.startswith("'max_tokens' or 'max_completion_tokens' is too large: 2048.")


def test_spec_decode_steps_above_the_capture_list(monkeypatch):
    [hit] = [d for d in lint("spec-decode-capture.yaml", monkeypatch).diagnostics if d.code == "PO405"]
    assert (hit.severity, hit.line) == ("warning", 10)
    assert "concurrency 64 (256 tokens)" in hit.explanation and "capture size 128" in hit.message
    assert "max_num_seqs 64 (set by you; 256 tokens)" in hit.explanation


def test_spec_decode_with_tool_calls(monkeypatch):
    [hit] = [d for d in lint("spec-decode-tools.yaml", monkeypatch).diagnostics if d.code == "PO906"]
    assert (hit.severity, hit.line) == ("warning", 8)
    assert "correctness risk, not a speed one" in hit.explanation
    assert "enable_auto_tool_choice is on and the workload sends tools" in hit.explanation


@pytest.mark.parametrize("name,severity,plugin_finding", [
    ("parser-plugin.yaml", "warning", []),
    ("parser-plugin-missing.yaml", "error", ["warning"]),
])
def test_parser_plugin_beside_the_spec(monkeypatch, name, severity, plugin_finding):
    found = lint(name, monkeypatch).diagnostics
    [unknown] = [d for d in found if d.code == "PO901"]
    assert unknown.severity == severity
    assert [d.severity for d in found if d.code == "PO907"] == plugin_finding
    if severity == "warning":
        assert str(HERE / "house_parser.py") in unknown.explanation


@pytest.mark.parametrize("written", ["300", "[300]"])
def test_one_concurrency_level_may_be_written_as_a_number(written, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(f"model: m\nvllm: {{version: 0.6.3.post1}}\nworkload:\n  concurrency: {written}\n")
    found = [d for d in api.lint(spec).diagnostics if d.code == "PO204"]
    assert [(d.line, d.severity) for d in found] == [(4, "warning")]
    assert found[0].message.startswith("workload concurrency 300 > max_num_seqs 256")
