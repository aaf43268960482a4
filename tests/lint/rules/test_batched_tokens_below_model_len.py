"""PO201 batched-tokens-below-model-len beyond its examples."""

from __future__ import annotations


from lintkit import linter, said


CODE = "PO201"


lint = linter(CODE, kind="spec")


SEED = ("model: /models/Qwen2.5-32B-Instruct\n"
        "vllm: {version: 0.6.3.post1}\n"
        "args:\n"
        "  num-scheduler-steps: 4\n"
        "  enable-chunked-prefill: false\n"
        "  max-model-len: 100000\n"
        "  max-num-batched-tokens: 8192\n")


def test_seed_incident_is_an_error_with_the_exact_vllm_text():
    [found] = lint(SEED, "0.6.3.post1")
    assert found.severity == "error" and (found.line, found.column) == (7, 3)
    assert found.message == "max_num_batched_tokens 8192 < max_model_len 100000 with chunked prefill off"
    assert "will refuse to start" in found.explanation
    assert found.fields == ("max_num_batched_tokens", "max_model_len", "enable_chunked_prefill")
    assert found.vllm_message.startswith("max_num_batched_tokens (8192) is smaller than max_model_len "
                                         "(100000). This effectively limits")
    assert "100000" in found.fix and "turn chunked prefill on" in found.fix


def test_yaml_false_dropped_on_0_7_3_leaves_v0_to_decide():
    # vllm serve drops the YAML false; V0 then turns chunked prefill on for 100000 > 32768,
    # unless the model is one V0 does not chunk: "possibly".
    [found] = lint(SEED.replace("0.6.3.post1", "0.7.3"), "0.7.3")
    assert found.severity == "warning" and "possibly refuses to start" in found.message
    assert "32768" in said(found)


def test_cli_false_on_0_7_3_is_honoured():
    [found] = lint("vllm serve /models/Qwen2.5-32B-Instruct --enable-chunked-prefill false "
                   "--max-model-len 100000 --max-num-batched-tokens 8192\n", "0.7.3", kind="command")
    assert found.severity == "error"


def test_v1_forces_chunked_prefill_on():
    cmd = ("vllm serve /models/Qwen2.5-32B-Instruct --no-enable-chunked-prefill "
           "--max-model-len 100000 --max-num-batched-tokens 8192\n")
    assert lint(cmd, "0.8.5", kind="command") == []
    assert lint(cmd, "0.11.0", kind="command") == []
    # ... unless multi-step sends the launch back to V0
    [found] = lint(cmd.replace("--no-enable", "--num-scheduler-steps 8 --no-enable"), "0.8.5",
                   kind="command")
    assert found.severity == "error"


def test_quiet_when_chunked_prefill_is_forced_on_or_the_length_is_unknown():
    # 0.11.0 has no V0: VLLM_USE_V1=0 still builds V1's configuration, which turns chunked prefill on
    assert lint("VLLM_USE_V1=0 vllm serve m --no-enable-chunked-prefill --max-model-len 100000 "
                "--max-num-batched-tokens 8192\n", "0.11.0", kind="command") == []
    [found] = lint("VLLM_USE_V1=0 vllm serve m --no-enable-chunked-prefill --max-model-len 100000 "
                   "--max-num-batched-tokens 8192\n", "0.10.2", kind="command")
    assert found.severity == "error"
    assert lint("model: m\nenable-chunked-prefill: false\nmax-num-batched-tokens: 8192\n",
                "0.6.3.post1", kind="config") == []
    assert lint("model: m\nmax-model-len: 100000\n", "0.12.0", kind="config") == []


def test_a_forks_literal_default_budget_counts():
    [found] = lint("model: m\nmax-model-len: 8192\n", "0.6.3.post1", kind="config",
                   field_defaults={"max_num_batched_tokens": 4096})
    assert "max_num_batched_tokens 4096 is this vLLM build's default" in found.explanation
    assert (found.line, found.column) == (2, 1)


def test_a_budget_equal_to_max_model_len_is_enough():
    cmd = ("vllm serve m --enable-chunked-prefill false --max-model-len 8192 "
           "--max-num-batched-tokens {budget}\n")
    assert lint(cmd.format(budget=8192), "0.6.3.post1", kind="command") == []
    [found] = lint(cmd.format(budget=8191), "0.6.3.post1", kind="command")
    assert found.severity == "error" and found.message.startswith(
        "max_num_batched_tokens 8191 < max_model_len 8192")


def test_v0_chunks_only_above_32768():
    # V0 turns chunked prefill on for max_model_len > 32768: at 32768 the refusal is certain,
    # one token above it only possible (the model may not support chunking).
    text = "model: m\nmax-model-len: {mml}\nmax-num-batched-tokens: 8192\n"
    [at_limit] = lint(text.format(mml=32768), "0.7.3", kind="config")
    assert at_limit.severity == "error" and "will refuse to start" in said(at_limit)
    [above] = lint(text.format(mml=32769), "0.7.3", kind="config")
    assert above.severity == "warning" and "possibly refuses to start" in above.message
