"""lint/vllm/local_files.py: a launch's paths on this machine, and the hub cache an offline launch needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import local_files


def config(tmp_path, model="/models/m", env=""):
    spec = tmp_path / "serve.yaml"
    text = f"model: {model}\nargs:\n  seed: 0\n" + (f"env:\n{env}" if env else "")
    spec.write_text(text)
    return load_text(text, path=str(spec))


@pytest.mark.parametrize("flag", ["1", "on", "YES", "True"])
def test_an_offline_launch_must_find_the_repo_in_the_cache(tmp_path, flag):
    cfg = config(tmp_path, env=f"  HF_HUB_OFFLINE: '{flag}'\n  HF_HUB_CACHE: {tmp_path}/hub\n")
    assert local_files.offline_snapshots(cfg, "org/name") == tmp_path / "hub" / "models--org--name" / "snapshots"


@pytest.mark.parametrize("flag", ["0", "false", "2", ""])
def test_an_online_launch_may_ask_the_hub(tmp_path, flag):
    cfg = config(tmp_path, env=f"  HF_HUB_OFFLINE: '{flag}'\n  HF_HUB_CACHE: {tmp_path}/hub\n")
    assert local_files.offline_snapshots(cfg, "org/name") is None


def test_transformers_offline_counts_unless_hf_hub_offline_is_set(tmp_path, monkeypatch):
    # huggingface_hub reads HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE: a set "0" hides the second
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    assert local_files.offline_snapshots(config(tmp_path), "org/name") is not None
    assert local_files.offline_snapshots(config(tmp_path, env="  HF_HUB_OFFLINE: '0'\n"), "org/name") is None


def test_a_path_is_taken_as_written_else_beside_the_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path.parent)
    (tmp_path / "weights").mkdir()
    cfg = config(tmp_path)
    assert local_files.local_path(cfg, str(tmp_path / "weights")) == tmp_path / "weights"
    assert local_files.local_path(cfg, "weights") == tmp_path / "weights"
    assert local_files.local_path(cfg, "absent") is None
    assert local_files.local_path(cfg, "weights", Path.is_file) is None


def test_a_name_no_file_can_have_is_not_there(tmp_path):
    assert local_files.local_path(config(tmp_path), "x" * 5000) is None


def test_the_model_folder_is_a_local_folder_never_a_hub_name_or_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path.parent)
    (tmp_path / "llama").mkdir()
    (tmp_path / "weights.bin").write_text("")
    assert local_files.local_model_folder(config(tmp_path, model="llama")) == tmp_path / "llama"
    assert local_files.local_model_folder(config(tmp_path, model="meta-llama/Llama-3.1-8B")) is None
    assert local_files.local_model_folder(config(tmp_path, model="weights.bin")) is None
