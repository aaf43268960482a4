"""PO202 batched-tokens-below-max-seqs beyond its examples."""

from __future__ import annotations

from lintkit import linter


CODE = "PO202"


lint = linter(CODE, kind="config")


def spec(version, hardware, args):
    return (f"model: /models/Qwen2.5-7B-Instruct\nvllm: {{version: {version}}}\n"
            f"hardware: {hardware}\nargs:\n" + "".join(f"  {line}\n" for line in args))


def test_both_set():
    [found] = lint("model: m\nmax-num-batched-tokens: 128\nmax-num-seqs: 256\n", "0.12.0")
    assert found.severity == "error" and (found.line, found.column) == (3, 1)
    assert found.vllm_message == ("max_num_batched_tokens (128) must be greater than or equal to "
                                  "max_num_seqs (256).")


def test_unknown_hardware_names_both_tiers():
    [found] = lint("model: m\nmax-num-seqs: 4096\n", "0.9.2")
    assert found.severity == "warning" and "possibly" in found.message
    assert "2048" in found.message and "8192" in found.message
    assert "at least 4096" in found.fix


def test_large_tier_budget_is_enough_for_4096():
    assert lint(spec("0.9.2", "{gpus: 1, memory_gib: 80, compute_capability: 9.0}",
                     ["max-num-seqs: 4096"]), "0.9.2", kind="spec") == []
    # an A100 stays in the small tier from 0.9.2
    [found] = lint(spec("0.9.2", "{gpus: 1, memory_gib: 80, name: NVIDIA A100-SXM4-80GB}",
                        ["max-num-seqs: 4096"]), "0.9.2", kind="spec")
    assert found.severity == "error" and "A100" in found.message


def test_default_max_num_seqs_is_capped_from_0_10_1():
    h100 = "{gpus: 1, memory_gib: 80, compute_capability: 9.0}"
    [found] = lint(spec("0.10.0", h100, ["max-num-batched-tokens: 512"]), "0.10.0", kind="spec")
    assert "max_num_seqs (1024, the default)" in found.message
    assert lint(spec("0.10.1.1", h100, ["max-num-batched-tokens: 512"]), "0.10.1.1", kind="spec") == []


def test_v0_default_budget_depends_on_max_model_len():
    assert lint("model: m\nmax-num-seqs: 4096\nmax-model-len: 8192\n", "0.7.3") == []
    [found] = lint("model: m\nmax-num-seqs: 4096\nmax-model-len: 3000\n", "0.7.3")
    assert found.severity == "error" and "(3000, the default)" in found.message
    [found] = lint("model: m\nmax-num-seqs: 4096\n", "0.7.3")
    assert found.severity == "warning" and "max_model_len" in found.message


def test_defaults_alone_never_fire():
    assert lint("model: m\nmax-model-len: 8192\n", "0.8.5") == []
    assert lint("model: m\nmax-model-len: 8192\n", "0.7.3") == []
