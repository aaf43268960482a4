"""PO101 unknown-flag beyond its examples: aliases, did-you-mean, version history."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import Flag
from patchops.lint.rules.unknown_flag import UnknownFlag
from patchops.lint.vllm import options

from lintkit import findings, linter

FLAGS = {
    "tensor_parallel_size": Flag("tensor-parallel-size", "tensor_parallel_size", type="int",
                                 aliases=("-tp",)),
    "max_model_len": Flag("max-model-len", "max_model_len", type="int"),
    "gpu_memory_utilization": Flag("gpu-memory-utilization", "gpu_memory_utilization",
                                   type="float"),
    "enable_prefix_caching": Flag("enable-prefix-caching", "enable_prefix_caching",
                                  action="boolean_optional"),
    "compilation_config": Flag("compilation-config", "compilation_config", type="json",
                               aliases=("-O",)),
}


def run(text, version="0.8.5", kind="spec"):
    """Lint `text` through the runner on `version`'s shipped facts, with the flag table above."""
    return findings(UnknownFlag.code, text, version, kind, flags=FLAGS)


@pytest.fixture(autouse=True)
def no_history(monkeypatch):
    monkeypatch.setattr(options, "_shipped", lambda: ())


def test_short_alias_as_key_names_the_long_option():
    [found] = run("model: m\nargs:\n  tp: 4\n")
    assert found.code == "PO101" and found.severity == "error"
    assert (found.line, found.column) == (3, 3)
    assert found.message.startswith("short alias \"tp\" (-tp)")
    assert found.fix == "use the long name tensor_parallel_size"
    assert found.fields == ("tensor_parallel_size",)
    assert found.vllm_message == "vllm: error: unrecognized arguments: --tp 4"


def test_short_alias_keeps_the_users_dash_style():
    [found] = run("model: m\nargs:\n  O: '{\"level\": 3}'\n")
    assert found.fix == "use the long name compilation_config"
    [found] = run("vllm serve m --tp 4\n", kind="command")
    assert found.fix.startswith("use the long name --tensor-parallel-size")
    assert "-tp" in found.fix


def test_did_you_mean_in_the_users_spelling():
    [found] = run("model: m\nargs:\n  max-model-length: 4096\n")
    assert found.message.startswith('unknown flag "max-model-length"')
    assert 'vLLM 0.8.5 has no --max-model-length' in found.explanation
    assert 'did you mean "max-model-len"?' in found.fix
    assert found.fields == ("max_model_length", "max_model_len")
    [found] = run("vllm serve m --gpu-memory-utilisation 0.85\n", kind="command")
    assert 'did you mean "--gpu-memory-utilization"?' in found.fix
    assert found.vllm_message == "vllm: error: unrecognized arguments: --gpu-memory-utilisation 0.85"


def test_no_suggestion_for_a_far_name():
    [found] = run("model: m\nargs:\n  frobnicate: 1\n")
    assert "did you mean" not in found.fix
    assert "remove it" in found.fix


def test_dotted_key_on_a_version_without_dotted_keys():
    [found] = run("model: m\nargs:\n  compilation_config.level: 3\n", version="0.8.5")
    assert "dotted key" in found.message
    assert '"level"' in found.fix


def test_history_removed_and_added(monkeypatch):
    rows = (("0.10.0", frozenset({"preemption_mode", "max_model_len"})),
            ("0.11.0", frozenset({"max_model_len"})),
            ("0.12.0", frozenset({"max_model_len", "cudagraph_capture_sizes"})))
    monkeypatch.setattr(options, "_shipped", lambda: rows)
    [found] = run("model: m\nargs:\n  preemption_mode: swap\n", version="0.11.0")
    assert found.message.startswith('flag "preemption_mode" was removed after vLLM 0.10.0')
    assert "0.10.0" in found.fix
    [found] = run("model: m\nargs:\n  cudagraph_capture_sizes: [1, 2]\n", version="0.8.5")
    assert found.message.startswith('flag "cudagraph_capture_sizes" was added in vLLM 0.12.0')
    assert "upgrade to vLLM 0.12.0" in found.fix
    assert found.vllm_message == "vllm: error: unrecognized arguments: --cudagraph-capture-sizes [1, 2]"


def test_nothing_when_nothing_is_unknown():
    assert run("model: m\nargs:\n  tensor-parallel-size: 2\n  max-model-len: 4096\n") == []


# --- against real shipped facts, through vLLM's reading --------------------------------------


lint = linter(UnknownFlag.code)


@pytest.fixture
def history(monkeypatch):
    monkeypatch.undo()  # drop no_history: use the shipped versions
    options._shipped.cache_clear()


def test_shipped_history_of_removed_and_added_flags(history):
    [found] = lint("model: m\nargs:\n  max_seq_len_to_capture: 8192\n", "0.11.0")
    assert found.message.startswith('flag "max_seq_len_to_capture" was removed after vLLM 0.10.2')
    [found] = lint("model: m\nargs:\n  cudagraph_capture_sizes: 8\n", "0.8.5")
    assert found.message.startswith('flag "cudagraph_capture_sizes" was added in vLLM 0.11.1')
    [found] = lint("vllm serve m --enable-reasoning --reasoning-parser deepseek_r1\n", "0.10.0",
                   kind="command")
    assert "was removed after vLLM 0.9.2" in found.message
    assert (found.line, found.column) == (1, 14)


def test_alias_as_key_on_every_version(history):
    for vllm in ("0.6.3.post1", "0.8.5", "0.12.0", "0.33.0"):
        [found] = lint("model: m\nargs:\n  tp: 2\n", vllm)
        assert found.fix == "use the long name tensor_parallel_size", vllm


def test_false_unknown_key_is_dropped_not_rejected(history):
    # vllm serve drops `false` before argparse sees the key (yaml-false-dropped says so)
    assert lint("model: m\nargs:\n  enable_frobnication: false\n", "0.8.5") == []
    [found] = lint("model: m\nargs:\n  enable_frobnication: false\n", "0.6.3.post1")
    assert found.vllm_message == "vllm: error: unrecognized arguments: --enable-frobnication False"


def test_abbreviations_argparse_accepts_are_not_unknown(history):
    assert lint("model: m\nargs:\n  max_model: 4096\n", "0.8.5") == []


def test_argparse_wording():
    import argparse
    import inspect

    assert "_('unrecognized arguments: %s')" in inspect.getsource(argparse)


def test_a_removed_option_names_its_successor(history):
    [found] = lint("vllm serve m --speculative-model x\n", "0.33.0", kind="command")
    assert found.message == 'flag "--speculative-model" was removed after vLLM 0.8.2'
    assert found.fix.startswith("use --speculative-config '{\"model\": ...}' instead")
