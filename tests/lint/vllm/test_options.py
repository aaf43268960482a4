"""lint/vllm/options.py: argparse's unique-prefix matching, per release and across the shipped ones."""

from __future__ import annotations

from patchops.lint.facts.model import facts_for_version
from patchops.lint.vllm import options


def test_a_unique_prefix_expands_to_its_option_and_dest():
    assert options.expansion(facts_for_version("0.8.5"), "--max-model") == ("--max-model-len", "max_model_len")


def test_a_full_option_an_ambiguous_prefix_or_an_unknown_one_is_no_expansion():
    facts = facts_for_version("0.8.5")
    assert options.expansion(facts, "--max-model-len") is None
    assert options.expansion(facts, "--max") is None            # --max-model-len, --max-num-seqs, ...
    assert options.expansion(facts, "--not-a-vllm-flag") is None


def test_the_same_prefix_resolves_per_release():
    # 0.33 adds --enable-chunked-mm-input beside --enable-chunked-prefill
    assert options.expansion(facts_for_version("0.8.5"), "--enable-chunked") == \
        ("--enable-chunked-prefill", "enable_chunked_prefill")
    assert options.expansion(facts_for_version("0.33.0"), "--enable-chunked") is None
    # 0.33's --disable-log-requests is the negation of --enable-log-requests
    assert options.expansion(facts_for_version("0.33.0"), "--disable-log-req") == \
        ("--disable-log-requests", "enable_log_requests")


def test_a_prefix_that_means_the_same_everywhere_has_nothing_to_say():
    assert options.meaning_elsewhere("--max-model", "max_model_len") == []


def test_ambiguous_and_unknown_releases_are_named():
    assert options.meaning_elsewhere("--enable-chunked", "enable_chunked_prefill")[0].startswith(
        "ambiguous in vLLM 0.33.0")
    gone = options.meaning_elsewhere("--num-sched", "num_scheduler_steps")
    assert len(gone) == 1 and gone[0].startswith("unknown in vLLM 0.10.1")
    assert "0.10.0" not in gone[0]                              # where it still means the flag


def test_another_meaning_is_its_own_group_after_the_unknown_run():
    found = options.meaning_elsewhere("--disable-log-req", "disable_log_requests")
    assert len(found) == 2
    assert found[0].startswith("unknown in vLLM ") and "0.15.0" not in found[0]
    assert found[1].startswith("means --enable-log-requests in vLLM 0.33.0")
