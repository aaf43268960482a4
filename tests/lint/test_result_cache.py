"""Cached lint results (lint/result_cache.py): a hit prints what a miss prints, and every input
of a result, changed, makes the next run lint again.

Each invalidation test lints, changes one input, lints again and checks both that the run was
not answered from the cache and that the output follows the change: leaving that input out of
the key (or the read log) fails it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MID, vendor_hardcode
from patchops.host import hardware
from patchops.api import linting
from patchops.cli.app import OK, PROBLEMS_FOUND, app
from patchops.lint import result_cache
from tests.support import wheelcache

ROOT = Path(__file__).resolve().parents[2]

# Findings with fixes (PO103 yaml-11-boolean), a suppression, a skipped-check note.
SPEC = """\
model: ./model
vllm:
  version: 0.8.5
hardware:
  gpus: 2
args:
  tensor-parallel-size: 2
  enable-chunked-prefill: false
  max-model-len: 100000
  max-num-batched-tokens: 8192
  enforce-eager: yes
  num-scheduler-steps: 4  # patchops: ignore[PO302]
"""
MODEL = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_attention_heads": 28,
         "num_key_value_heads": 4, "hidden_size": 3584, "num_hidden_layers": 28,
         "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "vocab_size": 152064,
         "intermediate_size": 18944}
BOX = hardware.Hardware(gpus=2, memory_gib=80.0, compute_capability="9.0", platform="cuda",
                        name="H100", source="nvidia-smi")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder (the current one) holding serve.yaml and its model; lint runs counted."""
    folder = tmp_path / "project"
    (folder / "model").mkdir(parents=True)
    (folder / "serve.yaml").write_text(SPEC)
    (folder / "model" / "config.json").write_text(json.dumps(MODEL))
    monkeypatch.chdir(folder)
    monkeypatch.setattr(hardware, "detect", lambda: BOX)
    runs = []
    real = linting._lint_inputs
    monkeypatch.setattr(linting, "_lint_inputs", lambda *a, **kw: runs.append(1) or real(*a, **kw))
    return folder, runs


@pytest.fixture
def lint(tmp_path):
    """Run `patchops lint ARGS`; return (exit code, stdout, stderr)."""
    base = {"PATCHOPS_CACHE": str(tmp_path / "cache"), "PATCHOPS_ROOTS": "", "PYTHONPATH": "",
            "HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": None}

    def invoke(*args, env=None, input=None):
        done = CliRunner().invoke(app, ["lint", *map(str, args)], env={**base, **(env or {})}, input=input)
        assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
        return done.exit_code, done.stdout, done.stderr

    return invoke


def twice(lint, runs, *args, change=None, **kwargs):
    """Lint, apply `change`, lint again; return (first output, second output, linted again?)."""
    first = lint(*args, **kwargs)
    before = len(runs)
    if change is not None:
        change()
    second = lint(*args, **kwargs)
    return first, second, len(runs) > before


def keep_stamp(path: Path, text: str) -> None:
    """Rewrite `path` with `text` of the same size, then put its mtime back (only ctime moves)."""
    before = path.stat()
    data = text.encode("utf-8")
    assert len(data) == before.st_size
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


# --- a hit is the miss, byte for byte ---------------------------------------------------------


@pytest.mark.parametrize("form", ["text", "concise", "json", "sarif", "github"])
def test_a_hit_prints_what_the_miss_printed(project, lint, form):
    _, runs = project
    first, second, again = twice(lint, runs, "serve.yaml", "--format", form)
    assert not again and len(runs) == 1
    assert first == second
    code, out, err = first
    assert code == PROBLEMS_FOUND
    assert "PO103" in out  # a finding with a fix
    if form in ("text", "concise"):
        assert "PO302" not in out  # suppressed
        assert "did not run" in out  # a skipped-check note


def test_a_hit_keeps_the_exit_code_options(project, lint):
    _, runs = project
    assert lint("serve.yaml")[0] == PROBLEMS_FOUND
    assert lint("serve.yaml", "--exit-zero")[0] == OK
    assert len(runs) == 1


