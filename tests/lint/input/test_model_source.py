"""Which model config each input is judged with (lint/input/model_source.py), end to end.

The Hub is tests/support/hub_stand_in.py, asked by the real huggingface_hub client.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

# Imported with this process's own environment, as the CLI imports it: the library reads
# HF_HUB_OFFLINE once, at import, and a test's HF_HUB_OFFLINE=1 must not be what it keeps.
import huggingface_hub  # noqa: F401
import pytest
from typer.testing import CliRunner

from patchops.api import linting
from patchops.cli.app import OK, PROBLEMS_FOUND, app
from patchops.core.errors import UsageError
from patchops.lint.input import model_source
from tests.support.hub_stand_in import HubStandIn

LLAMA_32 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 32,
            "num_key_value_heads": 8, "hidden_size": 4096, "num_hidden_layers": 32,
            "max_position_embeddings": 8192}
QWEN_28 = {"_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "architectures": ["Qwen2ForCausalLM"],
           "model_type": "qwen2", "num_attention_heads": 28, "num_key_value_heads": 4,
           "hidden_size": 3584, "num_hidden_layers": 28, "max_position_embeddings": 32768}
COMMAND = "vllm serve org/llama-32 --tensor-parallel-size 3"


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """Return a function pointing lint at a stand-in Hub (or an endpoint) with fetching on."""
    def point(url: str, **extra: str) -> None:
        monkeypatch.setenv("HF_ENDPOINT", url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
        monkeypatch.setenv("PATCHOPS_FETCH", "1")
        for name, value in extra.items():
            monkeypatch.setenv(name, value)
    return point


def lint_json(*args: str):
    done = CliRunner().invoke(app, ["lint", "--vllm-version", "0.8.5", "--no-cache", "--format", "json", *args])
    return done.exit_code, json.loads(done.stdout)


def codes(document, severity="error"):
    return [d["code"] for d in document["diagnostics"] if d["severity"] == severity]


def not_run(document):
    return {n["rule"]: n for i in document["inputs"] for n in i["not_run"]}


def test_tp_3_on_a_32_head_hub_model_is_an_error(hub_env):
    with HubStandIn({"org/llama-32": {"config.json": LLAMA_32}}) as hub:
        hub_env(hub.url)
        code, document = lint_json("--cmd", COMMAND)
    assert code == PROBLEMS_FOUND and "PO701" in codes(document)
    assert document["inputs"][0]["model_config"].endswith("config.json")
    assert "heads-not-divisible-by-tp" not in not_run(document)


@pytest.mark.parametrize("how", ["offline", "unreachable", "no-fetch"])
def test_without_the_hub_it_is_a_note_not_a_silent_pass(hub_env, how):
    with HubStandIn({"org/llama-32": {"config.json": LLAMA_32}}) as hub:
        if how == "unreachable":
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                hub_env(f"http://127.0.0.1:{sock.getsockname()[1]}")
        else:
            hub_env(hub.url, **({"HF_HUB_OFFLINE": "1"} if how == "offline" else {}))
        args = ("--no-fetch",) if how == "no-fetch" else ()
        code, document = lint_json(*args, "--cmd", COMMAND)
        text = CliRunner().invoke(app, ["lint", "-v", "--vllm-version", "0.8.5", "--no-cache", *args, "--cmd", COMMAND])
        assert hub.requests == []
    assert code == OK and "PO701" not in codes(document)
    missing = not_run(document)["heads-not-divisible-by-tp"]
    reason = {"offline": "HF_HUB_OFFLINE is set and org/llama-32's config.json is not in the Hugging Face cache",
              # refused: "could not be reached", or "did not answer" when the client's retries outlast 5 s
              "unreachable": "the Hub at http://127.0.0.1:",
              "no-fetch": "no model config.json"}[how]
    assert reason in missing["reason"]
    assert "heads-not-divisible-by-tp" in text.stdout and reason in " ".join(text.stdout.split())


def test_a_gated_model_says_set_hf_token(hub_env):
    with HubStandIn({"org/llama-32": {"config.json": LLAMA_32}}, gated={"org/llama-32"}) as hub:
        hub_env(hub.url)
        _, refused = lint_json("--cmd", COMMAND)
        hub_env(hub.url, HF_TOKEN=hub.token)
        _, allowed = lint_json("--cmd", COMMAND)
    assert "HF_TOKEN" in not_run(refused)["heads-not-divisible-by-tp"]["hint"]
    assert "PO701" in codes(allowed)


def test_the_settings_file_turns_fetching_off(hub_env, tmp_path, monkeypatch):
    (tmp_path / "patchops.toml").write_text("fetch = false\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PATCHOPS_FETCH")
    with HubStandIn({"org/llama-32": {"config.json": LLAMA_32}}) as hub:
        hub_env(hub.url)
        monkeypatch.delenv("PATCHOPS_FETCH")
        code, document = lint_json("--cmd", COMMAND)
        assert hub.requests == []
        _, fetched = lint_json("--fetch", "--cmd", COMMAND)
    assert code == OK and "heads-not-divisible-by-tp" in not_run(document)
    assert "PO701" in codes(fetched)


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_one_model_config_per_input(tmp_path):
    llama, qwen = write(tmp_path / "llama.json", LLAMA_32), write(tmp_path / "qwen.json", QWEN_28)
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "a.sh").write_text("vllm serve org/llama-32 -tp 8\n")   # 32 % 8 == 0
    (tmp_path / "cfg" / "b.sh").write_text("vllm serve Qwen/Qwen2.5-7B-Instruct -tp 8\n")   # 28 % 8 != 0
    code, document = lint_json("--model-config", f"org/llama-32={llama}",
                               "--model-config", f"Qwen/Qwen2.5-7B-Instruct={qwen}", str(tmp_path / "cfg"))
    assert code == PROBLEMS_FOUND
    assert [(Path(d["file"]).name, d["code"]) for d in document["diagnostics"] if d["code"] == "PO701"] == \
        [("b.sh", "PO701")]
    assert [Path(i["model_config"]).name for i in document["inputs"]] == ["llama.json", "qwen.json"]


def test_a_bare_config_of_another_model_is_a_warning_and_not_used(tmp_path):
    qwen = write(tmp_path / "qwen.json", QWEN_28)
    script = tmp_path / "a.sh"
    script.write_text("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 8\n")
    code, document = lint_json("--model-config", str(qwen), str(script))
    warning = next(d for d in document["diagnostics"] if d["code"] == "PO004")
    assert warning["severity"] == "warning" and (warning["line"], warning["column"]) == (1, 12)
    assert warning["message"] == "model config qwen.json is for Qwen/Qwen2.5-7B-Instruct; not used"
    assert "PO701" not in codes(document) and document["inputs"][0]["model_config"] is None
    assert "is for Qwen/Qwen2.5-7B-Instruct" in not_run(document)["heads-not-divisible-by-tp"]["reason"]
    # The old form still serves one input whose model it fits.
    write(tmp_path / "llama.json", dict(LLAMA_32, _name_or_path="meta-llama/Llama-3.1-8B-Instruct"))
    script.write_text("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 3\n")
    _, fitting = lint_json("--model-config", str(tmp_path / "llama.json"), str(script))
    assert "PO701" in codes(fitting) and "PO004" not in codes(fitting, "warning")


def test_a_folder_of_snapshots(tmp_path):
    write(tmp_path / "snaps" / "models--org--llama-32" / "snapshots" / "abc" / "config.json", LLAMA_32)
    write(tmp_path / "snaps" / "Qwen" / "Qwen2.5-7B-Instruct" / "config.json", QWEN_28)
    (tmp_path / "a.sh").write_text("vllm serve org/llama-32 -tp 3\n")
    (tmp_path / "b.sh").write_text("vllm serve Qwen/Qwen2.5-7B-Instruct -tp 3\n")
    _, document = lint_json("--model-config", str(tmp_path / "snaps"), str(tmp_path / "a.sh"), str(tmp_path / "b.sh"))
    assert sorted(Path(d["file"]).name for d in document["diagnostics"] if d["code"] == "PO701") == ["a.sh", "b.sh"]


def test_parse_given_refuses_two_bare_files(tmp_path):
    one, two = write(tmp_path / "1.json", LLAMA_32), write(tmp_path / "2.json", QWEN_28)
    with pytest.raises(UsageError, match="MODEL=FILE"):
        model_source.parse_given([str(one), str(two)])
    assert model_source.parse_given([f"org/m={one}"]).file_for("ORG/M") == one


def test_contradiction_by_name_or_architecture():
    from patchops.lint.input.model_config import model_facts_from_dict

    qwen = model_facts_from_dict(QWEN_28)
    assert model_source.contradiction(qwen, "meta-llama/Llama-3.1-8B") == "Qwen/Qwen2.5-7B-Instruct"
    assert model_source.contradiction(qwen, "qwen/qwen2.5-7b-instruct") is None
    unnamed = model_facts_from_dict({"architectures": ["Qwen2ForCausalLM"]})
    assert model_source.contradiction(unnamed, "org/llama-3-8b") == "a Qwen2ForCausalLM model"
    assert model_source.contradiction(unnamed, "org/some-model") is None   # the name names no family
    llama = model_facts_from_dict({"architectures": ["LlamaForCausalLM"]})
    assert model_source.contradiction(llama, "deepseek-ai/deepseek-coder-6.7b") is None  # Llama is generic


def test_a_fetching_run_is_not_cached_and_the_next_one_is(hub_env, tmp_path, monkeypatch):
    monkeypatch.setenv("PATCHOPS_CACHE", str(tmp_path / "cache"))
    with HubStandIn({"org/llama-32": {"config.json": LLAMA_32}}) as hub:
        hub_env(hub.url)
        first = linting.lint_inputs(command=COMMAND, vllm_version="0.8.5", cache=True)
        assert not (tmp_path / "cache" / "lint-results").exists()  # it asked the Hub: not stored
        second = linting.lint_inputs(command=COMMAND, vllm_version="0.8.5", cache=True)
        asked = len(hub.requests)
        third = linting.lint_inputs(command=COMMAND, vllm_version="0.8.5", cache=True)
        assert len(hub.requests) == asked
    assert list((tmp_path / "cache" / "lint-results").iterdir())
    assert [d.code for d in first[0].diagnostics] == [d.code for d in second[0].diagnostics] == \
        [d.code for d in third[0].diagnostics]


def test_the_launch_revision_and_token_are_the_ones_asked_with(hub_env, tmp_path):
    spec = tmp_path / "serve.yaml"
    with HubStandIn({"org/llama-32": {"config.json": LLAMA_32}}, gated={"org/llama-32"}) as hub:
        hub_env(hub.url)
        spec.write_text(f"model: org/llama-32\nenv:\n  HF_TOKEN: {hub.token}\nargs:\n  revision: v9\n"
                        "  tensor-parallel-size: 3\n")
        _, wrong = lint_json(str(spec))
        spec.write_text(f"model: org/llama-32\nenv:\n  HF_TOKEN: {hub.token}\nargs:\n  tensor-parallel-size: 3\n")
        _, right = lint_json(str(spec))
    assert "org/llama-32 has no revision v9" in not_run(wrong)["heads-not-divisible-by-tp"]["reason"]
    assert "PO701" in codes(right)   # the spec's own HF_TOKEN opened the gated repo


def test_a_modelscope_launch_does_not_ask_the_hub(hub_env):
    with HubStandIn({"org/llama-32": {"config.json": LLAMA_32}}) as hub:
        hub_env(hub.url, VLLM_USE_MODELSCOPE="1")
        code, document = lint_json("--cmd", COMMAND)
        assert hub.requests == []
    assert code == OK and "comes from ModelScope" in not_run(document)["heads-not-divisible-by-tp"]["reason"]
