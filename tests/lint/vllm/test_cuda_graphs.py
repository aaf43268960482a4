"""lint/vllm/cuda_graphs.py: whether a copy runs eagerly and which batch sizes it captures."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import cuda_graphs

from handmade import L40S_CTX, as_read, hand_config, hand_facts


def config(*args):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return as_read(load_text(f"model: /models/m\nargs:\n{body}hardware: {{platform: cuda, compute_capability: '8.0', gpus: 2}}\n"))


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


# Capture sizes of hand-built configs.


def test_capture_sizes_empty_when_eager():
    assert cuda_graphs.capture_sizes(hand_config(args={"enforce_eager": True}), hand_facts("0.8.5")).value == ()
    hard = hand_facts("0.8.5", hardcoded={"enforce_eager": "True"})
    got = cuda_graphs.capture_sizes(hand_config(), hard)
    assert got.value == () and "hardcodes" in got.reason
    level0 = hand_config(args={"compilation_config": {"level": 0}})
    assert cuda_graphs.capture_sizes(level0, hand_facts("0.10.1.1")).value == ()
    # up to 0.10.0 V1 sets PIECEWISE itself (vllm/config.py:4563, 0.9.2): level 0 still captures
    assert cuda_graphs.capture_sizes(level0, hand_facts("0.9.2")).value[:3] == (1, 2, 4)
    assert cuda_graphs.capture_sizes(hand_config(args={"optimization_level": "0"}), hand_facts("0.33.0")).value == ()
    assert cuda_graphs.capture_sizes(hand_config(args={"optimization_level": "1"}), hand_facts("0.33.0")).value != ()
    mode = hand_config(args={"compilation_config": '{"cudagraph_mode": "NONE"}'})
    assert cuda_graphs.capture_sizes(mode, hand_facts("0.12.0")).value == ()


def test_capture_sizes_v0_follow_max_num_seqs():
    assert cuda_graphs.capture_sizes(hand_config(), hand_facts("0.6.3.post1")).value[-3:] == (240, 248, 256)
    assert cuda_graphs.capture_sizes(hand_config(args={"max_num_seqs": 100}), hand_facts("0.6.3.post1")).value[-1] == 104
    assert cuda_graphs.capture_sizes(hand_config(args={"max_num_seqs": 3}), hand_facts("0.7.3")).value == (1, 2, 4)
    explicit = hand_config(args={"compilation_config": '{"cudagraph_capture_sizes": [4, 1, 2, 2]}'})
    assert cuda_graphs.capture_sizes(explicit, hand_facts("0.7.3")).value == (1, 2, 4)


def test_capture_sizes_v1_defaults_by_version():
    assert cuda_graphs.capture_sizes(hand_config(), hand_facts("0.7.3")).value[-1] == 256  # V0 is the 0.7.3 default
    v1_073 = cuda_graphs.capture_sizes(hand_config(env={"VLLM_USE_V1": 1}), hand_facts("0.7.3")).value
    assert v1_073[:4] == (1, 2, 4, 8) and v1_073[-1] == 512
    budget = hand_config(args={"max_num_batched_tokens": 256})
    assert cuda_graphs.capture_sizes(budget, hand_facts("0.8.5")).value[-1] == 256
    assert cuda_graphs.capture_sizes(hand_config(args={"cuda_graph_sizes": [64]}), hand_facts("0.9.2")).value[-1] == 64
    assert cuda_graphs.capture_sizes(hand_config(args={"cuda_graph_sizes": [3, 1, 9]}), hand_facts("0.9.2")).value == (1, 3, 9)
    assert cuda_graphs.capture_sizes(hand_config(args={"max_num_seqs": 32}), hand_facts("0.10.2")).value[-1] == 64
    assert cuda_graphs.capture_sizes(hand_config(ctx=L40S_CTX), hand_facts("0.11.0")).value[-1] == 512


def test_capture_sizes_0_12():
    default = cuda_graphs.capture_sizes(hand_config(ctx=L40S_CTX), hand_facts("0.12.0")).value
    assert default[-1] == 512 and 248 in default and 272 in default and 264 not in default
    assert cuda_graphs.capture_sizes(hand_config(args={"cuda_graph_sizes": [512]}), hand_facts("0.12.0")).value == (512,)
    assert cuda_graphs.capture_sizes(hand_config(args={"max_cudagraph_capture_size": 64}), hand_facts("0.12.0")).value[-1] == 64
    dropped = hand_config(args={"cudagraph_capture_sizes": [1, 2, 4096]}, ctx=L40S_CTX)
    assert cuda_graphs.capture_sizes(dropped, hand_facts("0.12.0")).value == (1, 2)
    blackwell = {"hardware.memory_gib": 180, "hardware.compute_capability": 10.0}
    assert cuda_graphs.capture_sizes(hand_config(ctx=blackwell), hand_facts("0.33.0")).value[-1] == 1024


def test_fork_default_capture_sizes():
    fork = hand_facts("0.8.5", capture_sizes_default=(1, 2))
    got = cuda_graphs.capture_sizes(hand_config(), fork)
    assert got.value == (1, 2) and "default capture list" in got.reason
    # 0.9.2-0.11: the CompilationConfig default wins over --cuda-graph-sizes
    assert cuda_graphs.capture_sizes(hand_config(args={"cuda_graph_sizes": [64]}),
                            hand_facts("0.9.2", capture_sizes_default=(1, 2))).value == (1, 2)
    # the user's compilation_config list replaces the fork's default
    mine = hand_config(args={"compilation_config": '{"cudagraph_capture_sizes": [1, 2, 4, 8]}'})
    assert cuda_graphs.capture_sizes(mine, fork).value == (1, 2, 4, 8)