def test_no_cache_lints_again_and_stores_nothing(project, lint, tmp_path):
    _, runs = project
    lint("serve.yaml", "--no-cache")
    assert not (tmp_path / "cache" / "lint-results").exists()
    lint("serve.yaml")
    lint("serve.yaml", "--no-cache")
    assert len(runs) == 3
    assert len(list((tmp_path / "cache" / "lint-results").iterdir())) == 1  # PATCHOPS_CACHE holds it


def test_a_hit_imports_no_yaml_rule_or_facts(tmp_path):
    """A fresh interpreter answering from the cache loads none of what linting needs."""
    driver = ("import atexit, runpy, sys\n"
              "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules))))\n"
              "sys.argv = ['patchops', *sys.argv[1:]]\n"
              "runpy.run_module('patchops', run_name='__main__', alter_sys=True)\n")
    env = dict(os.environ, PATCHOPS_CACHE=str(tmp_path / "cache"), PYTHONPATH="", PATCHOPS_ROOTS="")
    here = tmp_path / "here"  # the folder on sys.path[0]: its listing is part of what locate reads
    here.mkdir()
    spec = ROOT / "examples" / "seed-multistep-xformers.yaml"
    outputs, imported = [], []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", driver, "lint", "--no-detect-hardware", str(spec)],
                              env=env, capture_output=True, text=True, cwd=here)
        outputs.append((done.returncode, done.stdout))
        imported.append(set(done.stderr.rpartition("\nMODULES ")[2].split()))
    assert outputs[0] == outputs[1] and outputs[0][1]
    heavy = ("yaml", "packaging", "patchops.lint.rules", "patchops.lint.rule", "patchops.lint.facts.model",
             "patchops.lint.runner", "patchops.lint.input.loaders", "patchops.host.locate")
    assert all(importlib.util.find_spec(m) for m in heavy), "a renamed module makes this check vacuous"
    assert {"yaml", "patchops.lint.rules", "patchops.lint.facts.model"} <= imported[0]  # the miss did
    assert sorted(m for m in imported[1] if m.split(".")[0] == "yaml" or m in heavy
                  or m.startswith("patchops.lint.rules.")) == []


# --- every input of a result is in its key ----------------------------------------------------


def test_the_spec_bytes(project, lint):
    folder, runs = project
    spec = folder / "serve.yaml"
    first, second, again = twice(lint, runs, "serve.yaml",
                                 change=lambda: spec.write_text(SPEC.replace("enforce-eager: yes", "enforce-eager: true")))
    assert again and "PO103" in first[1] and "PO103" not in second[1]


def test_a_spec_edit_that_keeps_size_and_mtime(project, lint, monkeypatch):
    monkeypatch.setattr(result_cache, "RACY_SECONDS", -3600.0)  # as if written an hour ago: stamped
    folder, runs = project
    spec = folder / "serve.yaml"
    first, second, again = twice(lint, runs, "serve.yaml",
                                 change=lambda: keep_stamp(spec, SPEC.replace("enforce-eager: yes", "enforce-eager: 1  ")))
    assert again and "PO103" in first[1] and "PO103" not in second[1]


def test_the_model_config(project, lint):
    folder, runs = project
    config = folder / "model" / "config.json"
    odd = dict(MODEL, num_attention_heads=27, num_key_value_heads=3)  # not divisible by TP 2
    first, second, again = twice(lint, runs, "serve.yaml", "--format", "json",
                                 change=lambda: config.write_text(json.dumps(odd)))
    codes = [[d["code"] for d in json.loads(out)["diagnostics"]] for _, out, _ in (first, second)]
    assert again and "PO701" not in codes[0] and "PO701" in codes[1]


def test_a_model_config_that_appears(project, lint):
    folder, runs = project
    config = folder / "model" / "config.json"
    config.rename(folder / "elsewhere.json")
    first, second, again = twice(lint, runs, "serve.yaml",
                                 change=lambda: (folder / "elsewhere.json").rename(config))
    assert again and "no model config.json" in " ".join(first[1].split())
    assert "no model config.json" not in " ".join(second[1].split())


