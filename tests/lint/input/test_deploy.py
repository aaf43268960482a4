"""A deploy repository as a whole: every launch found by content, nothing on the files about something else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from patchops import api
from patchops.core.errors import LintInputError, UsageError
from patchops.core.settings import Settings

from deploykit import found

REPO = Path(__file__).parent / "deploy_repo"


def test_a_deploy_folder_gives_exactly_the_true_findings_on_each_tag_release():
    results = api.lint_inputs([REPO], vllm_version="0.8.5", settings=Settings())
    assert found(results) == {
        ("Dockerfile", 7, 7, "error", "PO107"),          # --block-size 7 (PO101 ignored above)
        ("README.md", 7, 57, "warning", "PO108"),        # --enable-chunked-prefil
        ("compose.yaml", 6, 7, "error", "PO111"),        # --gpu-memory-utilization 1.5
        ("compose.yaml", 7, 7, "error", "PO101"),        # --enable-prefix-cache
        ("app.yaml", 23, 15, "warning", "PO703"),        # tp 4 on 2 GPUs
        ("app.yaml", 25, 15, "error", "PO101"),          # --max-num-batched-tokens-per-step
        ("run.sh", 8, 24, "error", "PO101"),             # --gpu-memory-utilisation ("$SEQS": unknown)
    }
    by_launch = {(Path(r.path).name, r.launch): r.vllm_version for r in results if r.no_launch is None}
    assert by_launch == {("Dockerfile", "final stage"): "0.8.5", ("README.md", "line 6 docker run"): "0.8.5",
                         ("compose.yaml", "service vllm"): "0.10.1.1",      # the tag .env gives
                         ("app.yaml", "Deployment/qwen-chat container vllm"): "0.8.5",
                         ("run.sh", "line 2 docker run"): "0.9.2"}
    skipped = {Path(r.path).name: r.no_launch for r in results if r.no_launch is not None}
    assert set(skipped) == {"deployment.yaml", "values.yaml", "ci-workflow.yaml"}
    assert skipped["values.yaml"] == "a Helm values file"
    assert skipped["ci-workflow.yaml"] == "a GitHub Actions workflow"
    assert all(r.error is None for r in results)


def test_fix_edits_the_args_item_keeping_the_layout(tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(REPO / "k8s", folder)
    [fixed] = api.fix_inputs([folder / "app.yaml"], settings=Settings())
    after = (folder / "app.yaml").read_text()
    before = (REPO / "k8s" / "app.yaml").read_text()
    assert fixed.fixed == 1
    assert after == before.replace("- --max-num-batched-tokens-per-step\n", "- --max-num-batched-tokens\n")


def test_explain_takes_a_named_launch_and_launch_refuses_a_container(tmp_path):
    shown = api.explain(REPO / "compose.yaml")
    assert shown.vllm_version == "0.10.1.1"
    two = tmp_path / "two.sh"
    two.write_text("docker run vllm/vllm-openai:v0.8.5 --model a\ndocker run vllm/vllm-openai:v0.9.2 --model b\n")
    with pytest.raises(LintInputError, match="holds 2 vLLM launches"):
        api.explain(two)
    assert api.explain(two, launch="line 2 docker run").vllm_version == "0.9.2"
    with pytest.raises(UsageError, match="runs in a container"):
        api.plan_launch(REPO / "run.sh")
