"""api/linting.py's lint flow: the run record and `patchops lint`'s exit policy."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from patchops import api
from patchops.core.errors import OK, PROBLEMS_FOUND, USAGE_OR_INPUT_ERROR, UsageError


def result(*severities, error=None):
    return api.LintResult("serve.yaml", "0.8.5", "shipped", [SimpleNamespace(severity=s) for s in severities],
                          error=error)


def engine(ran=True, ok=True):
    return SimpleNamespace(verdict=SimpleNamespace(ran=ran, ok=ok))


def fixes(*changed):
    return [api.FixResult(result(), fixed=int(c), before="a", after="b" if c else "a") for c in changed]


def test_no_finding_is_ok_and_an_error_is_problems_found():
    assert api.lint_exit_code(api.LintRun([result(), result("info")])) == OK
    assert api.lint_exit_code(api.LintRun([result(), result("error")])) == PROBLEMS_FOUND


def test_warnings_fail_only_when_strict():
    run = api.LintRun([result("warning")])
    assert api.lint_exit_code(run) == OK
    assert api.lint_exit_code(run, strict=True) == PROBLEMS_FOUND


def test_exit_zero_passes_findings_but_not_an_input_left_unlinted():
    assert api.lint_exit_code(api.LintRun([result("error")]), exit_zero=True) == OK
    unlinted = api.LintRun([result("error", error="serve.yaml: not YAML")])
    assert unlinted.unlinted == unlinted.results
    assert api.lint_exit_code(unlinted, exit_zero=True) == USAGE_OR_INPUT_ERROR


def test_a_refusal_fails_and_an_engine_check_that_did_not_run_is_no_verdict():
    run = api.LintRun([result()])
    assert api.lint_exit_code(run, engines=[engine()]) == OK
    assert api.lint_exit_code(run, engines=[engine(), engine(ok=False)]) == PROBLEMS_FOUND
    assert api.lint_exit_code(run, engines=[engine(ok=False), engine(ran=False, ok=False)]) == USAGE_OR_INPUT_ERROR
    assert api.lint_exit_code(run, engines=[engine(ok=False)], exit_zero=True) == OK


def test_diff_fails_when_a_fix_would_change_a_file_whatever_exit_zero_says():
    changing = api.LintRun([result()], fixes(False, True), diff_only=True)
    assert api.lint_exit_code(changing, exit_zero=True) == PROBLEMS_FOUND
    assert api.lint_exit_code(api.LintRun([result("error")], fixes(False), diff_only=True)) == OK


def test_fixed_counts_the_fixes_and_is_none_without_fixing():
    assert api.LintRun([result()]).fixed is None
    assert api.LintRun([result(), result()], fixes(True, True, False)).fixed == 2


def test_a_command_has_no_file_to_fix():
    with pytest.raises(UsageError, match="--cmd has none"):
        api.lint_run(command="vllm serve m", fix=True)
    with pytest.raises(UsageError, match="--cmd has none"):
        api.lint_run(command="vllm serve m", diff=True)


READS_OF_INPUT = """
import sys
from pathlib import Path

from patchops.api.linting import lint_run

target = str(Path(sys.argv[1]).resolve())
reads = []
sys.addaudithook(lambda event, args: reads.append(args) if event == "open" and args[0] is not None
                 and str(Path(str(args[0])).resolve()) == target else None)
how = sys.argv[2]
run = lint_run([Path(sys.argv[1])], vllm_version="0.8.5", cache=how == "cache", fix=how == "diff",
               diff=how == "diff")
print(len(reads), run.fixed if how == "diff" else sum(len(r.diagnostics) for r in run.results))
"""


@pytest.mark.parametrize("cache", ["cache", "no-cache", "diff"])
@pytest.mark.parametrize("name, text", [
    ("serve.yaml", "vllm:\n  version: 0.8.5\nargs:\n  max-model-len: 4096\n  enforce-eager: yes\n"),
    ("launch.sh", "#!/bin/sh\nvllm serve m --max-model-len 4096 --max-num-seqs abc --max-num-batched 8192\n"),
], ids=["spec", "script"])
def test_patchops_lint_reads_its_input_once(tmp_path, name, text, cache):
    """`patchops lint FILE` opens FILE once: suppressions, snippets, the result cache's digest and
    `--diff`'s fixes all come from that one read (every open of it counted by Python's audit hook)."""
    import os
    import subprocess
    import sys

    path = tmp_path / name
    path.write_text(text)
    env = {**os.environ, "PATCHOPS_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", READS_OF_INPUT, str(path), cache], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=True)
    reads, found = map(int, done.stdout.split())
    assert found > 0     # the input was linted (and fixed, with --diff), not refused
    assert reads == 1
