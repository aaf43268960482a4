"""`patchops launch` on a real vLLM copy whose console script is pointed at a probe.

The copy is a real 0.8.5 (lint reads its facts); only its dist-info's `vllm` entry point is
redirected to a module that records argv and environment, so the exec is observed without
importing vLLM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from patchops import api
from patchops.run.launch import console_entry
from tests.support import wheelcache

pytestmark = pytest.mark.vllm

PROBE = """\
import json, os, sys
def main():
    with open(os.environ["PROBE_OUT"], "w") as out:
        json.dump({"argv": sys.argv, "marker": os.environ.get("LAUNCH_MARKER")}, out)
    return 0
"""

GOOD = """\
model: /models/Qwen2.5-7B-Instruct
env:
  LAUNCH_MARKER: from-spec
args:
  max-model-len: 4096
  enable-prefix-caching: true
"""

BROKEN = """\
model: /models/Qwen2.5-7B-Instruct
args:
  max-model-len: 4096
  no-such-flag: 1
"""


@pytest.fixture(scope="module")
def probed_site(tmp_path_factory):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path_factory.mktemp("launch") / "site",
                                         with_flash_attn=False)
    (site / "launch_probe.py").write_text(PROBE)
    entry_points = next(site.glob("vllm-*.dist-info/entry_points.txt"))
    entry_points.write_text("[console_scripts]\nvllm = launch_probe:main\n")
    return site


def run_cli(site: Path, tmp_path: Path, *args: str):
    # The patchops under test after the copy (a worktree, not only the installed one).
    source = Path(api.__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(source)]), "PATCHOPS_ROOTS": "",
           "PATCHOPS_CACHE": str(tmp_path / "cache"), "PROBE_OUT": str(tmp_path / "probe.json")}
    return subprocess.run([sys.executable, "-m", "patchops", "launch", "--no-detect-hardware", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_console_entry_follows_the_dist_info_of_each_release(vllm_site):
    assert console_entry(vllm_site("0.6.3.post1")) == ("vllm.scripts", "main")
    assert console_entry(vllm_site("0.33.0")) == ("vllm.entrypoints.cli.main", "main")


def test_a_config_lint_refuses_never_starts(probed_site, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(BROKEN)
    done = run_cli(probed_site, tmp_path, str(spec))
    assert done.returncode == 1, done.stderr
    assert "serve.yaml:4:3: error:" in done.stderr and "no-such-flag" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "probe.json").exists()


def test_a_clean_spec_execs_vllm_serve_with_its_env_args_and_extra_args(probed_site, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(GOOD)
    done = run_cli(probed_site, tmp_path, str(spec), "--", "--port", "8001")
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads((tmp_path / "probe.json").read_text())
    assert seen["marker"] == "from-spec"
    argv = seen["argv"]
    assert argv[:3] == ["vllm", "serve", "/models/Qwen2.5-7B-Instruct"]
    assert argv[3] == "--config" and argv[5:] == ["--port", "8001"]
    assert yaml.safe_load(Path(argv[4]).read_text()) == {"max-model-len": 4096,
                                                         "enable-prefix-caching": True}


def test_extra_args_are_linted_with_the_file(probed_site, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(GOOD)
    done = run_cli(probed_site, tmp_path, str(spec), "--", "--no-such-flag", "1")
    assert done.returncode == 1
    assert "no-such-flag" in done.stderr
    assert not (tmp_path / "probe.json").exists()


def test_print_shows_the_command_under_the_copys_interpreter(probed_site, tmp_path):
    done = run_cli(probed_site, tmp_path, "--print", "--cmd",
                   "LAUNCH_MARKER=cli vllm serve /models/m --max-model-len 2048")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith(f"LAUNCH_MARKER=cli {sys.executable} -c ")
    assert "from launch_probe import main" in line
    assert line.endswith("serve /models/m --max-model-len 2048")
    assert not (tmp_path / "probe.json").exists()


WARNED = "vllm serve /models/m --max-model-len 2048 --max-num-seqs 1024 --max-num-batched-tokens 4096"


def test_print_is_one_line_with_the_findings_on_stderr(probed_site, tmp_path):
    done = run_cli(probed_site, tmp_path, "--print", "--cmd", WARNED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1 and done.stdout.endswith("--max-num-batched-tokens 4096\n")
    assert "warning:" in done.stderr and "warning:" not in done.stdout


def with_console_script(site: Path, python: str) -> Path:
    """Give `site` the `vllm` script pip writes on install, listed in RECORD as pip lists it."""
    script = site.parent / "bin" / "vllm"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!{python}\nimport sys\nfrom launch_probe import main\nsys.exit(main())\n")
    script.chmod(0o755)
    record = next(site.glob("vllm-*.dist-info/RECORD"))
    record.write_text(record.read_text() + "../bin/vllm,,\n")
    return script


def test_print_and_exec_use_the_copys_own_console_script(tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "copy" / "site", with_flash_attn=False)
    (site / "launch_probe.py").write_text(PROBE)
    script = with_console_script(site, sys.executable)
    done = run_cli(site, tmp_path, "--print", "--cmd", "vllm serve /models/m --max-model-len 2048")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{script} serve /models/m --max-model-len 2048\n"
    done = run_cli(site, tmp_path, "--cmd", "LAUNCH_MARKER=own vllm serve /models/m")
    assert done.returncode == 0, done.stderr
    seen = json.loads((tmp_path / "probe.json").read_text())
    assert seen == {"argv": [str(script), "serve", "/models/m"], "marker": "own"}


def test_a_console_script_of_another_interpreter_is_not_used(tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "copy" / "site", with_flash_attn=False)
    with_console_script(site, "/usr/bin/python-of-another-copy")
    done = run_cli(site, tmp_path, "--print", "--cmd", "vllm serve /models/m")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{sys.executable} -c ")


def test_plan_launch_of_an_api_server_spec_passes_the_model_as_an_option(probed_site, tmp_path,
                                                                       monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(probed_site))
    monkeypatch.setenv("PATCHOPS_ROOTS", "")
    spec = tmp_path / "serve.yaml"
    spec.write_text("entrypoint: api_server\n" + GOOD)
    result, launch = api.plan_launch(spec)
    assert result.diagnostics == []
    assert launch.head == (sys.executable, "-m", "vllm.entrypoints.openai.api_server")
    assert launch.args[:2] == ("--model", "/models/Qwen2.5-7B-Instruct")
    assert launch.site_dir == probed_site


def test_a_specs_args_file_lives_in_the_cache_and_is_reused(probed_site, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(GOOD)
    written = []
    for _ in range(2):
        assert run_cli(probed_site, tmp_path, str(spec)).returncode == 0
        written.append(json.loads((tmp_path / "probe.json").read_text())["argv"][4])
    assert written[0] == written[1]
    assert Path(written[0]).parent == tmp_path / "cache" / "launch"
    assert [p.name for p in (tmp_path / "cache" / "launch").iterdir()] == [Path(written[0]).name]
    spec.write_text(GOOD.replace("4096", "8192"))       # other args: another file
    assert run_cli(probed_site, tmp_path, str(spec)).returncode == 0
    assert len(list((tmp_path / "cache" / "launch").iterdir())) == 2


def test_engine_check_deletes_the_args_file_it_wrote(probed_site, tmp_path, monkeypatch):
    from patchops.run import engine_check as check

    monkeypatch.setenv("PYTHONPATH", str(probed_site))
    monkeypatch.setenv("PATCHOPS_ROOTS", "")
    monkeypatch.setenv("PATCHOPS_CACHE", str(tmp_path / "cache"))
    spec = tmp_path / "serve.yaml"
    spec.write_text(GOOD)
    seen = {}

    def fake_run(python, site_dir, argv, env, **kwargs):
        seen["config"] = Path(argv[argv.index("--config") + 1])
        seen["args"] = yaml.safe_load(seen["config"].read_text())
        return check.EngineVerdict(True, 0.1, resolved={})

    monkeypatch.setattr(check, "run", fake_run)
    found = api.engine_check(spec, detected=None)
    assert found.verdict.ok
    assert seen["args"] == {"max-model-len": 4096, "enable-prefix-caching": True}
    assert not seen["config"].exists() and not seen["config"].parent.exists()
    assert not (tmp_path / "cache" / "launch").exists()


def test_findings_are_where_each_value_is_written_the_spec_or_the_extra_args(probed_site, tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(BROKEN)
    done = run_cli(probed_site, tmp_path, str(spec), "--", "--port", "8001", "--max-num-seq", "8",
                   "--another-flag")
    assert done.returncode == 1
    lines = [line for line in (done.stdout + done.stderr).splitlines()
             if ": error: " in line or ": warning: " in line]
    assert any(line.startswith(f"{spec}:4:3: error: ") and "no-such-flag" in line for line in lines)
    assert any(line.startswith("<launch -- arguments>:1:29: error: ") and "another-flag" in line
               for line in lines)
    assert any(line.startswith("<launch -- arguments>:1:13: warning: ") and "[PO108" in line
               for line in lines), done.stdout
