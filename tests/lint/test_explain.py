"""`patchops explain`: the effective settings and their origins, on real vLLM copies."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchops import api
from patchops.cli.app import app
from patchops.host.hardware import parse_hardware
from patchops.lint.explain import DROPPED, FORCED, HARDCODED, SET
from tests.support import wheelcache

# The seed's CoreX launch: 4 Turing-class cards, chunked prefill "off" in a --config YAML.
SEED = """\
model: /models/Qwen2.5-32B-Instruct
args:
  tensor-parallel-size: 4
  max-model-len: 100000
  enable-chunked-prefill: false
  max-num-batched-tokens: 8192
workload:
  concurrency: [1, 2, 4]
"""


def rows(result):
    return {row.field: row for row in result.rows}


@pytest.fixture(scope="module")
def corex_085(tmp_path_factory):
    """A 0.8.5 copy as the CoreX fork ships it: eager hardcoded, capture sizes default [1, 2]."""
    site = wheelcache.copy_site_packages("0.8.5", tmp_path_factory.mktemp("corex") / "site")
    wheelcache.hardcode_like_corex(site)
    config = site / "vllm" / "config.py"
    text, n = re.subn(r"(\n    cudagraph_capture_sizes: [^=\n]*)= None", r"\1= [1, 2]",
                      config.read_text(), count=1)
    assert n == 1
    config.write_text(text)
    return site


@pytest.fixture
def seed(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text(SEED)
    return path


@pytest.mark.vllm
def test_seed_on_corex_shows_the_hardcode_the_dropped_false_and_the_engine(corex_085, seed):
    result = api.explain(seed, vllm_path=corex_085,
                         hardware=parse_hardware("4xBI-V100:32GiB:cc7.5:corex"))
    found = rows(result)
    assert (found["enforce_eager"].value, found["enforce_eager"].origin) == (True, HARDCODED)
    assert str(corex_085) in found["enforce_eager"].where
    chunked = found["enable_chunked_prefill"]
    assert chunked.origin == DROPPED and chunked.where == f"{seed}:5:3"
    assert "drops `false`" in chunked.reason
    assert (found["engine"].value, found["engine"].origin) == ("V0", FORCED)   # cc 7.5 on 0.8.5
    assert (found["max_num_batched_tokens"].value, found["max_num_batched_tokens"].origin) == (8192, SET)
    assert found["max_num_batched_tokens"].where == f"{seed}:6:3"
    assert found["tensor_parallel_size"].value == 4
    assert found["cudagraph_capture_sizes"].value == []      # eager: no graphs at all
    assert found["cudagraph_capture_sizes"].origin == HARDCODED
    assert result.hardware.endswith("(--hardware)")


@pytest.mark.vllm
def test_after_the_fix_the_forks_capture_default_shows_as_hardcoded(corex_085, seed, tmp_path):
    fixed = wheelcache.copy_site_packages("0.8.5", tmp_path / "fixed")
    config = fixed / "vllm" / "config.py"
    config.write_text(re.sub(r"(\n    cudagraph_capture_sizes: [^=\n]*)= None", r"\1= [1, 2]",
                             config.read_text(), count=1))
    found = rows(api.explain(seed, vllm_path=fixed,
                             hardware=parse_hardware("4xA100:80GiB:cc8.0:cuda")))
    assert (found["enforce_eager"].value, found["enforce_eager"].origin) == (False, "vLLM 0.8.5 default")
    assert (found["cudagraph_capture_sizes"].value, found["cudagraph_capture_sizes"].origin) == ([1, 2], HARDCODED)
    assert found["engine"].value == "V1"
    # V1 on 0.8.5 turns chunked prefill on whatever the YAML said (and vllm serve dropped it).
    assert (found["enable_chunked_prefill"].value, found["enable_chunked_prefill"].origin) == (True, DROPPED)


def test_a_value_the_engine_overrides_is_forced_not_set(tmp_path):
    path = tmp_path / "cmd.sh"
    path.write_text("vllm serve /models/m --no-enable-chunked-prefill --max-model-len 4096\n")
    found = rows(api.explain(path, vllm_version="0.10.1.1"))
    chunked = found["enable_chunked_prefill"]
    assert (chunked.value, chunked.origin) == (True, FORCED)
    assert chunked.where == f"{path}:1:22" and "you asked for" in chunked.reason
    later = rows(api.explain(path, vllm_version="0.12.0"))["enable_chunked_prefill"]
    assert (later.value, later.origin) == (False, SET)   # 0.12 respects it


def test_defaults_name_the_version_and_the_hardware_tier(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text("model: /models/m\nargs:\n  max-model-len: 4096\n")
    big = rows(api.explain(path, vllm_version="0.11.0", hardware=parse_hardware("1xH100:80GiB:cc9.0")))
    small = rows(api.explain(path, vllm_version="0.11.0", hardware=parse_hardware("1xL4:24GiB:cc8.9")))
    assert (big["max_num_batched_tokens"].value, small["max_num_batched_tokens"].value) == (8192, 2048)
    assert big["max_num_batched_tokens"].origin == "vLLM 0.11.0 default for this hardware"
    assert rows(api.explain(path, vllm_version="0.33.0"))["gpu_memory_utilization"].value == 0.92
    assert rows(api.explain(path, vllm_version="0.8.5"))["gpu_memory_utilization"].value == 0.9


def test_cli_json_is_keyed_by_vllm_field_names(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text("model: /models/m\nargs:\n  max-num-seqs: 8\n")
    done = CliRunner().invoke(app, ["explain", "--vllm-version", "0.11.0", "--no-detect-hardware",
                                    "--json", str(path)], env={"PATCHOPS_ROOTS": "", "PYTHONPATH": ""})
    assert done.exit_code == 0, done.output
    settings = json.loads(done.output)["settings"]
    assert settings["max_num_seqs"] == {"value": 8, "origin": SET, "where": f"{path}:3:3",
                                        "reason": "max_num_seqs 8 is set", "certain": True,
                                        "alternatives": []}
    assert settings["cudagraph_capture_sizes"]["value"][:4] == [1, 2, 4, 8]
    assert set(settings) >= {"engine", "enable_chunked_prefill", "max_num_batched_tokens",
                             "max_model_len", "block_size", "enable_prefix_caching", "enforce_eager"}


def test_cli_table_notes_why_for_every_value_that_is_not_a_plain_default(tmp_path):
    path = tmp_path / "cmd.sh"
    path.write_text("vllm serve /models/m --no-enable-chunked-prefill\n")
    done = CliRunner().invoke(app, ["explain", "--vllm-version", "0.10.1.1", "--hardware",
                                    "1xH100:80GiB:cc9.0:cuda", str(path)],
                              env={"PATCHOPS_ROOTS": "", "PYTHONPATH": "", "COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    assert "enable_chunked_prefill: you asked for" in done.output
    assert "max_num_seqs:" not in done.output       # a certain default gets no note
    assert "max_model_len: max_model_len comes from the model's config.json" in done.output
    bad = CliRunner().invoke(app, ["explain", "--no-detect-hardware"], env={"PATCHOPS_ROOTS": ""})
    assert bad.exit_code == 2


@pytest.mark.vllm
def test_a_default_a_patchset_made_count_names_the_patchset_and_its_line(seed, tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "corex")
    wheelcache.hardcode_like_corex(site)
    hardware = parse_hardware("4xBI-V100:32GiB:cc7.5:corex")
    before = rows(api.explain(seed, vllm_path=site, hardware=hardware))["enforce_eager"]
    assert (before.value, before.origin) == (True, HARDCODED)
    api.commit_apply(api.plan_apply(["corex-eager-allreduce"], sites=[site]))
    after = rows(api.explain(seed, vllm_path=site, hardware=hardware))
    eager = after["enforce_eager"]
    assert (eager.value, eager.origin) == (False, "applied by patchset corex-eager-allreduce")
    path, line = eager.where.rsplit(":", 1)
    assert path == str(site / "vllm" / "engine" / "arg_utils.py")
    assert "enforce_eager=self.enforce_eager" in Path(path).read_text().splitlines()[int(line) - 1]
    # what the user sets is still theirs; a field the patchset did not touch keeps its origin
    stated = seed.with_name("eager.yaml")
    stated.write_text(SEED.replace("  tensor-parallel-size: 4\n", "  tensor-parallel-size: 4\n  enforce-eager: true\n"))
    assert rows(api.explain(stated, vllm_path=site, hardware=hardware))["enforce_eager"].origin == SET
    assert after["block_size"].origin == "vLLM 0.8.5 default"
    # a file changed since the patchset went in is not counted as patched
    Path(path).write_text(Path(path).read_text() + "\n# edited\n")
    drifted = rows(api.explain(seed, vllm_path=site, hardware=hardware))["enforce_eager"]
    assert drifted.origin == "vLLM 0.8.5 default"


def test_shipped_facts_have_no_patchset_origin(seed):
    found = rows(api.explain(seed, vllm_version="0.8.5"))
    assert not any(row.origin.startswith("applied by patchset") for row in found.values())


def test_explain_looks_for_the_store_where_the_store_lives():
    from patchops.patching import applied_settings as applied
    from patchops.store import site_store as store

    assert applied.STORE_FOLDER == store.STORE_DIR
