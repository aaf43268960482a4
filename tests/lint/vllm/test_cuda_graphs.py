"""lint/vllm/cuda_graphs.py: whether a copy runs eagerly and which batch sizes it captures."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import cuda_graphs


def config(*args):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return load_text(f"model: /models/m\nargs:\n{body}hardware: {{platform: cuda, compute_capability: '8.0', gpus: 2}}\n")


def sizes(version, *args):
    return cuda_graphs.capture_sizes(config(*args), facts_for_version(version)).value


@pytest.mark.parametrize("version", ["0.6.3.post1", "0.8.5", "0.12.0", "0.33.0"])
def test_enforce_eager_captures_nothing(version):
    found = cuda_graphs.capture_sizes(config("enforce-eager: true"), facts_for_version(version))
    assert found.value == () and found.reason == "enforce_eager is set, so vLLM captures no CUDA graphs"


@pytest.mark.parametrize("version, eager", [("0.7.3", False), ("0.8.5", True), ("0.9.2", False)])
def test_data_parallelism_forces_eager_on_0_8_only(version, eager):
    found = cuda_graphs.effective_eager(config("data-parallel-size: 2"), facts_for_version(version))
    assert bool(found.value) is eager
    assert bool(cuda_graphs.effective_eager(config("data-parallel-size: 1"), facts_for_version(version)).value) is False


def test_v0_captures_powers_then_steps_of_8_up_to_max_num_seqs():
    assert sizes("0.6.3.post1", "max-num-seqs: 16") == (1, 2, 4, 8, 16)
    default = sizes("0.6.3.post1")
    assert default[:5] == (1, 2, 4, 8, 16) and default[-1] == 256 and len(default) == 35


def test_from_0_10_v1_captures_up_to_twice_max_num_seqs():
    assert sizes("0.10.1.1", "max-num-seqs: 16") == (1, 2, 4, 8, 16, 24, 32)
    assert sizes("0.8.5", "max-num-seqs: 16")[-1] == 512       # 0.8.5's V1 ignores max_num_seqs


@pytest.mark.parametrize("version, captures", [("0.10.0", True), ("0.10.1.1", False), ("0.12.0", True)])
def test_a_level_other_than_piecewise_stops_v1_capturing_from_0_10_1_until_0_12(version, captures):
    assert bool(sizes(version, "compilation-config: {level: 0}")) is captures
    assert sizes(version, "compilation-config: {level: 3}")


def test_a_stated_list_is_used_where_the_release_reads_it():
    assert sizes("0.10.1.1", "cuda-graph-sizes: [1, 2, 4]") == (1, 2, 4)
    assert sizes("0.33.0", "cuda-graph-sizes: [1, 2, 4]") == (1, 2, 4)
    assert sizes("0.8.5", "cuda-graph-sizes: [1, 2, 4]")[-1] == 512


def test_suggested_sizes_are_powers_of_two_reaching_the_top():
    assert [cuda_graphs.suggested_sizes(n) for n in (1, 8, 9)] == [[1], [1, 2, 4, 8], [1, 2, 4, 8, 16]]


def test_the_capture_list_setting_and_its_fix_per_release():
    assert [cuda_graphs.capture_list_setting(facts_for_version(v)) for v in ("0.6.3.post1", "0.7.3", "0.11.0", "0.12.0")] == \
        [None, "compilation_config", "compilation_config", "cudagraph_capture_sizes"]
    assert cuda_graphs.capture_fix(facts_for_version("0.6.3.post1"), 8).startswith("vLLM 0.6.3 has no flag")
    assert cuda_graphs.capture_fix(facts_for_version("0.11.0"), 8) == (
        "set compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}' (a JSON string in YAML) so "
        "batches up to 8 are captured")
    assert cuda_graphs.capture_fix(facts_for_version("0.12.0"), 5) == \
        "set cudagraph-capture-sizes: [1, 2, 4, 8] (or max-cudagraph-capture-size: 8)"
