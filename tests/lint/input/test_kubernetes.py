"""Kubernetes manifests: each vLLM container is one input, findings at the list item that holds the value."""

from __future__ import annotations

from deploykit import found, lint_file, versions

DEPLOYMENT = """\
apiVersion: v1
kind: Service
metadata:
  name: qwen-chat
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen-chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args:
            - Qwen/Qwen2.5-7B-Instruct
            - --tensor-parallel-size
            - "4"
            - --max-num-batched-tokens-per-step=8192
          env:
            - name: HF_TOKEN
              valueFrom: {secretKeyRef: {name: hf, key: token}}
          resources:
            limits:
              nvidia.com/gpu: {gpus}
        - name: proxy
          image: nginx:1.27
"""


def test_a_deployment_container_is_linted_at_its_args_items_on_the_tag_release(tmp_path):
    results = lint_file(tmp_path, "app.yaml", DEPLOYMENT.replace("{gpus}", "2"))
    assert [r.launch for r in results] == ["Deployment/qwen-chat container vllm"]
    assert versions(results) == ["0.8.5"]                 # the tag, not the 0.6.3 fallback
    assert found(results) == {("app.yaml", 18, 15, "warning", "PO703"),   # tp 4 > 2 GPUs
                              ("app.yaml", 20, 15, "error", "PO101")}
    assert any("`HF_TOKEN` comes from `valueFrom`" in note for note in results[0].notes)


def test_the_gpu_limit_is_the_gpu_count_on_both_sides(tmp_path):
    enough = lint_file(tmp_path, "app.yaml", DEPLOYMENT.replace("{gpus}", "4"))
    assert ("app.yaml", 18, 15, "warning", "PO703") not in found(enough)
    short = lint_file(tmp_path, "app.yaml", DEPLOYMENT.replace("{gpus}", "3"))
    assert ("app.yaml", 18, 15, "warning", "PO703") in found(short)


def test_a_folded_shell_command_is_positioned_inside_the_scalar(tmp_path):
    text = """\
apiVersion: batch/v1
kind: Job
metadata: {name: bench}
spec:
  template:
    spec:
      containers:
        - name: server
          image: registry.local/llm:1
          command: ["/bin/sh", "-c"]
          args:
            - >
              pip list &&
              exec vllm serve /models/m
              --enable-prefix-cache
"""
    results = lint_file(tmp_path, "job.yaml", text, version="0.8.5")
    assert [r.launch for r in results] == ["Job/bench container server"]
    assert found(results) == {("job.yaml", 15, 15, "error", "PO101")}


def test_dollar_references_take_the_container_env(tmp_path):
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.8.5
      command: ["vllm", "serve", "/models/m", "--block-size", "$(BLOCK)"]
      env:
        - {name: BLOCK, value: "7"}
"""
    results = lint_file(tmp_path, "pod.yaml", text)
    assert found(results) == {("pod.yaml", 8, 48, "error", "PO107")}   # at --block-size: 7 is none
    fine = lint_file(tmp_path, "pod.yaml", text.replace('"7"', '"16"'))
    assert found(fine) == set()


def test_a_manifest_without_vllm_is_skipped_not_linted(tmp_path):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  replicaCount: '2'\n"
    [result] = lint_file(tmp_path, "cm.yaml", text)
    assert result.diagnostics == [] and result.error is None
    assert result.no_launch == "Kubernetes ConfigMap/c: no container runs vLLM"


def test_invalid_yaml_is_one_clear_finding(tmp_path):
    [result] = lint_file(tmp_path, "bad.yaml", "apiVersion: v1\nkind: Pod\nspec: [1, 2\n")
    [finding] = result.diagnostics
    assert (finding.code, finding.severity, finding.line) == ("PO003", "error", 4)
    assert "invalid YAML" in finding.message


def test_a_helm_template_is_skipped_with_what_to_do(tmp_path):
    text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"
    [result] = lint_file(tmp_path, "deployment.yaml", text)
    assert result.diagnostics == []
    assert "Helm template" in result.no_launch and "helm template CHART | patchops lint -" in result.no_launch
