"""The CLI through typer's CliRunner: exit codes, output shapes, one-paragraph errors."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from typer.testing import CliRunner

from conftest import MID, vendor_hardcode
from patchops.cli import DRIFTED, OK, PROBLEMS_FOUND, USAGE_OR_INPUT_ERROR, app

SPEC = """\
model: /models/Qwen2.5-32B-Instruct
vllm:
  version: 0.6.3.post1
args:
  num-scheduler-steps: 4
  enable-chunked-prefill: false
  max-model-len: 100000
  max-num-batched-tokens: 8192
"""


@pytest.fixture
def run(tmp_path):
    """Invoke the CLI with a clean environment: no vLLM on the path unless a test adds one.

    Only the CLI sees the private facts cache; fixtures keep using the shared wheel cache.
    """
    base = {"PATCHOPS_CACHE": str(tmp_path / "cache"), "PATCHOPS_ROOTS": "", "PYTHONPATH": ""}

    def invoke(*args, env=None, input=None):
        return CliRunner().invoke(app, list(map(str, args)), env={**base, **(env or {})}, input=input)

    return invoke


def test_patch_workflow_on_a_corex_layout(run, corex_tree):
    _, sites = corex_tree(MID)
    for site in sites:
        vendor_hardcode(site)
    env = {"PYTHONPATH": os.pathsep.join(map(str, sites))}
    target = [site / "vllm" / "engine" / "arg_utils.py" for site in sites]
    vendor = [path.read_bytes() for path in target]

    located = run("locate", "--json", env=env)
    assert located.exit_code == OK
    copies = json.loads(located.stdout)["copies"]
    assert [c["site_dir"] for c in copies] == [str(s) for s in sites]
    assert [c["wins"] for c in copies] == [True, False]
    assert {c["version"] for c in copies} == {MID}

    dry = run("apply", "corex-eager-allreduce", "--dry-run", env=env)
    assert dry.exit_code == OK
    # Identical copies: one diff, with paths `git apply` takes from a site dir.
    assert dry.stdout.count("+            enforce_eager=self.enforce_eager,") == 1
    assert f"# identical in 2 copies: {sites[0]}, {sites[1]}" in dry.stdout
    diff = dry.stdout[dry.stdout.index("# identical"):dry.stdout.index("note (corex")]
    assert "--- a/vllm/engine/arg_utils.py\n+++ b/vllm/engine/arg_utils.py\n" in diff
    checked = subprocess.run(["git", "apply", "--check", "-p1", "-"], cwd=sites[1], input=diff,
                             text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr
    assert [path.read_bytes() for path in target] == vendor

    refused = run("apply", "corex-eager-allreduce", env=env, input="y\n")
    assert refused.exit_code == USAGE_OR_INPUT_ERROR
    assert "stdin is not a terminal" in refused.stderr and "pass --yes" in refused.stderr
    assert [path.read_bytes() for path in target] == vendor

    applied = run("apply", "corex-eager-allreduce", "--yes", env=env)
    assert applied.exit_code == OK, applied.stdout
    assert all(b"enforce_eager=self.enforce_eager," in path.read_bytes() for path in target)

    status = run("status", "--json", env=env)
    assert status.exit_code == OK
    assert [row["state"] for row in json.loads(status.stdout)] == ["applied", "applied"]
    assert [row["wins"] for row in json.loads(status.stdout)] == [True, False]

    target[1].write_text(target[1].read_text().replace("enforce_eager=self.enforce_eager,", "enforce_eager=False,"))
    drifted = run("status", env=env)
    assert drifted.exit_code == DRIFTED
    assert "drifted" in drifted.stdout and "hand-edited" in drifted.stdout

    refused = run("rollback", "--all", env=env)
    assert refused.exit_code == DRIFTED
    assert refused.stderr.startswith("error: ") and "--force" in refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr

    forced = run("rollback", "--all", "--force", env=env)
    assert forced.exit_code == OK, forced.stderr
    assert [path.read_bytes() for path in target] == vendor


def test_unknown_patchset_is_one_paragraph(run, vllm_site):
    result = run("apply", "corex-eager-allreduc", "--site", vllm_site(MID), "--dry-run")
    assert result.exit_code == USAGE_OR_INPUT_ERROR
    assert result.stderr.startswith('error: unknown patchset "corex-eager-allreduc"')
    assert 'did you mean "corex-eager-allreduce"' in result.stderr
    assert "Traceback" not in result.stderr


def test_no_vllm_anywhere_is_a_clear_error(run):
    result = run("status")
    assert result.exit_code == USAGE_OR_INPUT_ERROR
    assert "no vLLM copy found" in result.stderr


def test_rollback_needs_names_or_all(run):
    assert run("rollback").exit_code == USAGE_OR_INPUT_ERROR


def test_lint_text_and_exit_codes(run, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(SPEC)
    result = run("lint", spec)
    assert result.exit_code == PROBLEMS_FOUND
    assert f"{spec}:8:3: error: " in result.stdout and "[PO201 batched-tokens-below-model-len]" in result.stdout
    assert "  fix: " in result.stdout
    assert run("lint", spec, "--exit-zero").exit_code == OK
    assert run("lint", spec, "--ignore", "PO2").exit_code == OK


def test_lint_strict_fails_on_warnings(run, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nvllm: {version: 0.8.5}\nargs:\n  num-scheduler-steps: 1\n"
                    "  max-model-len: 4096\n  max-model-len: 8192\n")
    assert run("lint", spec).exit_code == OK
    assert run("lint", spec, "--strict").exit_code == PROBLEMS_FOUND


def test_lint_suppression_and_unused_suppression(run, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(SPEC.replace("8192\n", "8192  # patchops: ignore[PO201]\n")
                    .replace("100000\n", "100000  # patchops: ignore[PO999]\n"))
    result = run("lint", spec, "--format", "json")
    codes = [d["code"] for d in json.loads(result.stdout)["diagnostics"]]
    assert "PO201" not in codes and codes.count("PO001") == 1
    assert result.exit_code == OK


def test_lint_json_sarif_github(run, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(SPEC)
    document = json.loads(run("lint", spec, "--format", "json").stdout)
    assert document["vllm_version"] == "0.6.3.post1"
    [finding] = [d for d in document["diagnostics"] if d["code"] == "PO201"]
    assert set(finding) >= {"file", "line", "column", "code", "name", "severity", "message", "fields",
                            "fix", "vllm_message"}
    assert {"max_num_batched_tokens", "max_model_len"} <= set(finding["fields"])
    assert finding["vllm_message"].startswith("max_num_batched_tokens (8192) is smaller than")
    assert document["summary"]["error"] >= 1

    sarif = json.loads(run("lint", spec, "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"
    run_ = sarif["runs"][0]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    [result] = [r for r in run_["results"] if r["ruleId"] == "PO201"]
    assert rule_ids[result["ruleIndex"]] == "PO201"
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 8, "startColumn": 3}

    github = run("lint", spec, "--format", "github").stdout.splitlines()
    assert f"::error file={spec},line=8,col=3,title=PO201 batched-tokens-below-model-len::" in \
        [line.split("::max")[0] + "::" for line in github if "PO201" in line][0]


@pytest.mark.parametrize("text, says", [
    ("args: [1, 2\n", "serve.yaml:2:1: error: invalid YAML"),
    ("- a\n- b\n", "serve.yaml:1:1: error: expected a mapping"),
    ("\x00\x01binary", "serve.yaml:1:1: error: "),
])
def test_lint_bad_input_exits_2_without_traceback(run, tmp_path, text, says):
    spec = tmp_path / "serve.yaml"
    spec.write_text(text)
    result = run("lint", spec, "--vllm-version", "0.8.5")
    assert result.exit_code == USAGE_OR_INPUT_ERROR
    assert says in result.stdout and "[PO003 input-not-linted]" in result.stdout
    assert "Traceback" not in result.stderr + result.stdout


def test_lint_without_any_vllm_says_how_to_choose(run, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nargs:\n  max-model-len: 4096\n")
    result = run("lint", spec)
    assert result.exit_code == USAGE_OR_INPUT_ERROR
    assert "--vllm-version" in result.stdout and "--python" in result.stdout


def test_lint_command_line(run):
    result = run("lint", "--cmd", "vllm serve m --num-scheduler-steps 8", "--vllm-version", "0.11.0")
    assert result.exit_code == PROBLEMS_FOUND
    assert "[PO301 multistep-removed]" in result.stdout


def test_rules_listing_and_docs(run):
    listing = run("rules")
    assert listing.exit_code == OK
    assert "PO201  batched-tokens-below-model-len" in listing.stdout
    docs = run("rules", "PO201")
    assert "## Why is this bad?" in docs.stdout and "## vLLM message prevented" in docs.stdout
    assert json.loads(run("rules", "--json").stdout)[0]["code"] == "PO001"
    assert run("rules", "PO999").exit_code == USAGE_OR_INPUT_ERROR


def test_patchsets_listing(run, tmp_path):
    shown = json.loads(run("patchsets", "--json").stdout)
    assert {p["name"] for p in shown} >= {"corex-eager-allreduce", "decode-step-timing"}
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "local-fix.yaml").write_text(
        "name: local-fix\nsummary: Local fix.\nvllm: '>=0.8'\nops:\n"
        "  - op: set-keyword\n    file: engine/arg_utils.py\n    scope: EngineArgs\n"
        "    callee: ModelConfig\n    keyword: enforce_eager\n    value: self.enforce_eager\n"
        "    pristine: [True]\n    sites: 1\n")
    listed = run("patchsets", "--patchsets", mine)
    assert listed.exit_code == OK and "local-fix  vLLM >=0.8  Local fix." in listed.stdout


def test_a_bug_is_one_paragraph_not_a_traceback(run, monkeypatch):
    from patchops import api

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(api, "rules", broken)
    result = run("rules")
    assert result.exit_code == 70
    assert result.stderr.startswith("error: internal error (KeyError: 'boom')")
    assert "PATCHOPS_DEBUG=1" in result.stderr and "Traceback" not in result.stderr


def test_error_text_with_brackets_is_printed_as_is(run, vllm_site):
    result = run("apply", "[bold]eager", "--site", vllm_site(MID), "--dry-run")
    assert result.exit_code == USAGE_OR_INPUT_ERROR
    assert result.stderr.startswith('error: unknown patchset "[bold]eager"')
