"""`docker run` / `podman run` in scripts and README code blocks: docker's options skipped, the rest is vLLM's."""

from __future__ import annotations

from deploykit import found, lint_file, versions

RUN = """\
#!/bin/sh
docker run --runtime nvidia --gpus 2 \\
  -v ~/.cache/huggingface:/root/.cache/huggingface \\
  -p 8000:8000 --ipc=host --name vllm -itd \\
  -e VLLM_USE_V1=1 \\
  vllm/vllm-openai:v0.9.2 \\
  --model mistralai/Mistral-7B-v0.1 \\
  --gpu-memory-utilisation 0.9 --tensor-parallel-size TP
"""


def test_docker_run_args_are_linted_where_written_on_the_tag_release(tmp_path):
    results = lint_file(tmp_path, "run.sh", RUN.replace("TP", "2"))
    assert [r.launch for r in results] == ["line 2 docker run"]
    assert versions(results) == ["0.9.2"]
    assert found(results) == {("run.sh", 8, 3, "error", "PO101")}
    assert results[0].notes == []


def test_gpus_n_is_the_gpu_count_on_both_sides(tmp_path):
    assert ("run.sh", 8, 32, "warning", "PO703") in found(lint_file(tmp_path, "run.sh", RUN.replace("TP", "4")))
    assert ("run.sh", 8, 32, "warning", "PO703") not in found(lint_file(tmp_path, "run.sh", RUN.replace("TP", "2")))


def test_podman_with_an_entrypoint_and_a_latest_tag(tmp_path):
    text = "podman run --rm --entrypoint vllm docker.io/vllm/vllm-openai:latest serve /m --block-size 7\n"
    [result] = lint_file(tmp_path, "start.sh", text, version="0.8.5")
    assert result.launch == "line 1 podman run" and result.vllm_version == "0.8.5"   # the fallback
    assert found([result]) == {("start.sh", 1, 78, "error", "PO107")}
    assert any("`latest` moves with each push" in note for note in result.notes)


def test_a_script_with_two_launches_is_two_inputs(tmp_path):
    text = ("docker run -d vllm/vllm-openai:v0.8.5 --model a --swap-spac 1\n"
            "docker run -d vllm/vllm-openai:v0.10.1.1 --model b --max-num-seqs x\n")
    results = lint_file(tmp_path, "two.sh", text)
    assert [(r.launch, r.vllm_version) for r in results] == [("line 1 docker run", "0.8.5"),
                                                             ("line 2 docker run", "0.10.1.1")]
    assert found(results) == {("two.sh", 1, 49, "warning", "PO108"), ("two.sh", 2, 52, "error", "PO107")}


def test_a_readme_code_block_is_read_in_place_and_other_blocks_are_not(tmp_path):
    text = """\
# Serving

```console
$ docker run --gpus all vllm/vllm-openai:v0.8.5 \\
    --model Qwen/Qwen2.5-7B-Instruct --swap-spac 4
```

```yaml
args: ["--not-a-launch"]
```
"""
    [result] = lint_file(tmp_path, "README.md", text)
    assert found([result]) == {("README.md", 5, 38, "warning", "PO108")}
    assert any("`--gpus all`" in note for note in result.notes)


def test_a_readme_without_docker_run_holds_no_launch(tmp_path):
    [result] = lint_file(tmp_path, "README.md", "```bash\npip install vllm\n```\n")
    assert result.no_launch is not None and result.diagnostics == []


def test_a_container_that_runs_something_else_is_not_linted(tmp_path):
    [result] = lint_file(tmp_path, "db.sh", "docker run -d -p 5432:5432 postgres:16\n")
    assert result.no_launch is not None and result.diagnostics == []


def test_a_script_without_any_launch_is_skipped_not_an_error(tmp_path):
    [result] = lint_file(tmp_path, "setup.sh", "#!/bin/sh\npip install -r requirements.txt\n")
    assert result.error is None and result.diagnostics == []
    assert result.no_launch == "a script that runs no `vllm serve`, api_server or `docker run`"
