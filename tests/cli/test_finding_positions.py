"""Every finding has a position, 1:1 at least, in text, GitHub annotations and SARIF.

A value that is not in the input (`--hardware`, a default) used to print `<command>:0:0`,
annotate `line=0` and give SARIF `startLine: 0`, which the SARIF 2.1.0 schema forbids
(region.startLine has minimum 1) and code scanning drops. The SARIF logs are validated here
against the OASIS SARIF 2.1.0 JSON schema (tests/data/sarif-schema-2.1.0.json, the Committee
Specification's sarif-schema-2.1.0.json unchanged), fix regions included.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from patchops.cli.app import app

SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())
GOLDEN = Path(__file__).parents[1] / "lint" / "golden"
MODEL = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "torch_dtype": "bfloat16",
         "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16,
         "max_position_embeddings": 32768, "num_hidden_layers": 2, "vocab_size": 1000}
# PO602 on a bfloat16 model with dtype auto sits at hardware.compute_capability, which here
# only --hardware states: no line of the command holds it.
T4 = "{gpus: 1, name: Tesla T4, compute_capability: 7.5}"


@pytest.fixture
def lint(tmp_path):
    model = tmp_path / "config.json"
    model.write_text(json.dumps(MODEL))

    def run(command, *extra):
        env = {"PATCHOPS_CACHE": str(tmp_path / "cache"), "PATCHOPS_ROOTS": "", "PYTHONPATH": ""}
        args = ["lint", "--cmd", command, "--model-config", str(model), "--vllm-version", "0.8.5",
                "--hardware", T4, "--no-detect-hardware", *extra]
        return CliRunner().invoke(app, args, env=env)

    return run


def validate(log: dict) -> None:
    jsonschema.Draft7Validator(SCHEMA).validate(log)


def test_the_schema_refuses_line_0():
    """The check below could fail: the schema holds region.startLine >= 1."""
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "patchops"}}, "results": [{
        "message": {"text": "m"}, "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "serve.yaml"}, "region": {"startLine": 0, "startColumn": 0}}}]}]}]}
    with pytest.raises(jsonschema.ValidationError, match="minimum of 1"):
        validate(log)
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"] = {"startLine": 1, "startColumn": 1}
    validate(log)


def test_a_value_from_hardware_is_at_1_1_in_every_format(lint):
    text = lint("vllm serve m --max-model-len 4096")
    [line] = [row for row in text.stdout.splitlines() if "PO602" in row]
    assert line.startswith("<command>:1:1: error: ")

    github = lint("vllm serve m --max-model-len 4096", "--format", "github").stdout
    [annotation] = [row for row in github.splitlines() if "PO602" in row]
    assert annotation.startswith("::error file=<command>,line=1,col=1,")

    log = json.loads(lint("vllm serve m --max-model-len 4096", "--format", "sarif").stdout)
    validate(log)
    [result] = [r for r in log["runs"][0]["results"] if r["ruleId"] == "PO602"]
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 1}


def test_a_value_in_the_input_keeps_its_position(lint):
    """The other side: dtype on the command line is where the command says it."""
    log = json.loads(lint("vllm serve m --dtype bfloat16", "--format", "sarif").stdout)
    validate(log)
    [result] = [r for r in log["runs"][0]["results"] if r["ruleId"] == "PO602"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 14}


def test_a_fix_region_validates(tmp_path):
    """A finding with an autofix carries SARIF `fixes` with deletedRegion: it validates too."""
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nvllm: {version: 0.8.5}\nargs:\n  enforce-eager: yes\n")
    env = {"PATCHOPS_CACHE": str(tmp_path / "cache"), "PATCHOPS_ROOTS": "", "PYTHONPATH": ""}
    log = json.loads(CliRunner().invoke(app, ["lint", str(spec), "--format", "sarif", "--no-detect-hardware"],
                                        env=env).stdout)
    validate(log)
    fixes = [r for r in log["runs"][0]["results"] if "fixes" in r]
    assert fixes, "expected a finding with an exact fix"
    region = fixes[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["deletedRegion"]
    assert region["startLine"] == 4 and region["startColumn"] >= 1


@pytest.mark.parametrize("golden", sorted(GOLDEN.glob("*.sarif.json")), ids=lambda p: p.name)
def test_golden_sarif_results_validate(golden):
    results = json.loads(golden.read_text())
    validate({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "patchops"}}, "results": results}]})
