"""Golden files: each case under golden/ is linted through the CLI and compared line by line.

`<case>.out` starts with the command line, `# patchops lint ARGS`, where `{tree:SPEC}` stands
for a real vLLM site-packages built from its PyPI wheel: SPEC is a version plus any of
`+nofa` (no flash-attention extension, as on vendor builds), `+corex` (EngineArgs hardcodes
enforce_eager and disable_custom_all_reduce) and `+capture12` (the fork's CompilationConfig
default `cudagraph_capture_sizes = [1, 2]`). The other lines are the expected output, the
closing summary line excepted (it names cache paths). Regenerate a case after a deliberate
change with `PATCHOPS_REGOLD=1 pytest tests/lint/test_golden.py` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchops.cli.app import app
from tests.support import wheelcache

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p for p in GOLDEN.iterdir() if p.suffix in (".yaml", ".yml", ".sh"))


def build_tree(spec: str, base: Path) -> Path:
    version, *edits = spec.split("+")
    site = base / spec.replace("+", "-")
    if site.exists():
        return site
    wheelcache.copy_site_packages(version, site, with_flash_attn="nofa" not in edits)
    if "corex" in edits:
        wheelcache.hardcode_like_corex(site)
    if "capture12" in edits:
        config = site / "vllm" / "config.py"
        text, n = re.subn(r"(\n    cudagraph_capture_sizes: [^=\n]*)= None", r"\1= [1, 2]",
                          config.read_text(), count=1)
        assert n == 1, "capture12 is written for the single-file vllm/config.py (<= 0.10.0)"
        config.write_text(text)
    return site


def run_case(case: Path, tmp_path: Path, extra=()):
    out = case.with_suffix(".out")
    header = out.read_text().splitlines()[0]
    assert header.startswith("# patchops lint "), out
    args = shlex.split(header[len("# patchops lint "):])
    args = [re.sub(r"\{tree:([^}]+)\}", lambda m: str(build_tree(m.group(1), tmp_path)), a) for a in args]
    cwd = os.getcwd()
    os.chdir(GOLDEN)
    try:
        env = {"PATCHOPS_CACHE": str(tmp_path / "cache"), "PYTHONPATH": "", "PATCHOPS_ROOTS": ""}
        result = CliRunner().invoke(app, ["lint", *args, *extra, case.name], env=env)
    finally:
        os.chdir(cwd)
    return out, header, result


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case, tmp_path):
    out, header, result = run_case(case, tmp_path)
    lines = result.stdout.rstrip("\n").splitlines()[:-1]  # drop the summary
    if os.environ.get("PATCHOPS_REGOLD"):
        out.write_text("\n".join([header, *lines]) + "\n")
    expected = out.read_text().splitlines()[1:]
    assert lines == expected, result.stdout + result.stderr
    errors = sum(": error: " in line for line in lines)
    assert result.exit_code == (1 if errors else 0)


@pytest.mark.parametrize("case", [c for c in CASES if c.stem.startswith("seed")], ids=lambda p: p.name)
def test_golden_json_matches_text(case, tmp_path):
    _, _, text = run_case(case, tmp_path)
    _, _, as_json = run_case(case, tmp_path, extra=("--format", "json"))
    document = json.loads(as_json.stdout)
    shown = [f"{d['file']}:{d['line']}:{d['column']}: {d['severity']}: {d['message']} [{d['code']} {d['name']}]"
             for d in document["diagnostics"]]
    assert shown == [line for line in text.stdout.splitlines() if re.match(r"\S+:\d+:\d+: ", line)]
    assert document["summary"]["error"] == sum(d["severity"] == "error" for d in document["diagnostics"])


SARIF_CASES = sorted(GOLDEN.glob("*.sarif.json"))


@pytest.mark.parametrize("golden", SARIF_CASES, ids=lambda p: p.name)
def test_golden_sarif_results(golden, tmp_path):
    """SARIF results compared as parsed JSON (the driver's rule list is checked in tests/cli/test_app.py)."""
    case = next(c for c in CASES if golden.name == c.stem + ".sarif.json")
    _, _, result = run_case(case, tmp_path, extra=("--format", "sarif"))
    results = json.loads(result.stdout)["runs"][0]["results"]
    if os.environ.get("PATCHOPS_REGOLD"):
        golden.write_text(json.dumps(results, indent=2) + "\n")
    assert results == json.loads(golden.read_text())
