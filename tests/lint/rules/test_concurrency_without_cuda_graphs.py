"""PO401 concurrency-without-cuda-graphs beyond its examples."""

from __future__ import annotations

from lintkit import linter


CODE = "PO401"


lint = linter(CODE, kind="spec")


def spec(version, args=(), concurrency="[1, 4, 8]", hardware="{gpus: 1, memory_gib: 80, compute_capability: 9.0}"):
    return (f"model: /models/Qwen2.5-7B-Instruct\nvllm: {{version: {version}}}\nhardware: {hardware}\n"
            "args:\n  max-model-len: 8192\n" + "".join(f"  {a}\n" for a in args)
            + f"workload:\n  concurrency: {concurrency}\n")


def test_fork_default_on_v0_runs_eagerly():
    [found] = lint(spec("0.7.3"), "0.7.3", capture_sizes_default=[1, 2])
    assert "concurrency 4 and 8" in found.message and "run eagerly" in found.explanation
    assert "this vLLM build defaults compilation_config.cudagraph_capture_sizes to [1, 2]" in found.explanation
    assert found.fields == ("workload.concurrency",)
    assert found.fix.startswith("set compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'")


def test_single_level_and_0_12_fix():
    [found] = lint(spec("0.12.0", ["cudagraph-capture-sizes: [1, 2, 4]"], "[16]"), "0.12.0")
    assert found.message.startswith("workload concurrency 16 runs without CUDA graphs")
    assert found.fix.startswith("set cudagraph-capture-sizes: [1, 2, 4, 8, 16]")
    assert "cudagraph_capture_sizes" in found.fields


def test_levels_are_capped_at_max_num_seqs():
    # V0 captures up to max_num_seqs and never batches more sequences than that
    assert lint(spec("0.6.3.post1", concurrency="[1, 256, 512]"), "0.6.3.post1") == []
    assert lint(spec("0.8.5", ["max-num-seqs: 2"], "[1, 2, 4, 8]"), "0.8.5",
                capture_sizes_default=[1, 2]) == []


def test_explicit_max_num_seqs_above_the_capture_list():
    [found] = lint(spec("0.10.2", ["max-num-seqs: 1024"], "[1]"), "0.10.2")
    assert "max_num_seqs (1024)" in found.message and "512" in found.message
    assert (found.line, found.column) == (6, 3)


def test_quiet_without_graphs_or_workload():
    assert lint(spec("0.8.5", ["enforce-eager: true"]), "0.8.5", capture_sizes_default=[1, 2]) == []
    assert lint("model: m\nmax-model-len: 8192\n", "0.8.5", kind="config", capture_sizes_default=[1, 2]) == []


def test_level_and_use_cudagraph_turn_graphs_off_only_before_0_12():
    # CAPTURE_PATTERN_012: from 0.12 the capture list is read as given; before it, V1 captures
    # nothing with compilation level other than 3 or use_cudagraph false (so nothing to flag).
    sizes = '"cudagraph_capture_sizes": [1, 2, 4]'
    assert lint(spec("0.11.0", ["compilation-config: '{%s}'" % sizes], "[16]"), "0.11.0")
    for off in ('"level": 0', '"use_cudagraph": false'):
        stated = ["compilation-config: '{%s, %s}'" % (off, sizes)]
        assert lint(spec("0.11.0", stated, "[16]"), "0.11.0") == [], off
        [found] = lint(spec("0.12.0", stated, "[16]"), "0.12.0")
        assert found.message.startswith("workload concurrency 16 runs without CUDA graph"), off


def test_v0_only_options_send_the_launch_to_v0_only_before_0_11():
    # V0_REMOVED (0.11): --load-format sharded_state and --preemption-mode no longer make the V1
    # oracle fall back (there is no V0 left); 0.10.2 still runs them on V0.
    capture = "compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4]}'"
    for option in ("load-format: sharded_state", "preemption-mode: swap"):
        [old] = lint(spec("0.10.2", [option, capture], "[16]"), "0.10.2")
        [new] = lint(spec("0.11.0", [option, capture], "[16]"), "0.11.0")
        assert "vLLM 0.10.2 (V0)" in old.explanation and "vLLM 0.11.0 (V1)" in new.explanation, option