def test_the_tokenizer_config_beside_it(project, lint):
    folder, runs = project
    tokenizer = folder / "model" / "tokenizer_config.json"
    _, _, again = twice(lint, runs, "serve.yaml", change=lambda: tokenizer.write_text(
        json.dumps({"model_max_length": 131072})))
    assert again


def test_a_model_found_through_hf_home(project, lint, tmp_path):
    folder, runs = project
    spec = folder / "serve.yaml"
    spec.write_text(SPEC.replace("model: ./model", "model: acme/tiny"))
    snapshot = tmp_path / "hf" / "hub" / "models--acme--tiny" / "snapshots" / "abc"

    def download():
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text(json.dumps(MODEL))

    first, second, again = twice(lint, runs, "serve.yaml", change=download)
    assert again and "no model config.json" in " ".join(first[1].split())
    assert "no model config.json" not in " ".join(second[1].split())


def test_a_chat_template(project, lint):
    folder, runs = project
    (folder / "serve.yaml").write_text(SPEC + "  chat-template: chat.jinja\n")
    first, second, again = twice(lint, runs, "serve.yaml", "--format", "concise",
                                 change=lambda: (folder / "chat.jinja").write_text("{{ messages }}"))
    assert again and "PO905" in first[1] and "PO905" not in second[1]


def test_a_quantization_file(project, lint):
    folder, runs = project
    config = folder / "model" / "config.json"
    config.write_text(json.dumps(dict(MODEL, architectures=["Qwen2ForCausalLM"])))
    (folder / "serve.yaml").write_text(SPEC + "  quantization: gptq\n")
    first, second, again = twice(lint, runs, "serve.yaml", "--format", "json", change=lambda: (
        folder / "model" / "quantize_config.json").write_text(json.dumps({"bits": 4, "group_size": 128})))
    codes = [[d["code"] for d in json.loads(out)["diagnostics"]] for _, out, _ in (first, second)]
    assert again and codes[0] != codes[1]


@pytest.mark.parametrize("name, text", [
    ("patchops.toml", 'ignore = ["PO103"]\n'),
    ("pyproject.toml", '[project]\nname = "x"\n\n[tool.patchops]\nignore = ["PO103"]\n'),
])
def test_the_settings_file(project, lint, name, text):
    folder, runs = project
    first, second, again = twice(lint, runs, "serve.yaml", change=lambda: (folder / name).write_text(text))
    assert again and "PO103" in first[1] and "PO103" not in second[1]


def test_a_settings_file_above_the_project(project, lint):
    folder, runs = project
    first, second, again = twice(lint, runs, "serve.yaml", change=lambda: (
        folder.parent / "patchops.toml").write_text('ignore = ["PO103"]\n'))
    assert again and "PO103" not in second[1]


@pytest.mark.parametrize("option", [("--ignore", "PO103"), ("--select", "PO103"), ("--vllm-version", "0.11.0"),
                                    ("--hardware", "1xA100:40GiB:cc8.0")])
def test_each_option(project, lint, option):
    _, runs = project
    spec = "serve.yaml"
    if option[0] == "--vllm-version":  # a fallback: only for a spec that states no version
        (project[0] / "bare.yaml").write_text(SPEC.replace("vllm:\n  version: 0.8.5\n", ""))
        spec = "bare.yaml"
        lint(spec, "--vllm-version", "0.8.5")
    plain = lint(spec, *(("--vllm-version", "0.8.5") if spec == "bare.yaml" else ()))
    before = len(runs)
    given = lint(spec, *option)
    assert len(runs) == before + 1 and given != plain


def test_the_detected_hardware(project, lint, monkeypatch, tmp_path):
    folder, runs = project
    (folder / "serve.yaml").write_text(SPEC.replace("hardware:\n  gpus: 2\n", ""))
    first, second, again = twice(lint, runs, "serve.yaml", change=lambda: monkeypatch.setattr(
        hardware, "detect", lambda: hardware.Hardware(gpus=1, memory_gib=24.0, source="nvidia-smi")))
    assert again and first != second
    # Free memory moves on its own: a new answer replaces the entry instead of adding one.
    assert len(list((tmp_path / "cache" / "lint-results").iterdir())) == 1


