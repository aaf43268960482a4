"""A finding reads at a glance: a one-line headline, then the snippet and the why, indented.

Findings used to be paragraphs (209 characters at the median over everyday inputs, 492 at
most) and `--format concise` cut them to the terminal width; the notes of checks that did not
run repeated 13 rule names per input, burying the findings.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from patchops import api
from patchops.cli.app import app
from patchops.cli.output import Output
from patchops.cli.render.lint import lint_text, skipped_notes
from patchops.lint.diagnostic import NotRun
from patchops.lint.rules import ALL_RULES
from patchops.lint.runner import lint_example

HEADLINE_MAX = 100
# PO201 on V0 with a 100K context: headline, snippet, why, fix and vLLM's message.
LONG_CONTEXT = """\
model: /models/Qwen2.5-32B-Instruct
vllm: {version: 0.6.3.post1}
args:
  enable-chunked-prefill: false
  max-model-len: 100000
  max-num-batched-tokens: 8192
"""


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_headline_is_one_line_of_at_most_100_characters(rule):
    headlines = [d.message for example in rule.INVALID for d in lint_example(example) if d.code == rule.code]
    assert headlines, f"no INVALID example of {rule.code} fires"
    for headline in headlines:
        assert "\n" not in headline and len(headline) <= HEADLINE_MAX, (rule.code, len(headline), headline)


def run(*args, env=None):
    return CliRunner().invoke(app, ["lint", "--no-detect-hardware", *args],
                              env={"PATCHOPS_ROOTS": "", "PYTHONPATH": "", "COLUMNS": "80", **(env or {})})


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text(LONG_CONTEXT)
    return path


def test_the_why_goes_under_the_snippet_indented_and_wrapped(spec):
    lines = run(str(spec)).stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "[PO201 batched-tokens-below-model-len]" in line)
    assert lines[head] == (f"{spec}:6:3: error: max_num_batched_tokens 8192 < max_model_len 100000 with "
                           "chunked prefill off [PO201 batched-tokens-below-model-len]")
    assert lines[head + 1].startswith("   6 |   max-num-batched-tokens: 8192")
    assert lines[head + 3].startswith("  vLLM 0.6.3.post1 will refuse to start; chunked prefill is off")
    block = lines[head + 3:lines.index(next(line for line in lines[head + 3:] if line.startswith("  fix")))]
    assert len(block) >= 2 and all(line.startswith("    ") for line in block[1:])
    assert all(len(line) <= 80 for line in lines[head + 1:head + 10] if not line.startswith(str(spec)))


def test_json_keeps_the_headline_as_message_and_adds_the_explanation(spec):
    found = json.loads(run(str(spec), "--format", "json").stdout)["diagnostics"]
    po201 = next(d for d in found if d["code"] == "PO201")
    assert po201["message"] == "max_num_batched_tokens 8192 < max_model_len 100000 with chunked prefill off"
    assert po201["explanation"].startswith("vLLM 0.6.3.post1 will refuse to start; chunked prefill is off")


def test_github_and_sarif_carry_the_why_too(spec):
    github = run(str(spec), "--format", "github").stdout
    line = next(line for line in github.splitlines() if "PO201" in line)
    assert "chunked prefill off%0AvLLM 0.6.3.post1 will refuse to start" in line
    sarif = json.loads(run(str(spec), "--format", "sarif").stdout)
    text = next(r["message"]["text"] for r in sarif["runs"][0]["results"] if r["ruleId"] == "PO201")
    assert text.startswith("max_num_batched_tokens 8192 < max_model_len 100000 with chunked prefill off: vLLM")


def test_concise_prints_each_finding_whole_on_a_terminal(spec, monkeypatch, capsys):
    result = api.lint(spec)
    monkeypatch.setattr(Output, "is_terminal", property(lambda self: True))
    monkeypatch.setenv("COLUMNS", "40")
    lint_text(Output(), [result], concise=True)
    shown = capsys.readouterr().out
    for d in result.diagnostics:
        assert f"{d.file}:{d.line}:{d.column}: {d.severity}: {d.message} [{d.code}]" in shown
    assert "\u2026" not in shown


def test_notes_fold_into_one_line_quiet_hides_them_verbose_lists_them(tmp_path):
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text("model: org/not-here\nvllm: {version: 0.8.5}\n")
    inputs = [str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]
    lines = run(*inputs).stdout.splitlines()
    notes = [line for line in lines if "did not run" in line]
    assert len(notes) == 1 and notes[0].startswith("19 checks did not run for 2 inputs: no model config.json")
    assert "-v lists them" in " ".join(lines)
    assert not any("did not run" in line for line in run("-q", *inputs).stdout.splitlines())
    shown = run("-v", *inputs).stdout
    # A note starts at its input's path; at 80 columns a long path pushes the rest of the
    # note onto the next lines, so count the notes in the text with its wrapping undone.
    starts = [line.split(":")[0] for line in shown.splitlines() if line.startswith(str(tmp_path))]
    # per input: the model's config, hardware.gpus, .memory_gib, .host_memory_gib, .compute_capability
    assert starts == [inputs[0]] * 5 + [inputs[1]] * 5
    assert " ".join(shown.split()).count(" did not run, ") == 10


def test_folded_notes_count_the_checks_of_every_reason():
    model, hint = "no model config.json", "pass --model-config FILE"
    host, where = "hardware.host_memory_gib not known", "state it under hardware: or with --hardware"
    results = [api.LintResult("a.yaml", "0.8.5", "", [], not_run=[
                   NotRun("x", "a.yaml", model, hint), NotRun("y", "a.yaml", model, hint),
                   NotRun("z", "a.yaml", host, where)]),
               api.LintResult("b.yaml", "0.8.5", "", [], not_run=[NotRun("x", "b.yaml", model, hint)])]
    assert skipped_notes(results) == [
        "3 checks did not run for 2 inputs: no model config.json (pass --model-config FILE); "
        "hardware.host_memory_gib not known (state it under hardware: or with --hardware); -v lists them"]
    assert skipped_notes(results, verbose=True)[1] == (
        "a.yaml: 1 check did not run, hardware.host_memory_gib not known (state it under hardware: or "
        "with --hardware): z")


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.fixable], ids=lambda r: r.code)
def test_every_fix_hint_says_the_edit_lint_fix_makes(rule):
    """PO102 said "pass --no-x on the command line" where `--fix` writes `no-x: true`: the why and the fix must agree."""
    fixed = [d for example in list(rule.INVALID) + list(rule.VALID) for d in lint_example(example)
             if d.code == rule.code and d.autofix is not None]
    assert fixed, f"no example of {rule.code} carries its fix"
    for d in fixed:
        for edit in d.autofix.edits:
            assert edit.content.strip() in d.fix, (rule.code, d.fix, edit.content)
