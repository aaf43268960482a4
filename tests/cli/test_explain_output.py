"""`explain` warns before its table when lint finds errors, and says where every value is from.

It used to print a clean table for `gpu_memory_utilization 1.2 set by you`, `? ?` for values
vLLM decides at start-up, and `file:0:0` for values --hardware gave (no line of the input holds them).
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from patchops.cli.app import PROBLEMS_FOUND, app

REFUSED = "model: /models/m\nvllm: {version: 0.8.5}\nargs:\n  gpu-memory-utilization: 1.2\n"
HARDWARE = "{gpus: 1, memory_gib: 24}"


def explain(path, *extra):
    return CliRunner().invoke(app, ["explain", "--no-detect-hardware", "--hardware", HARDWARE, str(path), *extra],
                              env={"PATCHOPS_ROOTS": "", "PYTHONPATH": ""})


def test_a_config_lint_refuses_is_said_first_and_exits_1(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(REFUSED)
    done = explain(spec)
    assert done.exit_code == PROBLEMS_FOUND
    first = done.stdout.splitlines()[0]
    assert first.startswith("error: vLLM 0.8.5 will not start this config: PO111 gpu_memory_utilization (1.2)")
    as_json = json.loads(explain(spec, "--json").stdout)
    assert [e["code"] for e in as_json["errors"]] == ["PO111"]


def test_a_clean_config_exits_0_and_names_where_values_come_from(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text(REFUSED.replace("1.2", "0.9"))
    done = explain(spec)
    assert done.exit_code == 0 and not done.stdout.startswith("error:")
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  ")}
    assert rows["max_num_seqs"].endswith("default for this hardware (from --hardware)")
    assert ":0:0" not in done.stdout
    assert "decided at start-up" in rows["attention_backend"] and "?" not in rows["attention_backend"]


def test_explain_takes_lints_inputs_stdin_a_folder_and_several_files(tmp_path):
    (tmp_path / "a.yaml").write_text(REFUSED)
    (tmp_path / "b.sh").write_text("vllm serve /models/m --max-model-len 4096\n")
    env = {"PATCHOPS_ROOTS": "", "PYTHONPATH": ""}
    piped = CliRunner().invoke(app, ["explain", "--no-detect-hardware", "--vllm-version", "0.8.5", "-"],
                               input="vllm serve /models/m --max-model-len 2048\n", env=env)
    assert piped.exit_code == 0 and piped.stdout.startswith("<stdin>: vLLM 0.8.5")
    assert "set by you (<stdin>:1:22)" in piped.stdout
    folder = CliRunner().invoke(app, ["explain", "--no-detect-hardware", "--vllm-version", "0.8.5", "--json",
                                      str(tmp_path)], env=env)
    assert folder.exit_code == PROBLEMS_FOUND
    assert [(r["file"], len(r["errors"])) for r in json.loads(folder.stdout)] == [
        (str(tmp_path / "a.yaml"), 1), (str(tmp_path / "b.sh"), 0)]


def test_a_launch_commands_model_folder_gives_max_model_len(tmp_path):
    model = tmp_path / "qwen"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "torch_dtype": "bfloat16",
        "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16,
        "max_position_embeddings": 32768, "num_hidden_layers": 2, "vocab_size": 1000}))
    done = CliRunner().invoke(app, ["explain", "--no-detect-hardware", "--vllm-version", "0.8.5", "--json",
                                    "--cmd", f"vllm serve {model}"], env={"PATCHOPS_ROOTS": "", "PYTHONPATH": ""})
    row = json.loads(done.stdout)["settings"]["max_model_len"]
    assert (row["value"], row["certain"]) == (32768, True)
    assert row["origin"] == "derived from the model's config.json" and row["where"] == str(model / "config.json")


def test_every_setting_a_fork_hardcodes_or_a_patchset_changes_has_a_row():
    import dataclasses

    from patchops.lint.explain import APPLIED, HARDCODED, explain as effective
    from patchops.lint.facts.model import facts_for_version
    from patchops.lint.input.loaders import load_text

    cfg = load_text("model: m\nargs:\n  tensor-parallel-size: 2\n", path="serve.yaml", kind="spec")
    fork = dataclasses.replace(facts_for_version("0.8.5"),
                               hardcoded={"enforce_eager": "True", "disable_custom_all_reduce": "True"})
    rows = {row.field: row for row in effective(cfg, fork)}
    assert (rows["disable_custom_all_reduce"].value, rows["disable_custom_all_reduce"].origin) == (True, HARDCODED)
    patched = effective(cfg, facts_for_version("0.8.5"),
                        {"disable_custom_all_reduce": ("corex-eager-allreduce", "vllm/engine/arg_utils.py:1200")})
    row = next(r for r in patched if r.field == "disable_custom_all_reduce")
    assert row.origin == f"{APPLIED} corex-eager-allreduce" and row.where == "vllm/engine/arg_utils.py:1200"
    assert "disable_custom_all_reduce" not in {r.field for r in effective(cfg, facts_for_version("0.8.5"))}
