"""The README's two commands are the product's front door: keep them true."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands():
    return re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)[:2]


def test_ci_runs_the_readme_test_command():
    _, test_command = readme_commands()
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_quickstart_lints_every_example(tmp_path):
    main_job, _ = readme_commands()
    install, lint = main_job.split(" && ")
    assert install.startswith("python -m pip install -e .")
    env = dict(os.environ, PATCHOPS_CACHE=str(tmp_path), PYTHONPATH="", PATCHOPS_ROOTS="")
    shown = subprocess.run(lint.replace("patchops", f"{sys.executable} -m patchops", 1), shell=True,
                           cwd=ROOT, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    as_json = subprocess.run(lint.replace("patchops", f"{sys.executable} -m patchops", 1) + " --format json",
                             shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
    found = json.loads(as_json.stdout)["diagnostics"]
    by_file = {}
    for d in found:
        by_file.setdefault(Path(d["file"]).name, []).append(d)
    for example in sorted((ROOT / "examples").glob("seed-*.yaml")):
        assert by_file.get(example.name), f"{example.name} produced no finding"
    assert "ok-v1-serve.yaml" not in by_file


def test_shipped_launch_script_is_caught_on_a_real_copy(vllm_site, tmp_path):
    # The seed-3 script names no version: it is linted against the copy that runs it.
    script = ROOT / "examples" / "seed-flashinfer-missing.sh"
    env = dict(os.environ, PATCHOPS_CACHE=str(tmp_path), PYTHONPATH="", PATCHOPS_ROOTS="")
    shown = subprocess.run([sys.executable, "-m", "patchops", "lint", "--vllm", str(vllm_site("0.6.3.post1")),
                            "--format", "json", str(script)], env=env, capture_output=True, text=True)
    assert shown.returncode == 1, shown.stderr
    [finding] = json.loads(shown.stdout)["diagnostics"]
    assert (finding["code"], finding["severity"], finding["line"]) == ("PO502", "error", 5)


def test_the_readmes_rule_table_is_the_generated_one():
    import importlib.util

    from patchops.cli.render.rules import rules_markdown_table
    from patchops.lint.rules import ALL_RULES

    spec = importlib.util.spec_from_file_location("readme_rules", ROOT / "scripts" / "readme_rules.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    readme = (ROOT / "README.md").read_text()
    table = readme.split(script.START, 1)[1].split(script.END, 1)[0]
    # a stale table: run python scripts/readme_rules.py
    assert table == rules_markdown_table(ALL_RULES)
    assert len([row for row in table.splitlines() if row.startswith("| PO")]) == len(ALL_RULES)
    for rule in ALL_RULES:
        assert f"| {rule.code} | {rule.name} | " in table and f" | {rule.stage} |" in table
