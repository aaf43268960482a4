"""`lint --fix` and `--diff`: every fix pinned by its rule's examples, exact, and no worse after.

A rule that declares `fixable` shows each fix as an INVALID example with its `fixed` text;
here each is applied, checked byte for byte, and linted again: the finding is gone and no
other finding has appeared.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchops import api
from patchops.cli.app import app
from patchops.core.errors import LintInputError
from patchops.lint.fixes import apply_fixes, fix_text, unified_diff
from patchops.lint.input.loaders import load_text
from patchops.lint.rule import APPLICABILITIES, Diagnostic, Edit, Fix
from patchops.lint.rules import ALL_RULES
from patchops.lint.runner import lint_example

from lintkit import findings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIXABLE = [rule for rule in ALL_RULES if rule.fixable]


def fixed_cases():
    for rule in FIXABLE:
        for index, example in enumerate(rule.INVALID):
            if example.fixed is not None:
                yield pytest.param(rule, example, id=f"{rule.code}-{index}")


def test_the_rules_with_fixes_and_their_kinds():
    assert {rule.code: rule.fixable for rule in FIXABLE} == {
        "PO101": "safe", "PO102": "safe", "PO103": "safe", "PO104": "safe", "PO108": "safe",
        "PO401": "unsafe"}
    assert all(rule.fixable in APPLICABILITIES for rule in FIXABLE)


@pytest.mark.parametrize("rule", FIXABLE, ids=lambda r: r.code)
def test_every_fix_a_rule_makes_is_pinned_by_an_example(rule):
    pinned = [ex for ex in rule.INVALID if ex.fixed is not None]
    assert pinned, f"{rule.code} declares a fix but no example shows one"
    for example in rule.INVALID:
        fixable = [d for d in lint_example(example) if d.code == rule.code and d.autofix]
        assert bool(fixable) == (example.fixed is not None), example.text


@pytest.mark.parametrize("rule,example", list(fixed_cases()))
def test_a_fix_gives_the_expected_text_and_no_new_finding(rule, example):
    before = lint_example(example)
    unsafe = rule.fixable == "unsafe"
    text, count = apply_fixes(example.text, before, unsafe=unsafe)
    assert text == example.fixed
    assert count == sum(d.autofix is not None for d in before)
    after = lint_example(dataclasses.replace(example, text=text))
    assert [d for d in after if d.code == rule.code] == []
    left = Counter(d.code for d in after)
    assert not left - Counter(d.code for d in before if d.autofix is None), after


@pytest.mark.parametrize("rule,example", list(fixed_cases()))
def test_lines_a_fix_does_not_touch_stay_byte_for_byte(rule, example):
    edited = {e.start_at[0] for d in lint_example(example) if d.autofix for e in d.autofix.edits} | \
             {e.end_at[0] for d in lint_example(example) if d.autofix for e in d.autofix.edits}
    before = example.text.splitlines(keepends=True)
    after = example.fixed.splitlines(keepends=True)
    untouched_before = [line for n, line in enumerate(before, 1) if n not in edited]
    assert all(line in after for line in untouched_before)


def test_unsafe_fixes_only_when_asked():
    [example] = [ex for ex in FIXABLE[-1].INVALID[:1]]
    assert FIXABLE[-1].code == "PO401"
    found = lint_example(example)
    assert apply_fixes(example.text, found) == (example.text, 0)
    assert apply_fixes(example.text, found, unsafe=True) == (example.fixed, 1)


def edit(start, end, content):
    return Edit(start, end, content, (1, start + 1), (1, end + 1))


def finding(*edits, applicability="safe"):
    return Diagnostic("f", 1, 1, "PO103", "x", "info", "m", autofix=Fix(applicability, edits, "t"))


def test_overlapping_fixes_wait_for_the_next_pass():
    first = finding(edit(0, 3, "abc"))
    inside = finding(edit(1, 2, "X"))              # overlaps: skipped this pass
    touching = finding(edit(3, 3, "+"), edit(5, 6, "Z"))   # at the end of the first: fine
    assert apply_fixes("012345", [first, inside, touching]) == ("abc+34Z", 2)
    insert_inside = finding(edit(2, 2, "!"))
    assert apply_fixes("012345", [first, insert_inside]) == ("abc345", 1)
    two_inserts = [finding(edit(2, 2, "a")), finding(edit(2, 2, "b"))]
    assert apply_fixes("0123", two_inserts) == ("01ab23", 2)


def test_fix_text_passes_until_stable_and_stops_before_a_fix_that_breaks_the_input():
    passes = []

    def lint(text):
        passes.append(text)
        return [finding(edit(0, 1, "b"))] if text.startswith("a") else []

    done = fix_text("aaa", lint)
    assert (done.text, done.fixed, done.remaining) == ("baa", 1, [])
    assert passes == ["aaa", "baa"]

    def breaks(text):
        if text != "aaa":
            raise LintInputError("f:1:1: invalid YAML")
        return [finding(edit(0, 1, ":"))]

    broken = fix_text("aaa", breaks)
    assert (broken.text, broken.fixed) == ("aaa", 0)


def test_unified_diff_names_paths_as_git_does(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    diff = unified_diff(str(tmp_path / "conf" / "serve.yaml"), "a: 1\nb: 2\n", "a: 1\nb: 3")
    assert diff.splitlines()[:2] == ["--- a/conf/serve.yaml", "+++ b/conf/serve.yaml"]
    assert diff.endswith("+b: 3\n\\ No newline at end of file\n")


# --- what the fixes keep --------------------------------------------------------------------

def test_a_fix_keeps_comments_crlf_and_other_lines(tmp_path):
    lines = ["# serve spec for the A100 box\r\n", "model: m\r\n", "vllm: {version: 0.8.5}\r\n",
             "args:\r\n", "  # the context we need\r\n", "  max-model-len: 4096   # 4K\r\n",
             "\r\n", "  trust-remote-code: yes   # Qwen needs it\r\n", "  tp: 2\r\n"]
    spec = tmp_path / "serve.yaml"
    spec.write_bytes(b"\xef\xbb\xbf" + "".join(lines).encode())
    [done] = api.fix_inputs([spec])
    assert done.fixed == 2 and done.result.diagnostics == [] and done.written
    data = spec.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data[3:].decode().splitlines(keepends=True) == lines[:7] + [
        "  trust-remote-code: true   # Qwen needs it\r\n", "  tensor-parallel-size: 2\r\n"]


def test_anchors_aliases_and_merges_have_no_span_to_edit():
    cfg = load_text("model: m\nargs:\n  <<: {max-num-seqs: 8}\n  trust-remote-code: &t yes\n"
                    "  enforce-eager: *t\n  max-model-len: 4096\n", kind="spec")
    spans = {s.key: (s.key_span, s.value_span) for s in cfg.config_settings}
    assert spans["max-num-seqs"] == (None, None)                  # merged in
    assert spans["trust-remote-code"][1] is None                  # `&t yes`: the anchor stays
    assert spans["enforce-eager"][0] is not None and spans["enforce-eager"][1] is None
    start, end = spans["max-model-len"][1]
    assert cfg.text[start:end] == "4096"


def test_duplicate_fix_only_when_removing_the_earlier_one_changes_nothing():
    three = findings("PO104", "model: m\nargs:\n  max_model_len: 1\n  max-model-len: 2\n"
                              "  max_model_len: 3\n")
    assert three and all(d.autofix is None for d in three)
    flow = findings("PO104", "model: m\nargs: {max-model-len: 1, max-num-seqs: 8, max-model-len: 2}\n")
    assert flow and flow[0].autofix is None              # shares its line: left to the user
    [alone] = findings("PO104", "vllm serve m \\\n  --max-model-len 1 \\\n  --max-model-len 2\n",
                       kind="command")
    assert [(e.start_at, e.end_at, e.content) for e in alone.autofix.edits] == [((2, 1), (3, 1), "")]


def test_a_dropped_false_in_a_commands_config_file_becomes_the_switch_on_the_command_line(tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text("model: m\nenable_prefix_caching: false   # no reuse\n")
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/sh\nvllm serve --config serve.yaml --max-model-len 4096\n")
    [done] = api.fix_inputs([script], vllm_version="0.10.1.1")
    assert done.fixed == 1 and done.result.diagnostics == []
    assert script.read_text() == ("#!/bin/sh\nvllm serve --config serve.yaml --no-enable-prefix-caching "
                                  "--max-model-len 4096\n")
    assert config.read_text() == "model: m\nenable_prefix_caching: false   # no reuse\n"


def test_a_false_vllm_ignores_anyway_keeps_its_suggestion():
    [v1] = findings("PO102", "model: m\nargs:\n  enable-chunked-prefill: false\n", vllm="0.9.2")
    assert v1.autofix is None and v1.fix.startswith("remove the key")
    [old] = findings("PO102", "model: m\nargs:\n  enable-chunked-prefill: false\n", vllm="0.7.3")
    assert [e.content for e in old.autofix.edits] == ['"false"']      # StoreBoolean reads the word
    assert findings("PO102", 'model: m\nargs:\n  enable-chunked-prefill: "false"\n', vllm="0.7.3") == []


def test_a_typo_fix_needs_one_clear_match_and_no_release_with_the_key():
    [later] = findings("PO101", "model: m\nargs:\n  cudagraph-capture-sizes: [1, 2]\n")
    assert later.autofix is None                        # a real flag of later releases
    [taken] = findings("PO101", "model: m\nargs:\n  max-model-lenght: 1\n  max-model-len: 2\n")
    assert taken.autofix is None                        # renaming would make a duplicate
    [typo] = findings("PO101", "model: m\nargs:\n  max-model-lenght: 1\n")
    assert [e.content for e in typo.autofix.edits] == ["max-model-len"]


# --- the API and the CLI --------------------------------------------------------------------

def test_fix_on_every_shipped_example_leaves_no_fixable_finding(tmp_path):
    copies = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copies)
    before = {p.name: p.read_bytes() for p in copies.iterdir()}
    safe = api.fix_inputs([copies], vllm_version="0.8.5")
    assert all(not d.autofix or d.autofix.applicability == "unsafe"
               for f in safe for d in f.result.diagnostics)
    unsafe = api.fix_inputs([copies], vllm_version="0.8.5", unsafe=True)
    assert [d for f in unsafe for d in f.result.diagnostics if d.autofix] == []
    changed = sorted(p.name for p in copies.iterdir() if p.read_bytes() != before[p.name])
    assert changed == ["seed-capture-sizes.yaml"]       # its capture list, only when asked
    assert sum(f.fixed for f in unsafe) == 1


SPEC = "model: m\nvllm: {version: 0.8.5}\nargs:\n  tp: 2\n  enforce-eager: on\n  max-num-seqs: 900000000000\n"


def run(*args):
    return CliRunner().invoke(app, ["lint", "--no-detect-hardware", *map(str, args)],
                              env={"PATCHOPS_ROOTS": "", "PYTHONPATH": ""})


def test_cli_diff_prints_and_writes_nothing(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(SPEC)
    shown = run("--diff", spec)
    assert shown.exit_code == 1
    assert spec.read_text() == SPEC
    assert "+  tensor-parallel-size: 2\n" in shown.stdout and "-  tp: 2\n" in shown.stdout
    assert "would fix 2 findings in 1 file" in shown.output
    spec.write_text("model: m\nvllm: {version: 0.8.5}\nargs:\n  max-model-len: 4096\n")
    clean = run("--diff", spec)
    assert clean.exit_code == 0 and "---" not in clean.stdout


def test_cli_fix_writes_and_says_what_is_left(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(SPEC)
    done = run("--fix", spec)
    assert "fixed 2 findings, 1 remaining" in done.stdout
    assert spec.read_text() == SPEC.replace("tp:", "tensor-parallel-size:").replace(": on", ": true")
    assert done.exit_code == (1 if ": error:" in done.stdout else 0)
    assert run("--fix", "--cmd", "vllm serve m").exit_code == 2


def test_cli_marks_fixable_findings_and_counts_them(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(SPEC)
    out = run(spec).stdout
    assert "  fix (--fix): use the long name" in out
    assert "; 2 fixable with --fix" in out.splitlines()[-1]


def test_json_and_sarif_carry_the_fix_and_its_applicability(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(SPEC)
    document = json.loads(run("--format", "json", spec).stdout)
    by_code = {d["code"]: d["fix"] for d in document["diagnostics"]}
    assert by_code["PO101"]["applicability"] == "safe"
    assert by_code["PO101"]["edits"] == [{"content": "tensor-parallel-size",
                                          "location": {"row": 4, "column": 3},
                                          "end_location": {"row": 4, "column": 5}}]
    assert by_code["PO103"]["message"] == "write enforce-eager: true"
    others = [f for code, f in by_code.items() if code not in ("PO101", "PO103")]
    assert all(f is None or (f["applicability"] == "display-only" and f["edits"] == []) for f in others)
    sarif = json.loads(run("--format", "sarif", spec).stdout)["runs"][0]
    [result] = [r for r in sarif["results"] if r["ruleId"] == "PO101"]
    assert result["properties"]["fix"] == "safe"
    [change] = result["fixes"][0]["artifactChanges"]
    assert change["replacements"] == [{"deletedRegion": {"startLine": 4, "startColumn": 3,
                                                         "endLine": 4, "endColumn": 5},
                                       "insertedContent": {"text": "tensor-parallel-size"}}]
    rules = {r["id"]: r["properties"]["fix"] for r in sarif["tool"]["driver"]["rules"]}
    assert rules["PO401"] == "unsafe" and rules["PO201"] is None


def test_rules_say_whether_they_fix():
    runner = CliRunner()
    assert "fix: safe" in runner.invoke(app, ["rules", "PO104"]).stdout
    assert "fix: unsafe" in runner.invoke(app, ["rules", "PO401"]).stdout
    assert "fix: none" in runner.invoke(app, ["rules", "PO201"]).stdout
    listed = json.loads(runner.invoke(app, ["rules", "--json"]).stdout)
    assert {r["code"]: r["fix"] for r in listed}["PO108"] == "safe"
