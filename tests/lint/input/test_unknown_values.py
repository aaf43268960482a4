"""A value the input does not show (`$LEN` never set, `$(cmd)`, a Secret) is unknown, never judged."""

from __future__ import annotations

from deploykit import found, lint_file


def test_a_shell_variable_in_a_script_is_not_a_bad_value(tmp_path):
    text = ('#!/bin/sh\nBS=7\n'
            'vllm serve m --max-model-len $LEN --dtype "${DTYPE}" --kv-cache-dtype "$(cat kv)" \\\n'
            '  $EXTRA_ARGS --enforce-eager $EAGER --block-size $BS --swap-space \'$SWAP\'\n')
    results = lint_file(tmp_path, "serve.sh", text, version="0.8.5")
    # `$BS` is the script's own 7 and `'$SWAP'` is literal: both are vLLM's to refuse.
    assert found(results) == {("serve.sh", 4, 38, "error", "PO107"), ("serve.sh", 4, 55, "error", "PO107")}


def test_a_shell_variable_in_a_docker_run_line_is_not_a_bad_value(tmp_path):
    text = ("docker run --gpus 1 -e TP=$TP vllm/vllm-openai:v0.8.5 --model m \\\n"
            "  --tensor-parallel-size $TP --dtype=$DTYPE --max-model-len ${LEN:-4O96}\n")
    results = lint_file(tmp_path, "run.sh", text)
    # a default the shell gives when LEN is unset is written here: judged
    assert found(results) == {("run.sh", 2, 45, "error", "PO107")}


def test_a_cluster_value_in_args_is_unknown_and_an_unset_reference_is_literal(tmp_path):
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.8.5
      args: ["--model", "m", "--max-model-len", "$(LEN)", "--dtype", "$(NOPE)", "--block-size", "$(BS)"]
      env:
        - name: LEN
          valueFrom: {configMapKeyRef: {name: c, key: len}}
        - name: BS
          value: "7"
"""
    # the kubelet leaves `$(NOPE)` as written, and expands `$(BS)` to 7: both refused
    assert found(lint_file(tmp_path, "pod.yaml", text, version="0.8.5")) == {
        ("pod.yaml", 8, 60, "error", "PO107"), ("pod.yaml", 8, 82, "error", "PO107")}


def test_a_dockerfile_shell_form_reads_the_stage_env(tmp_path):
    text = "FROM vllm/vllm-openai:v0.8.5\nENV BS=7\nENTRYPOINT vllm serve m --block-size $BS --max-model-len $LEN\n"
    assert found(lint_file(tmp_path, "Dockerfile", text)) == {("Dockerfile", 3, 25, "error", "PO107")}
