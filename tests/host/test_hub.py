"""host/hub.py with the real huggingface_hub client against a local stand-in for the Hub."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from patchops.host import hub
from tests.support.hub_stand_in import COMMIT, HubStandIn

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 32}
REPOS = {"org/llama": {"config.json": LLAMA, "tokenizer_config.json": {"model_max_length": 8192}},
         "org/gated": {"config.json": LLAMA}}


def env_for(stand_in: HubStandIn, tmp_path: Path, **extra: str) -> dict:
    return {"HF_ENDPOINT": stand_in.url, "HF_HUB_CACHE": str(tmp_path / "hub"), **extra}


def test_fetches_the_config_files_into_the_standard_cache_once(tmp_path):
    with HubStandIn(REPOS) as stand_in:
        env = env_for(stand_in, tmp_path)
        first = hub.fetch("org/llama", env)
        asked = len(stand_in.requests)
        again = hub.fetch("org/llama", env)
        assert len(stand_in.requests) == asked  # the cache answers: no request the second time
    snapshot = tmp_path / "hub" / "models--org--llama" / "snapshots" / COMMIT
    assert first.problem is None and first.asked and not again.asked
    assert sorted(first.files) == ["config.json", "tokenizer_config.json"]  # absent files left out
    assert first.files["config.json"] == str(snapshot / "config.json") == again.files["config.json"]
    assert json.loads((snapshot / "config.json").read_text()) == LLAMA
    # Only the small files were asked for, each HEAD then GET (absent ones HEAD only).
    assert {path.rsplit("/", 1)[1] for _, path in stand_in.requests} <= set(hub.MODEL_FILES)


def test_a_gated_repo_needs_the_token(tmp_path):
    with HubStandIn(REPOS, gated={"org/gated"}) as stand_in:
        refused = hub.fetch("org/gated", env_for(stand_in, tmp_path))
        allowed = hub.fetch("org/gated", env_for(stand_in, tmp_path, HF_TOKEN=stand_in.token))
    assert refused.problem == "gated" and refused.files == {}
    assert "org/gated is gated" in refused.reason and "HF_TOKEN" in refused.hint
    assert allowed.problem is None and "config.json" in allowed.files


def test_a_missing_repo_and_a_missing_revision(tmp_path):
    with HubStandIn(REPOS) as stand_in:
        missing = hub.fetch("org/nothing", env_for(stand_in, tmp_path))
        revision = hub.fetch("org/llama", env_for(stand_in, tmp_path), revision="v9")
    assert missing.problem == "missing" and "no model org/nothing" in missing.reason
    assert "--model-config org/nothing=FILE" in missing.hint
    assert revision.problem == "revision" and "no revision v9" in revision.reason


def test_a_repo_without_config_json(tmp_path):
    with HubStandIn({"org/mistral": {"params.json": {"dim": 4096}}}) as stand_in:
        found = hub.fetch("org/mistral", env_for(stand_in, tmp_path))
    assert found.problem == "no-config" and list(found.files) == ["params.json"]


def test_offline_sends_no_request_and_reads_the_cache(tmp_path):
    with HubStandIn(REPOS) as stand_in:
        offline = hub.fetch("org/llama", env_for(stand_in, tmp_path, HF_HUB_OFFLINE="1"))
        assert stand_in.requests == []
        hub.fetch("org/llama", env_for(stand_in, tmp_path))
        asked = len(stand_in.requests)
        cached = hub.fetch("org/llama", env_for(stand_in, tmp_path, HF_HUB_OFFLINE="1"))
        assert len(stand_in.requests) == asked
    assert offline.problem == "offline" and not offline.asked
    assert "HF_HUB_OFFLINE is set" in offline.reason and str(tmp_path / "hub") in offline.reason
    assert cached.problem is None and "config.json" in cached.files


def test_a_stalled_hub_costs_the_budget_not_the_clients_retries(tmp_path):
    with HubStandIn(REPOS, stall=20) as stand_in:
        started = time.monotonic()
        found = hub.fetch("org/llama", env_for(stand_in, tmp_path), budget=1.0)
        took = time.monotonic() - started
    assert found.problem == "stalled" and "within 1 s" in found.reason
    assert took < 3  # the budget, and as much for the download child to start


def test_an_unreachable_hub(tmp_path):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    found = hub.fetch("org/llama", {"HF_ENDPOINT": f"http://127.0.0.1:{port}",
                                    "HF_HUB_CACHE": str(tmp_path / "hub")}, budget=2.0)
    assert found.problem in ("network", "stalled") and f"127.0.0.1:{port}" in found.reason
    assert time.monotonic() - started < 5  # the budget, and as much for the download child to start


@pytest.mark.parametrize("value, offline", [("1", True), ("true", True), ("0", False), ("", False)])
def test_offline_words(value, offline):
    assert hub.is_offline({"HF_HUB_OFFLINE": value}) is offline


@pytest.mark.parametrize("stall", [1.0, 2.0])
def test_a_fetch_the_budget_gave_up_on_leaves_nothing_to_break_the_next(tmp_path, stall):
    # huggingface_hub shares one HTTP client in a process and closes it when it cannot connect:
    # a download left retrying an unreachable Hub (1, 3 and 7 s on) broke the next fetch mid-read.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    gave_up = hub.fetch("org/llama", {"HF_ENDPOINT": f"http://127.0.0.1:{port}",
                                      "HF_HUB_CACHE": str(tmp_path / "gone")}, budget=0.5)
    with HubStandIn(REPOS, stall=stall) as stand_in:  # answering while those retries come
        found = hub.fetch("org/llama", env_for(stand_in, tmp_path), files=("config.json",), budget=10)
    assert gave_up.problem in ("network", "stalled")
    assert found.problem is None and "config.json" in found.files
