"""A command's `--config FILE`: its keys' findings, ignore comments and fixes are that file's own."""

from __future__ import annotations

from pathlib import Path

from patchops import api
from patchops.core.settings import Settings

from deploykit import found

SCRIPT = "#!/bin/sh\n# start the server\n\nvllm serve m --config conf/serve.yaml --max-num-seqs 8\n"
CONFIG = """\
# serving config
max-model-len: 4096
enable-chunked-prefil: true
block-size: 7
enforce-eager: yes   # keep: 'quoted' comment
swap-space: -1  # patchops: ignore[PO107]
"""


def folder(tmp_path: Path, script: str = SCRIPT, config: str = CONFIG) -> Path:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "serve.yaml").write_text(config)
    (tmp_path / "run.sh").write_text(script)
    return tmp_path / "run.sh"


def test_findings_are_at_the_yaml_line_and_its_ignore_comment_holds(tmp_path):
    results = api.lint_inputs([folder(tmp_path)], vllm_version="0.8.5", settings=Settings())
    assert found(results) == {("serve.yaml", 3, 1, "warning", "PO108"), ("serve.yaml", 4, 1, "error", "PO107"),
                              ("serve.yaml", 5, 1, "info", "PO103")}
    assert {d.file for r in results for d in r.diagnostics} == {str(tmp_path / "conf" / "serve.yaml")}
    # the snippet under a finding is the YAML's own line
    [result] = results
    assert result.sources[str(tmp_path / "conf" / "serve.yaml")][3] == "block-size: 7"


def test_an_ignore_on_the_scripts_line_does_not_reach_the_yaml(tmp_path):
    script = SCRIPT.replace("\nvllm serve", "\nvllm serve").replace(
        "--max-num-seqs 8\n", "--max-num-seqs 8  # patchops: ignore[PO107]\n")
    results = api.lint_inputs([folder(tmp_path, script)], vllm_version="0.8.5", settings=Settings())
    codes = {(Path(d.file).name, d.line, d.code) for r in results for d in r.diagnostics}
    assert ("serve.yaml", 4, "PO107") in codes
    assert ("run.sh", 4, "PO001") in codes       # the script's comment matched nothing on its line


def test_fix_edits_the_yaml_keeping_its_layout(tmp_path):
    script = folder(tmp_path)
    fixes = api.fix_inputs([script], vllm_version="0.8.5", settings=Settings())
    after = (tmp_path / "conf" / "serve.yaml").read_text()
    assert after == CONFIG.replace("enable-chunked-prefil:", "enable-chunked-prefill:").replace(
        "enforce-eager: yes", "enforce-eager: true")
    assert script.read_text() == SCRIPT
    assert sum(f.fixed for f in fixes) == 2
    assert found([f.result for f in fixes]) == {("serve.yaml", 4, 1, "error", "PO107")}


def test_diff_shows_the_yaml_and_writes_nothing(tmp_path):
    script = folder(tmp_path)
    fixes = api.fix_inputs([script], vllm_version="0.8.5", settings=Settings(), write=False)
    diff = "".join(f.diff for f in fixes)
    assert "+enable-chunked-prefill: true\n" in diff and "serve.yaml" in diff
    assert (tmp_path / "conf" / "serve.yaml").read_text() == CONFIG


def test_a_fix_on_the_command_line_for_a_yaml_key_names_the_script(tmp_path):
    import json

    from patchops.cli.render.formats import lint_json, lint_sarif
    from patchops.lint.rules import ALL_RULES

    script = folder(tmp_path, config="model: m\nenable_prefix_caching: false\n")
    results = api.lint_inputs([script], vllm_version="0.10.1.1", settings=Settings())
    [d] = [d for r in results for d in r.diagnostics if d.code == "PO102"]
    assert (Path(d.file).name, d.line) == ("serve.yaml", 2)        # the value is in the YAML
    assert [e.file for e in d.autofix.edits] == [str(script)]       # the switch goes on the command line
    [change] = json.loads(lint_sarif(results, ALL_RULES))["runs"][0]["results"][0]["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"].endswith("run.sh")
    [edit] = json.loads(lint_json(results))["diagnostics"][0]["fix"]["edits"]
    assert edit["file"] == str(script)


def test_a_folder_judges_the_yaml_once_as_the_script_loads_it(tmp_path):
    folder(tmp_path)
    results = api.lint_inputs([tmp_path], vllm_version="0.8.5", settings=Settings())
    assert sorted((Path(d.file).name, d.line) for r in results for d in r.diagnostics) == [
        ("serve.yaml", 3), ("serve.yaml", 4), ("serve.yaml", 5)]
    [alone] = [r for r in results if r.path.endswith("serve.yaml")]
    assert alone.no_launch == f"the `--config` of {tmp_path / 'run.sh'}, linted as that launch reads it"
    api.fix_inputs([tmp_path], vllm_version="0.8.5", settings=Settings())
    assert (tmp_path / "conf" / "serve.yaml").read_text().count("enable-chunked-prefill: true") == 1
