"""Compose files: a service's command read as compose splits it, findings where it is written."""

from __future__ import annotations

from deploykit import found, lint_file, versions

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.10.1.1
    command: >
      --model Qwen/Qwen2.5-7B-Instruct
      --gpu-memory-utilization {utilization}
      --enable-prefix-cache
    environment:
      - HF_TOKEN
      - VLLM_LOGGING_LEVEL=DEBUG
  redis:
    image: redis:7
"""


def test_a_folded_command_is_linted_inside_the_scalar_on_the_tag_release(tmp_path):
    results = lint_file(tmp_path, "compose.yaml", COMPOSE.replace("{utilization}", "1.5"))
    assert [r.launch for r in results] == ["service vllm"]
    assert versions(results) == ["0.10.1.1"]
    assert found(results) == {("compose.yaml", 6, 7, "error", "PO111"),
                              ("compose.yaml", 7, 7, "error", "PO101")}
    assert any("`HF_TOKEN` is taken from the environment" in note for note in results[0].notes)
    assert results[0].diagnostics and "VLLM_LOGGING_LEVEL" not in str(results[0].notes)


def test_the_utilization_boundary_holds_in_a_compose_command(tmp_path):
    fine = lint_file(tmp_path, "compose.yaml", COMPOSE.replace("{utilization}", "1.0"))
    assert found(fine) == {("compose.yaml", 7, 7, "error", "PO101")}


def test_a_list_command_keeps_each_item_and_dollars_are_escaped(tmp_path):
    text = """\
services:
  api:
    image: vllm/vllm-openai:v0.8.5
    entrypoint: ["vllm", "serve"]
    command:
      - /models/m
      - --block-size
      - "$${BLOCK}"
"""
    results = lint_file(tmp_path, "docker-compose.yml", text)
    # `$$` writes a literal `$`: vLLM gets `${BLOCK}`, not a number
    assert found(results) == {("docker-compose.yml", 7, 9, "error", "PO107")}


def test_a_string_command_is_split_shell_style(tmp_path):
    text = ("services:\n  api:\n    image: vllm/vllm-openai:v0.8.5\n"
            "    command: \"/models/m --max-num-seqs 'x y' --swap-spac 4\"\n")
    results = lint_file(tmp_path, "compose.yaml", text)
    assert found(results) == {("compose.yaml", 4, 25, "error", "PO107"),
                              ("compose.yaml", 4, 46, "warning", "PO108")}


def test_a_reserved_device_count_is_the_gpu_count(tmp_path):
    text = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.8.5
    command: ["/models/m", "--tensor-parallel-size", "2"]
    deploy:
      resources:
        reservations:
          devices:
            - {driver: nvidia, count: COUNT, capabilities: [gpu]}
"""
    assert ("compose.yaml", 4, 29, "warning", "PO703") in found(lint_file(tmp_path, "compose.yaml", text.replace("COUNT", "1")))
    assert found(lint_file(tmp_path, "compose.yaml", text.replace("COUNT", "2"))) == set()


def test_compose_without_vllm_is_skipped(tmp_path):
    [result] = lint_file(tmp_path, "compose.yaml", "services:\n  db:\n    image: postgres:16\n")
    assert result.no_launch == "compose services db: none runs vLLM" and result.diagnostics == []


INTERPOLATED = """\
services:
  vllm:
    image: vllm/vllm-openai:${TAG:-v0.8.5}
    command: --model m --block-size ${BS:-16} --max-model-len ${LEN} --swap-space ${SWAP-4}
"""


def test_the_env_file_beside_it_fills_variables_and_the_tag(tmp_path, monkeypatch):
    for name in ("BS", "LEN", "SWAP", "TAG"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text("# compose reads this\nexport TAG=v0.10.1.1\nBS='7'  \nSWAP=\n")
    results = lint_file(tmp_path, "compose.yaml", INTERPOLATED)
    assert versions(results) == ["0.10.1.1"]
    # BS=7 is refused; `${SWAP-4}` is the empty value .env sets (refused too), LEN is unknown
    assert found(results) == {("compose.yaml", 4, 24, "error", "PO107"),
                              ("compose.yaml", 4, 70, "error", "PO107")}
    assert any("`${LEN}` is set neither here nor in the .env" in note for note in results[0].notes)


def test_the_process_environment_wins_over_the_env_file(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("BS=7\n")
    monkeypatch.setenv("BS", "32")
    monkeypatch.setenv("LEN", "4096")
    assert found(lint_file(tmp_path, "compose.yaml", INTERPOLATED, version="0.8.5")) == set()


def test_without_env_file_defaults_apply_and_an_unset_variable_is_unknown(tmp_path, monkeypatch):
    for name in ("BS", "LEN", "SWAP", "TAG"):
        monkeypatch.delenv(name, raising=False)
    results = lint_file(tmp_path, "compose.yaml", INTERPOLATED.replace("${BS:-16}", "${BS:-7}"))
    assert versions(results) == ["0.8.5"]
    assert found(results) == {("compose.yaml", 4, 24, "error", "PO107")}
