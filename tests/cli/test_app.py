"""The CLI through typer's CliRunner: exit codes, output shapes, one-paragraph errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MID, vendor_hardcode
from patchops.cli.app import DRIFTED, OK, PROBLEMS_FOUND, USAGE_OR_INPUT_ERROR, app
from tests.support import wheelcache

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


# ---------------------------------------------------------------- everyday use

GOOD = "model: m\nvllm: {version: 0.6.3.post1}\nargs:\n  enable-chunked-prefill: false\n" \
       "  max-model-len: 100000\n  max-num-batched-tokens: 8192\n"


def _files(tmp_path, **named):
    paths = {}
    for name, text in named.items():
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(text)
    return paths


def test_lint_goes_on_past_missing_and_broken_files(run, tmp_path):
    paths = _files(tmp_path, good=GOOD, broken="args: [1, 2\n")
    missing = tmp_path / "missing.yaml"
    args = ("lint", paths["good"], missing, paths["broken"])
    text = run(*args)
    assert text.exit_code == USAGE_OR_INPUT_ERROR
    assert f"{paths['good']}:6:3: error: " in text.stdout and "[PO201 " in text.stdout
    assert f"{missing}:1:1: error: no such file [PO003 input-not-linted]" in text.stdout
    assert f"{paths['broken']}:2:1: error: invalid YAML" in text.stdout
    assert "2 not linted" in text.stdout.splitlines()[-1]

    document = json.loads(run(*args, "--format", "json").stdout)
    assert [(d["file"], d["code"]) for d in document["diagnostics"]] == [
        (str(paths["good"]), "PO201"), (str(missing), "PO003"), (str(paths["broken"]), "PO003")]
    assert [i["linted"] for i in document["inputs"]] == [True, False, False]
    sarif = run(*args, "--format", "sarif")
    assert sarif.exit_code == USAGE_OR_INPUT_ERROR and f"error: {missing}: no such file" in sarif.stderr
    log = json.loads(sarif.stdout)["runs"][0]
    assert [r["ruleId"] for r in log["results"]] == ["PO201", "PO003", "PO003"]
    assert log["invocations"] == [{"executionSuccessful": False}]
    # PO003 cannot be selected away: a bad file must never pass silently.
    assert run(*args, "--ignore", "PO0").exit_code == USAGE_OR_INPUT_ERROR
    assert run("lint", paths["good"], "--exit-zero").exit_code == OK


def test_lint_takes_a_folder_and_stdin(run, tmp_path):
    folder = tmp_path / "specs"
    (folder / "nested").mkdir(parents=True)
    (folder / "nested" / "serve.yaml").write_text(GOOD)
    (folder / "launch.sh").write_text("vllm serve m --num-scheduler-steps 8\n")
    (folder / "README.md").write_text("no docker run in a code block\n")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "x.yaml").write_text("args: [\n")
    shown = json.loads(run("lint", folder, "--vllm-version", "0.11.0", "--json").stdout)
    assert [i["file"] for i in shown["inputs"]] == [str(folder / "README.md"), str(folder / "launch.sh"),
                                                   str(folder / "nested" / "serve.yaml")]
    # a README is read for `docker run` lines only: this one holds none, so it is skipped
    assert [bool(i["no_launch"]) for i in shown["inputs"]] == [True, False, False]
    assert {d["file"] for d in shown["diagnostics"]} <= {str(folder / "launch.sh"),
                                                         str(folder / "nested" / "serve.yaml")}
    piped = run("lint", "-", "--json", input=GOOD)
    assert [(d["file"], d["code"]) for d in json.loads(piped.stdout)["diagnostics"]] == [("<stdin>", "PO201")]


def test_suppressions_and_selectors_take_codes_prefixes_names_and_lists(run, tmp_path):
    text = "model: m\nvllm: {version: 0.8.5}\nargs:\n  num-scheduler-steps: 8{}\n  tp: 2\n"
    for comment in ("  # patchops: ignore[multistep-falls-back-to-v0]", "  # patchops: ignore[PO3]",
                    "  # patchops: ignore[PO30, multistep-falls-back-to-v0]"):
        spec = _files(tmp_path, serve=text.replace("{}", comment))["serve"]
        codes = [d["code"] for d in json.loads(run("lint", spec, "--json").stdout)["diagnostics"]]
        assert codes == ["PO101"], comment  # PO302 suppressed, and no PO001 for the comment
    spec = _files(tmp_path, serve=text.replace("{}", "  # patchops: ignore[multistep-removed]"))["serve"]
    codes = [d["code"] for d in json.loads(run("lint", spec, "--json").stdout)["diagnostics"]]
    assert codes == ["PO302", "PO001", "PO101"]  # a name that matches nothing here is reported
    spec = _files(tmp_path, serve=text.replace("{}", ""))["serve"]

    def selected(*options):
        return {d["code"] for d in json.loads(run("lint", spec, "--json", *options).stdout)["diagnostics"]}

    assert selected() == {"PO101", "PO302"}
    assert selected("--select", "PO3,PO1") == {"PO101", "PO302"}
    assert selected("--select", "multistep-falls-back-to-v0") == {"PO302"}
    assert selected("--ignore", "unknown-flag,PO30") == set()
    typo = run("lint", spec, "--select", "multistep-fall-back")
    assert typo.exit_code == USAGE_OR_INPUT_ERROR and "matches no rule code or name" in typo.stderr
    listed = run("rules", "PO3")
    assert "PO301" in listed.stdout and "PO302" in listed.stdout and "PO201" not in listed.stdout
    assert "## Why is this bad?" in run("rules", "multistep-removed").stdout


def test_an_old_rule_code_works_and_is_named_once_on_stderr(run, tmp_path, monkeypatch):
    from patchops.lint.codes import REDIRECTS

    monkeypatch.setitem(REDIRECTS, "PO399", "PO302")
    spec = _files(tmp_path, serve="model: m\nvllm: {version: 0.8.5}\nargs:\n  num-scheduler-steps: 8\n")["serve"]
    shown = run("lint", spec, "--json", "--select", "PO399,po399", "--ignore", "PO101")
    assert [d["code"] for d in json.loads(shown.stdout)["diagnostics"]] == ["PO302"]
    assert shown.stderr.count("warning: rule code PO399 is now PO302") == 1
    docs = run("rules", "PO399")
    assert docs.stdout.startswith("# PO302 multistep-falls-back-to-v0") and "PO399 is now PO302" in docs.stderr
    assert "warning" not in run("lint", spec, "--json", "--select", "PO302").stderr
    sarif = json.loads(run("lint", spec, "--format", "sarif", "--select", "PO399").stdout)["runs"][0]
    described = {rule["id"]: rule for rule in sarif["tool"]["driver"]["rules"]}
    assert described["PO302"]["deprecatedIds"] == ["PO399"] and "deprecatedIds" not in described["PO301"]
    assert [r["ruleId"] for r in sarif["results"]] == ["PO302"]
    listed = {rule["code"]: rule for rule in json.loads(run("rules", "--json").stdout)}
    assert listed["PO302"]["old_codes"] == ["PO399"] and listed["PO301"]["old_codes"] == []


def test_concise_and_full_output(run, tmp_path):
    spec = _files(tmp_path, serve=GOOD)["serve"]
    concise = run("lint", spec, "--format", "concise").stdout.splitlines()
    assert concise[0].startswith(f"{spec}:6:3: error: max_num_batched_tokens 8192 < max_model_len")
    assert concise[0].endswith("[PO201]") and not any("[PO" in line for line in concise[1:])
    assert "checks did not run for 1 input: no model config.json" in " ".join(concise[1:-1])
    assert concise[-1].startswith("1 error, 0 warnings, 0 info in 1 input; linted against vLLM "
                                 "0.6.3.post1 from shipped facts")
    full = run("lint", spec).stdout.splitlines()
    assert full[0].endswith("[PO201 batched-tokens-below-model-len]")
    assert full[1:3] == ["   6 |   max-num-batched-tokens: 8192", "     |   ^"]


def test_snippet_of_a_long_command_keeps_the_caret_under_the_column():
    from patchops.cli.render.snippet import snippet

    line = "vllm serve " + "x" * 100 + " --bad 1" + " y" * 40
    column = line.index("--bad") + 1
    shown, caret = snippet(line, 1, column, width=80)
    assert len(shown) <= 80 and shown.startswith("   1 | ...") and shown.endswith("...")
    assert shown[caret.index("^"):].startswith("--bad")
    short, caret = snippet("tp: 2", 3, 1)
    assert (short, caret) == ("   3 | tp: 2", "     | ^")


def test_github_and_sarif_edges(run, tmp_path):
    clean = tmp_path / "my spec.yaml"
    clean.write_text("model: m\nvllm: {version: 0.8.5}\nargs:\n  max-model-len: 4096\n")
    assert run("lint", clean, "--format", "github").stdout == ""
    from patchops.cli.render.formats import sarif_uri

    assert sarif_uri("<command>") == "%3Ccommand%3E"
    assert sarif_uri("specs/my spec.yaml") == "specs/my%20spec.yaml"
    assert sarif_uri("/srv/my spec.yaml") == "file:///srv/my%20spec.yaml"
    sarif = json.loads(run("lint", "--cmd", "vllm serve m --num-scheduler-steps 8", "--vllm-version",
                           "0.11.0", "--format", "sarif").stdout)["runs"][0]
    assert sarif["tool"]["driver"]["informationUri"] == "https://pypi.org/project/vllm-patchops/"
    assert sarif["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "%3Ccommand%3E"


def test_vllm_version_is_a_fallback_and_conflicts_with_vllm(run, tmp_path, vllm_site):
    paths = _files(tmp_path, stated=GOOD, unstated="model: m\nargs:\n  max-model-len: 4096\n")
    shown = json.loads(run("lint", paths["stated"], paths["unstated"], "--vllm-version", "0.11.0",
                           "--json").stdout)
    assert [i["vllm_version"] for i in shown["inputs"]] == ["0.6.3.post1", "0.11.0"]
    both = run("lint", paths["stated"], "--vllm", vllm_site(MID), "--vllm-version", "0.11.0")
    assert both.exit_code == USAGE_OR_INPUT_ERROR and "drop --vllm-version" in both.stderr


def test_lint_python_reads_the_copy_that_interpreter_imports(run, tmp_path, vllm_site):
    import sys

    spec = _files(tmp_path, serve="model: m\nargs:\n  max-model-len: 4096\n")["serve"]
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={vllm_site(MID)} exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    shown = json.loads(run("lint", spec, "--python", python, "--json").stdout)
    assert shown["inputs"][0]["vllm_version"] == MID
    assert str(vllm_site(MID)) in shown["inputs"][0]["facts_origin"]


def test_version_help_and_completion(run):
    from patchops import __version__

    assert run("--version").stdout == f"patchops {__version__}\n"
    short = run("lint", "-h")
    assert short.exit_code == OK and "--select" in short.stdout
    assert "--install-completion" in run("--help").stdout


def test_apply_prompt_shows_the_diff_and_interrupt_exits_130(run, vllm_site, tmp_path, monkeypatch):
    from patchops.cli import app as cli

    site = tmp_path / "site"
    wheelcache.copy_site_packages(MID, site)
    vendor_hardcode(site)
    target = site / "vllm" / "engine" / "arg_utils.py"
    vendor = target.read_bytes()
    monkeypatch.setattr(cli, "_interactive", lambda: True)
    refused = run("apply", "corex-eager-allreduce", "--site", site, input="d\nn\n")
    assert refused.exit_code == PROBLEMS_FOUND and target.read_bytes() == vendor
    assert "+            enforce_eager=self.enforce_eager," in refused.stdout
    assert refused.stdout.count("write 1 file(s)? [y/N, d = show the diff]") == 2
    interrupted = run("apply", "corex-eager-allreduce", "--site", site, input="")  # EOF at the prompt
    assert interrupted.exit_code == cli.INTERRUPTED and target.read_bytes() == vendor

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.api, "status_report", ctrl_c)
    stopped = run("status", "--site", site)
    assert stopped.exit_code == 130 and stopped.stderr == "error: interrupted\n"


def test_apply_and_rollback_json_and_empty_rollback_all(run, vllm_site, tmp_path):
    site = tmp_path / "site"
    wheelcache.copy_site_packages(MID, site)
    vendor_hardcode(site)
    nothing = run("rollback", "--all", "--site", site)
    assert nothing.exit_code == OK and "nothing to roll back" in nothing.stdout
    assert run("rollback", "corex-eager-allreduce", "--site", site).exit_code == USAGE_OR_INPUT_ERROR
    dry = json.loads(run("apply", "corex-eager-allreduce", "--site", site, "--dry-run", "--json").stdout)
    assert dry["dry_run"] and [c["file"] for c in dry["changes"]] == ["vllm/engine/arg_utils.py"]
    assert "CUDA graphs on" in dry["patchset_notes"]["corex-eager-allreduce"]
    applied = json.loads(run("apply", "corex-eager-allreduce", "--site", site, "--yes", "--json").stdout)
    assert [w["path"] for w in applied["written"]] == [str(site / "vllm" / "engine" / "arg_utils.py")]
    assert applied["transaction"] and applied["outcomes"][0]["state"] == "applies"
    rolled = json.loads(run("rollback", "--all", "--site", site, "--json").stdout)
    assert rolled["patchsets"] == ["corex-eager-allreduce"] and len(rolled["restored"]) == 1


def test_apply_names_a_shadowed_site_and_status_groups_per_copy(run, corex_tree):
    _, sites = corex_tree(MID)
    for site in sites:
        vendor_hardcode(site)
    env = {"PYTHONPATH": os.pathsep.join(map(str, sites))}
    shadowed = run("apply", "corex-eager-allreduce", "--site", sites[1], "--dry-run", env=env)
    assert f"note: {sites[1]} is shadowed: `import vllm` in " in shadowed.stdout
    assert f"loads {sites[0] / 'vllm'}; patching it changes nothing" in shadowed.stdout
    winner = run("apply", "corex-eager-allreduce", "--site", sites[0], "--dry-run", env=env)
    assert "is shadowed" not in winner.stdout
    assert "note (corex-eager-allreduce): The flags decide again" in winner.stdout
    stat = run("apply", "corex-eager-allreduce", "--dry-run", "--stat", env=env).stdout
    assert " vllm/engine/arg_utils.py |   4 ++--  (x2 copies)" in stat and "@@" not in stat
    status = run("status", env=env).stdout.splitlines()
    assert status[0] == f"{sites[0]}  vLLM {MID}  [imported]"
    assert status[1].startswith("  corex-eager-allreduce: not-applied in vllm/engine/arg_utils.py")
    assert f"{sites[1]}  vLLM {MID}  [shadowed]" in status


def test_patchsets_name_shows_notes(run):
    shown = run("patchsets", "corex-eager-allreduce")
    assert shown.exit_code == OK and "files: vllm/engine/arg_utils.py" in shown.stdout
    assert "note (corex-eager-allreduce): The flags decide again" in shown.stdout
    assert json.loads(run("patchsets", "corex-eager-allreduce", "--json").stdout)["notes"]
    assert run("patchsets", "corex-eager-allreduc").exit_code == USAGE_OR_INPUT_ERROR


def test_locate_and_status_suggest_python_when_nothing_is_found(run):
    assert "pass --python" in run("locate").stdout
    assert "pass --python" in run("status").stderr


def test_broken_patchset_file_does_not_break_status(run, vllm_site, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "half-done.yaml").write_text("name: half-done\n")
    shown = run("status", "--site", vllm_site(MID), env={"PATCHOPS_PATCHSETS": str(broken)})
    assert shown.exit_code == OK, shown.stderr
    assert "note: skipped: " in shown.stdout and "half-done.yaml" in shown.stdout
    assert "corex-eager-allreduce: satisfied" in shown.stdout


def test_settings_file_select_ignore_version_hardware_patchsets(run, tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    (project / "mine").mkdir()
    (project / "mine" / "local-fix.yaml").write_text(
        "name: local-fix\nsummary: Local fix.\nvllm: '>=0.8'\nops:\n"
        "  - op: set-keyword\n    file: engine/arg_utils.py\n    scope: EngineArgs\n"
        "    callee: ModelConfig\n    keyword: enforce_eager\n    value: self.enforce_eager\n"
        "    pristine: [True]\n    sites: 1\n")
    spec = project / "specs" / "serve.yaml"
    spec.write_text("model: m\nargs:\n  num-scheduler-steps: 8\n  tp: 2\n")
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.patchops]\nvllm-version = '0.8.5'\nignore = ['unknown-flag']\n"
        "patchsets = ['mine']\n[tool.patchops.per-file-ignores]\n'specs/other*.yaml' = ['PO3']\n")
    monkeypatch.chdir(project / "specs")

    def codes(path):
        return [d["code"] for d in json.loads(run("lint", path, "--json").stdout)["diagnostics"]]

    assert codes(spec) == ["PO302"]  # version from the file, PO101 ignored there
    other = project / "specs" / "other.yaml"
    other.write_text(spec.read_text())
    assert codes(other) == []        # per-file ignore of PO3
    assert "local-fix" in run("patchsets").stdout
    (project / "patchops.toml").write_text("select = ['PO1']\nvllm-version = '0.8.5'\n")
    assert codes(spec) == ["PO101"]  # patchops.toml wins over pyproject.toml
    (project / "patchops.toml").write_text("slect = ['PO1']\n")
    typo = run("lint", spec)
    assert typo.exit_code == USAGE_OR_INPUT_ERROR and "unknown patchops setting `slect`; did you mean `select`?" in typo.stderr


def test_settings_hardware_applies_to_specs_that_state_none(tmp_path):
    from patchops import api
    from patchops.core import settings

    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nvllm: {version: 0.6.3.post1}\nargs:\n  num-scheduler-steps: 4\n")
    plain = settings.Settings()
    turing = settings.Settings(path=tmp_path / "patchops.toml", hardware={"compute_capability": "7.5"})
    [without] = api.lint_inputs([spec], settings=plain)
    [with_cc] = api.lint_inputs([spec], settings=turing)
    assert "PO303" not in [d.code for d in without.diagnostics]
    assert "PO303" in [d.code for d in with_cc.diagnostics]
    stated = tmp_path / "stated.yaml"
    stated.write_text(spec.read_text() + "hardware: {compute_capability: 9.0}\n")
    [own] = api.lint_inputs([stated], settings=turing)
    assert "PO303" not in [d.code for d in own.diagnostics]


def test_dry_run_drift_is_an_error_on_stderr(run, tmp_path):
    site = tmp_path / "site"
    wheelcache.copy_site_packages(MID, site)
    target = site / "vllm" / "engine" / "arg_utils.py"
    target.write_text(target.read_text().replace("enforce_eager=self.enforce_eager,", "enforce_eager=False,"))
    dry = run("apply", "corex-eager-allreduce", "--site", site, "--dry-run")
    assert dry.exit_code == DRIFTED
    # The drift is explained where the op comes closest, on stderr like every refusal.
    assert dry.stderr.startswith('error: patchset "corex-eager-allreduce": ')
    assert "the patchset does not match this file" in dry.stderr and "found enforce_eager=False" in dry.stderr
    assert "does not match" not in dry.stdout


def test_a_replaced_file_is_noted_once(run, tmp_path):
    site = tmp_path / "site"
    wheelcache.copy_site_packages(MID, site)
    vendor_hardcode(site)
    target = site / "vllm" / "engine" / "arg_utils.py"
    vendor = target.read_bytes()
    assert run("apply", "corex-eager-allreduce", "--site", site, "--yes").exit_code == OK
    target.write_bytes(vendor)  # a reinstall puts the vendor's file back
    again = run("apply", "corex-eager-allreduce", "--site", site, "--yes")
    assert again.exit_code == OK and again.stdout.count("file was replaced (reinstall?)") == 1


@pytest.mark.parametrize("asked, linted", [("0.10.1", "0.10.1"), ("0.10.0", "0.10.0"),   # 0.10.1: its own
                                           ("0.10.1.1", "0.10.1.1"), ("0.9.2", "0.9.2"),
                                           ("0.9.3", "0.9.2")])
def test_vllm_version_picks_the_release_it_names(run, asked, linted):
    shown = json.loads(run("lint", "--cmd", "vllm serve m", "--vllm-version", asked, "--json").stdout)
    assert shown["inputs"][0]["vllm_version"] == linted


def test_invalid_flag_value_fix_lists_the_choices(run):
    shown = json.loads(run("lint", "--cmd", "vllm serve m --kv-cache-dtype fp9 --max-model-len 32k",
                           "--vllm-version", "0.6.3.post1", "--json").stdout)
    fixes = [d["fix"]["message"] for d in shown["diagnostics"] if d["code"] == "PO107"]
    assert fixes == ["use one of 'auto', 'fp8', 'fp8_e5m2', 'fp8_e4m3'",
                     "write an integer, with no unit or suffix (this vLLM reads the value as it is)"]


def test_rules_listing_shows_when_a_rule_reports_info(run):
    [po502] = [line for line in run("rules").stdout.splitlines() if line.startswith("PO502")]
    assert "error|info" in po502
    assert json.loads(run("rules", "PO502", "--json").stdout)[0]["unsure_severity"] == "info"


def test_pre_commit_hooks_take_specs_configs_and_launch_scripts():
    import re
    from pathlib import Path

    import yaml

    hooks = yaml.safe_load((Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["patchops-lint", "patchops-lint-system"]
    for hook in hooks:
        assert hook["entry"] == "patchops lint" and "types" not in hook  # `types: [yaml]` drops .sh
        wanted = ["serve.yaml", "deploy/vllm-prod.yml", "scripts/start_vllm.sh", "qwen-serve.yaml"]
        unwanted = ["k8s/deployment.yaml", "scripts/build.sh", "vllm.txt", "serve.yaml.bak"]
        assert [bool(re.search(hook["files"], f)) for f in wanted + unwanted] == [True] * 4 + [False] * 4


def test_status_answers_from_a_hash_the_second_time(run, tmp_path, monkeypatch):
    from patchops.patching import file_rewrites as rewriting

    sites = [tmp_path / "a", tmp_path / "b"]
    for site in sites:
        wheelcache.copy_site_packages(MID, site)
    target = sites[1] / "vllm" / "engine" / "arg_utils.py"
    target.write_text(target.read_text().replace("enforce_eager=self.enforce_eager,", "enforce_eager=False,"))
    args = ["status", "corex-eager-allreduce", "--site", sites[0], "--site", sites[1], "--json"]
    first = json.loads(run(*args).stdout)
    assert [row["state"] for row in first] == ["satisfied", "drifted"]

    def no_parsing(*args, **kwargs):
        raise AssertionError("status parsed a file whose verdict was cached")

    monkeypatch.setattr(rewriting, "rewrite", no_parsing)
    again = json.loads(run(*args).stdout)
    assert again == first and str(target) in again[1]["detail"]
    # Other bytes are another question: parsed again (and here, refused by the stub).
    target.write_text(target.read_text().replace("enforce_eager=False,", "enforce_eager=None,"))
    assert run(*args).exit_code == 70


@pytest.mark.parametrize("args", [["lint", "--cmd", "vllm serve m", "--vllm-version", "0.8.5"],
                                  ["rules"], ["locate"]])
def test_output_to_a_pipe_does_not_import_rich(args, tmp_path):
    # rich.console costs more than a status run; only a terminal needs colour.
    import sys

    env = dict(os.environ, PATCHOPS_CACHE=str(tmp_path), PYTHONPATH="", PATCHOPS_ROOTS="")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "patchops", *args], env=env,
                          capture_output=True, text=True)
    assert done.stdout and done.returncode in (OK, PROBLEMS_FOUND), done.stderr[-500:]
    assert " rich.console" not in done.stderr and " rich.text" not in done.stderr


def test_plain_output_prints_markup_as_written(capsys):
    from patchops.cli.output import Line, Output

    Output().print(Line.assemble(("[bold]x[/bold]", "red"), " y"))
    assert capsys.readouterr().out == "[bold]x[/bold] y\n"


class _Terminal:
    """A terminal 80 columns wide that keeps what is printed."""

    is_terminal, width = True, 80

    def __init__(self):
        self.lines = []

    def print(self, item="", style=""):
        self.lines.append(item.plain if hasattr(item, "plain") else str(item))


def test_concise_lint_of_the_seed_examples_fits_one_80_column_screen(monkeypatch):
    from patchops import api
    from patchops.cli.render.lint import lint_text

    monkeypatch.chdir(Path(__file__).resolve().parents[2])   # `patchops lint examples/*.yaml`, as the README runs it
    examples = sorted(Path("examples").glob("*.yaml"))
    results = api.lint_inputs(examples)
    findings = sum(len(r.diagnostics) for r in results)
    terminal = _Terminal()
    lint_text(terminal, results, concise=True)
    assert findings >= 5 and all(line.endswith("]") for line in terminal.lines[:findings])
    assert sum(-(-len(line) // 80) for line in terminal.lines) <= 24
    piped = _Terminal()
    piped.is_terminal = False
    lint_text(piped, results, concise=True)
    # Never cut, a value lost to an ellipsis cannot be fixed: a terminal gets each finding whole, as a pipe does.
    assert terminal.lines[:findings] == piped.lines[:findings]
    assert all(f"{d.message} [{d.code}]" in " ".join(terminal.lines) for r in results for d in r.diagnostics)
