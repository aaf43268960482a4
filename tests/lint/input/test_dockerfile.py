"""Dockerfiles: the final stage's ENTRYPOINT/CMD, positioned inside the JSON array; ignore comments above."""

from __future__ import annotations

from deploykit import found, lint_file, versions

DOCKERFILE = """\
ARG VLLM_VERSION=v0.8.5
FROM vllm/vllm-openai:${VLLM_VERSION} AS base
ENV VLLM_WORKER_MULTIPROC_METHOD=spawn
FROM base
IGNORE
CMD ["--model", "/models/m", \\
     "--max-modle-len", "4096", \\
     "--block-size", "7"]
"""


def test_exec_form_cmd_is_linted_inside_the_array_on_the_arg_release(tmp_path):
    results = lint_file(tmp_path, "Dockerfile", DOCKERFILE.replace("IGNORE\n", ""))
    assert versions(results) == ["0.8.5"]
    assert found(results) == {("Dockerfile", 6, 7, "error", "PO101"),
                              ("Dockerfile", 7, 7, "error", "PO107")}


def test_an_ignore_line_above_covers_the_instruction_below(tmp_path):
    results = lint_file(tmp_path, "Dockerfile", DOCKERFILE.replace("IGNORE", "# patchops: ignore[PO101]"))
    assert found(results) == {("Dockerfile", 8, 7, "error", "PO107")}
    unused = lint_file(tmp_path, "Dockerfile", DOCKERFILE.replace("IGNORE", "# patchops: ignore[PO111]"))
    assert found(unused) == {("Dockerfile", 5, 1, "warning", "PO001"), ("Dockerfile", 7, 7, "error", "PO101"),
                             ("Dockerfile", 8, 7, "error", "PO107")}


def test_shell_form_entrypoint_runs_the_script(tmp_path):
    text = ("FROM python:3.12\nRUN pip install vllm==0.8.5\nENV VLLM_USE_V1=1\n"
            "ENTRYPOINT vllm serve /models/m \\\n    --enable-prefix-cache\n")
    [result] = lint_file(tmp_path, "serve.Dockerfile", text, version="0.8.5")
    assert found([result]) == {("serve.Dockerfile", 5, 5, "error", "PO101")}
    assert any("names no vLLM release" in note for note in result.notes)


def test_entrypoint_drops_the_inherited_cmd(tmp_path):
    text = ('FROM vllm/vllm-openai:v0.8.5 AS a\nCMD ["--block-size", "7"]\n'
            'FROM a\nENTRYPOINT ["vllm", "serve", "/models/m"]\n')
    assert found(lint_file(tmp_path, "Dockerfile", text)) == set()


def test_a_dockerfile_of_something_else_holds_no_launch(tmp_path):
    [result] = lint_file(tmp_path, "Dockerfile", 'FROM nginx:1.27\nCMD ["nginx", "-g", "daemon off;"]\n')
    assert result.no_launch is not None and result.diagnostics == []
