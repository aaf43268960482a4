"""Paths vLLM reads beside the model: a tokenizer folder (PO816), a mistral-format params.json (PO815)."""

from __future__ import annotations

import pytest

from patchops.lint.facts import facts_for_version
from patchops.lint.loaders import load_file
from patchops.lint.rules.tokenizer_not_found import TokenizerNotFound
from patchops.lint.runner import lint_config


def lint_file(tmp_path, text: str, vllm: str = "0.33.0"):
    path = tmp_path / "serve.yaml"
    path.write_text(text)
    return lint_config(load_file(path), facts_for_version(vllm))


@pytest.mark.parametrize("value, flagged", [
    ("./tok", True), ("~/no-such-tokenizer", True), ("a/b/c", True), ("org/name", False),
    ("name", False), ("s3://bucket/tok", False)])
def test_a_tokenizer_is_flagged_only_when_it_cannot_be_a_repo_id(tmp_path, value, flagged):
    found = [d for d in lint_file(tmp_path, f"model: m\nargs:\n  tokenizer: {value}\n") if d.code == "PO816"]
    assert bool(found) == flagged
    if flagged:
        assert found[0].severity == "error" and (found[0].line, found[0].column) == (3, 3)


def test_a_tokenizer_folder_beside_the_spec_is_found(tmp_path):
    (tmp_path / "tok").mkdir()
    assert not [d for d in lint_file(tmp_path, "model: m\nargs:\n  tokenizer: ./tok\n") if d.code == "PO816"]


def test_the_tokenizer_fails_before_the_engine_config_from_0_12():
    assert TokenizerNotFound.stage_in("0.11.0") == "later"
    assert TokenizerNotFound.stage_in("0.12.0") == "config"


def test_mistral_format_needs_params_json_in_the_folder(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}")
    text = f"model: {model}\nargs:\n  config-format: mistral\n"
    [hit] = [d for d in lint_file(tmp_path, text, "0.8.5") if d.code == "PO815"]
    assert hit.severity == "error" and (hit.line, hit.column) == (3, 3)
    (model / "params.json").write_text("{}")
    assert not [d for d in lint_file(tmp_path, text, "0.8.5") if d.code == "PO815"]