def test_an_environment_variable(project, lint, tmp_path):
    folder, runs = project
    (folder / "serve.yaml").write_text(SPEC.replace("model: ./model", "model: acme/tiny"))
    snapshot = tmp_path / "other-hf" / "hub" / "models--acme--tiny" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(MODEL))
    first = lint("serve.yaml")
    second = lint("serve.yaml", env={"HF_HOME": str(tmp_path / "other-hf")})
    assert len(runs) == 2 and "no model config.json" in " ".join(first[1].split())
    assert "no model config.json" not in " ".join(second[1].split())


def test_stdin_and_a_command(project, lint):
    _, runs = project
    lint("-", input=SPEC)
    lint("-", input=SPEC.replace("enforce-eager: yes", "enforce-eager: true"))
    lint("--cmd", "vllm serve m --max-model-len 4096")
    lint("--cmd", "vllm serve m --max-model-len 4O96")
    assert len(runs) == 4


def test_the_vllm_copy(project, lint, tmp_path):
    """The winning copy's files, stat by stat: a fork's edit keeping size and mtime is seen."""
    folder, runs = project
    (folder / "serve.yaml").write_text(SPEC.replace("vllm:\n  version: 0.8.5\n", ""))
    site = wheelcache.copy_site_packages(MID, tmp_path / "site", with_flash_attn=False)
    env = {"PYTHONPATH": str(site)}
    path = site / "vllm" / "engine" / "arg_utils.py"
    text = path.read_text()
    edited = text.replace("enforce_eager=self.enforce_eager,", "enforce_eager=True              ,")
    first, second, again = twice(lint, runs, "serve.yaml", "--format", "json", env=env,
                                 change=lambda: keep_stamp(path, edited))
    assert again and first != second
    assert lint("serve.yaml", "--format", "json", env=env) == second and len(runs) == 2


def test_a_hard_link_made_elsewhere_is_no_change(project, lint, tmp_path):
    """Linking moves a file's ctime (wheel caches link big files): the content decides."""
    folder, runs = project
    (folder / "serve.yaml").write_text(SPEC.replace("vllm:\n  version: 0.8.5\n", ""))
    site = wheelcache.copy_site_packages(MID, tmp_path / "site", with_flash_attn=False)
    env = {"PYTHONPATH": str(site)}
    lint("serve.yaml", env=env)
    links = tmp_path / "links"
    links.mkdir()
    os.link(folder / "model" / "config.json", links / "config.json")
    os.link(site / "vllm" / "engine" / "arg_utils.py", links / "arg_utils.py")
    lint("serve.yaml", env=env)
    assert len(runs) == 1


def test_a_copy_that_comes_first_on_the_import_path(project, lint, tmp_path):
    folder, runs = project
    (folder / "serve.yaml").write_text(SPEC.replace("vllm:\n  version: 0.8.5\n", ""))
    later = wheelcache.copy_site_packages(MID, tmp_path / "later", with_flash_attn=False)
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    env = {"PYTHONPATH": os.pathsep.join([str(earlier), str(later)])}

    def install_a_fork():
        wheelcache.copy_site_packages(MID, earlier, with_flash_attn=False)
        vendor_hardcode(earlier)

    first, second, again = twice(lint, runs, "serve.yaml", env=env, change=install_a_fork)
    assert again and str(later) in first[1] and str(earlier) in second[1]


def test_another_interpreters_import_path(project, lint, tmp_path):
    """`--python X`: X's sys.path comes from a subprocess, which a cached result asks again."""
    folder, runs = project
    (folder / "serve.yaml").write_text(SPEC.replace("vllm:\n  version: 0.8.5\n", ""))
    site = wheelcache.copy_site_packages(MID, tmp_path / "site", with_flash_attn=False)
    (tmp_path / "empty").mkdir()
    answer = tmp_path / "sys_path.json"
    answer.write_text(json.dumps([str(site)]))
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\ncat {answer}\n")
    python.chmod(0o755)
    first, second, again = twice(lint, runs, "serve.yaml", "--python", python,
                                 change=lambda: answer.write_text(json.dumps([str(tmp_path / "empty")])))
    assert again and f"vLLM {MID}" in first[1] and "imports no vLLM copy" in second[1]


