"""PO202 batched-tokens-below-max-seqs beyond its examples."""

from __future__ import annotations


from lintkit import linter, said


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
    assert "2048" in said(found) and "8192" in said(found)
    assert "at least 4096" in found.fix


def test_large_tier_budget_is_enough_for_4096():
    assert lint(spec("0.9.2", "{gpus: 1, memory_gib: 80, compute_capability: 9.0}",
                     ["max-num-seqs: 4096"]), "0.9.2", kind="spec") == []
    # an A100 stays in the small tier from 0.9.2
    [found] = lint(spec("0.9.2", "{gpus: 1, memory_gib: 80, name: NVIDIA A100-SXM4-80GB}",
                        ["max-num-seqs: 4096"]), "0.9.2", kind="spec")
    assert found.severity == "error" and "A100" in said(found)


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
    assert found.severity == "warning" and "max_model_len" in said(found)


def test_defaults_alone_never_fire():
    assert lint("model: m\nmax-model-len: 8192\n", "0.8.5") == []
    assert lint("model: m\nmax-model-len: 8192\n", "0.7.3") == []


def test_0_11_without_v0_still_runs_schedulerconfig_check():
    # 0.11.0 has no V0: VLLM_USE_V1=0 still builds V1's SchedulerConfig, whose check refuses
    # before the API server's `assert envs.VLLM_USE_V1` (engine/arg_utils.py:1162, api_server.py:206-209).
    v0 = 'env:\n  VLLM_USE_V1: "0"\n'
    [found] = lint(spec("0.11.0", "{gpus: 1}", ["max-num-seqs: 512", "max-num-batched-tokens: 256"]) + v0,
                   "0.11.0", kind="spec")
    assert found.severity == "error" and (found.line, found.column) == (5, 3)
    assert "vLLM 0.11.0 refuses to start" in found.message
    # the check is `<`: a budget equal to max_num_seqs passes
    assert lint(spec("0.11.0", "{gpus: 1}", ["max-num-seqs: 512", "max-num-batched-tokens: 512"]) + v0,
                "0.11.0", kind="spec") == []
    # a V0 fallback (the oracle's) builds the same V1 configuration
    [found] = lint(spec("0.11.0", "{gpus: 1}", ["max-num-partial-prefills: 2", "max-num-seqs: 512",
                                                "max-num-batched-tokens: 256"]), "0.11.0", kind="spec")
    assert found.severity == "error"


def test_0_10_2_with_v0_uses_v0s_defaults():
    # 0.10.2 still has V0: VLLM_USE_V1=0 takes V0's max_num_seqs default (256), the other side.
    v0 = 'env:\n  VLLM_USE_V1: "0"\n'
    assert lint(spec("0.10.2", "{gpus: 1}", ["max-num-batched-tokens: 256"]) + v0, "0.10.2", kind="spec") == []
    [found] = lint(spec("0.10.2", "{gpus: 1}", ["max-num-batched-tokens: 255"]) + v0, "0.10.2", kind="spec")
    assert "max_num_seqs (256, the default)" in found.message and found.severity == "error"
