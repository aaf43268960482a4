"""Paths vLLM reads beside the model: a tokenizer folder (PO908), a mistral-format params.json (PO319)."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_file
from patchops.lint.rules.tokenizer_not_found import TokenizerNotFound
from patchops.lint.runner import lint_config


def lint_file(tmp_path, text: str, vllm: str = "0.33.0"):
    path = tmp_path / "serve.yaml"
    path.write_text(text)
    return lint_config(load_file(path), facts_for_version(vllm))


@pytest.mark.parametrize("value, flagged", [
    ("./tok", True), ("~/no-such-tokenizer", True), ("a/b/c", True), ("org/name", False),
    ("name", False), ("s3://bucket/tok", False)])
def test_a_tokenizer_is_flagged_only_when_it_cannot_be_a_repo_id(tmp_path, monkeypatch, value, flagged):
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    found = [d for d in lint_file(tmp_path, f"model: m\nargs:\n  tokenizer: {value}\n") if d.code == "PO908"]
    assert bool(found) == flagged
    if flagged:
        assert found[0].severity == "error" and (found[0].line, found[0].column) == (3, 3)


def test_a_tokenizer_folder_beside_the_spec_is_found(tmp_path):
    (tmp_path / "tok").mkdir()
    assert not [d for d in lint_file(tmp_path, "model: m\nargs:\n  tokenizer: ./tok\n") if d.code == "PO908"]


@pytest.mark.parametrize("offline, cached, flagged", [
    ("HF_HUB_OFFLINE: '1'", False, True), ("TRANSFORMERS_OFFLINE: 'yes'", False, True),
    ("HF_HUB_OFFLINE: '1'", True, False), ("HF_HUB_OFFLINE: '0'", False, False), ("", False, False)])
def test_offline_a_repo_id_needs_a_snapshot_in_the_cache(tmp_path, monkeypatch, offline, cached, flagged):
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    if cached:
        (tmp_path / "hf" / "hub" / "models--org--tok" / "snapshots" / "abc123").mkdir(parents=True)
    env = f"env:\n  HF_HOME: {tmp_path / 'hf'}\n  {offline}\n"
    for vllm in ("0.33.0", "0.10.1.1"):
        found = [d for d in lint_file(tmp_path, f"model: m\n{env}args:\n  tokenizer: org/tok\n", vllm)
                 if d.code == "PO908"]
        assert bool(found) == flagged
        if flagged:
            assert found[0].severity == "error" and found[0].line == 6 and "holds no copy" in found[0].explanation
            assert found[0].vllm_message.startswith("LocalEntryNotFoundError: Cannot find an appropriate cached")


def test_the_tokenizer_fails_before_the_engine_config_from_0_12():
    assert TokenizerNotFound.stage_in("0.11.0") == "later"
    assert TokenizerNotFound.stage_in("0.12.0") == "config"


def test_mistral_format_needs_params_json_in_the_folder(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}")
    text = f"model: {model}\nargs:\n  config-format: mistral\n"
    [hit] = [d for d in lint_file(tmp_path, text, "0.8.5") if d.code == "PO319"]
    assert hit.severity == "error" and (hit.line, hit.column) == (3, 3)
    (model / "params.json").write_text("{}")
    assert not [d for d in lint_file(tmp_path, text, "0.8.5") if d.code == "PO319"]


MODEL = "tests/conformance/corpus/models/Qwen2.5-7B-Instruct"   # max_position_embeddings 32768


@pytest.mark.parametrize("vllm, extra", [
    ("0.33.0", "  hf-overrides: '{\"max_position_embeddings\": 65536}'\n"),
    ("0.8.5", "  rope-scaling: '{\"rope_type\": \"dynamic\", \"factor\": 2.0}'\n")])
def test_the_launch_overrides_raise_the_derived_length(tmp_path, vllm, extra):
    """gen/tail-028, -030: vLLM derives 65536 from the overridden config, and accepts it."""
    root = __import__("pathlib").Path(__file__).resolve().parents[3]
    head = f"model: {root / MODEL}\nargs:\n"
    for length, refused in ((65536, False), (65537, True)):
        found = lint_file(tmp_path, head + f"  max-model-len: {length}\n" + extra, vllm)
        assert bool([d for d in found if d.code == "PO207" and d.severity == "error"]) == refused
    plain = lint_file(tmp_path, head + "  max-model-len: 65536\n", vllm)
    assert [d.code for d in plain if d.code == "PO207"] == ["PO207"]


def test_a_tokenizer_name_no_file_can_have_is_reported_not_raised(tmp_path):
    found = [d for d in lint_file(tmp_path, f"model: m\nargs:\n  tokenizer: /{'a' * 5000}\n") if d.code == "PO908"]
    assert [(d.severity, d.line) for d in found] == [("error", 3)]