def test_patchops_own_source(project, lint, tmp_path, monkeypatch):
    _, runs = project
    source = tmp_path / "patchops-src"
    source.mkdir()
    (source / "module.py").write_text("x = 1\n")
    monkeypatch.setattr(result_cache, "PACKAGE", source)
    first, second, again = twice(lint, runs, "serve.yaml",
                                 change=lambda: (source / "module.py").write_text("x = 22\n"))
    assert again and first == second


# --- the read log -----------------------------------------------------------------------------


def test_a_file_changed_while_lint_ran_is_not_stored(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("a: 1\n")
    with result_cache.ReadLog() as log:
        path.read_text()
        path.write_text("a: 22\n")
    assert log.records() is None


def test_the_read_log_records_stats_listings_and_reads(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    with result_cache.ReadLog(ignored=[tmp_path / "ignored"]) as log:
        assert not (tmp_path / "absent").exists()
        list((tmp_path / "folder").iterdir())
        (tmp_path / "file").read_text()
        (tmp_path / "ignored" / "x").exists()
    assert os.stat is result_cache._REAL["stat"] and open is result_cache._REAL["open"]  # put back
    records = {(kind, Path(path).name): seen for kind, path, seen in log.records()}
    assert records[("stat", "absent")] is None
    assert records[("list", "folder")] == []
    assert records[("read", "file")][0] is not None
    assert not any(name == "x" for _, name in records)
    (tmp_path / "folder" / "new").write_text("")
    assert not all(result_cache._holds([k, str(tmp_path / n), s]) for (k, n), s in records.items())


def test_a_file_read_whole_is_hashed_as_it_is_read(tmp_path):
    import hashlib

    whole, part = tmp_path / "whole", tmp_path / "part"
    whole.write_bytes(b"whole text\n")
    part.write_bytes(b"part text\n")
    with result_cache.ReadLog() as log:
        assert whole.read_bytes() == b"whole text\n"
        with open(part, "rb") as handle:
            assert handle.read(4) == b"part"
    assert log.digests == {str(whole): hashlib.sha256(b"whole text\n").hexdigest()}
    reads = {Path(path).name: seen[0] for kind, path, seen in log.records() if kind == "read"}
    assert reads == {name: hashlib.sha256(text).hexdigest()
                     for name, text in (("whole", b"whole text\n"), ("part", b"part text\n"))}


def test_the_key_covers_every_variable_lint_reads():
    """Every environment variable named in the code that lint runs is in relevant_env()."""
    package = ROOT / "src" / "patchops"
    files = [*(package / "lint").rglob("*.py"), *(package / "api").glob("*.py"), *(package / name for name in (
        "core/settings.py", "host/locate.py", "host/search_path.py", "host/installed_version.py", "core/cache.py"))]
    named = set()
    for path in files:
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r"""(?:environ|env)(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']""", text))
        named |= set(re.findall(r"""^[A-Z_]*ENV\s*=\s*["']([A-Z][A-Z0-9_]+)["']""", text, re.M))
    assert {"HF_HUB_CACHE", "HF_HOME", "PYTHONPATH", "PATCHOPS_ROOTS"} <= named  # the scan sees them
    env = {name: "x" for name in named}
    assert set(result_cache.relevant_env(env)) == named


def test_a_variable_a_compose_file_interpolates(project, lint):
    folder, runs = project
    (folder / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
                                         "    command: --model m --max-model-len ${COMPOSE_LEN}\n")
    first, second, again = twice(lint, runs, "compose.yaml", env={"COMPOSE_LEN": "abc"})
    unset = lint("compose.yaml")
    assert again is False and len(runs) == 2
    assert "PO107" in first[1] and "PO107" not in unset[1]
