"""PO304 multistep-with-spec-decode beyond its examples."""

from __future__ import annotations

from lintkit import linter


CODE = "PO304"
SPEC = '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'


lint = linter(CODE, kind="config")


def test_fires_on_the_speculative_setting():
    [found] = lint(f"model: m\nnum-scheduler-steps: 8\nspeculative-config: '{SPEC}'\n", "0.10.0")
    assert (found.line, found.column) == (3, 1) and found.severity == "error"
    assert found.fields == ("speculative_config", "num_scheduler_steps")
    assert found.vllm_message == ("Speculative decoding is not supported with multi-step "
                                  "(--num-scheduler-steps > 1)")


def test_quiet_without_one_of_the_two_or_when_v1_is_forced():
    assert lint(f"model: m\nspeculative-config: '{SPEC}'\n", "0.9.2") == []
    assert lint("model: m\nnum-scheduler-steps: 8\n", "0.9.2") == []
    assert lint(f"VLLM_USE_V1=1 vllm serve m --num-scheduler-steps 8 --speculative-config '{SPEC}'\n",
                "0.9.2", kind="command") == []


def test_forced_v1_hands_the_pair_to_the_oracle_from_0_8_5_on():
    # V1_ORACLE (0.8.5): with VLLM_USE_V1=1 the V1 oracle refuses multi-step first (PO302);
    # before it, 0.7.3's V0 checks still see the pair.
    old = lint("VLLM_USE_V1=1 vllm serve m --num-scheduler-steps 8 --speculative-model '[ngram]' "
               "--num-speculative-tokens 4 --ngram-prompt-lookup-max 4\n", "0.7.3", kind="command")
    assert [(d.severity, d.fields) for d in old] == [("error", ("speculative_model", "num_scheduler_steps"))]
    assert lint(f"VLLM_USE_V1=1 vllm serve m --num-scheduler-steps 8 --speculative-config '{SPEC}'\n",
                "0.8.5", kind="command") == []
