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


# --- unknown options (PO101's prediction) -------------------------------------------------------


def test_known_names_hold_every_long_option_normalised():
    known = options.known_names(facts_for_version("0.8.5"))
    assert known["max_model_len"].dest == "max_model_len"
    assert "tp" not in known                                   # -tp is a short alias, not a name


def test_a_long_key_spelling_a_short_alias_finds_its_flag():
    facts = facts_for_version("0.8.5")
    flag = options.alias_target("tp", facts)
    assert flag is not None and flag.dest == "tensor_parallel_size"
    assert options.alias_short(flag, "tp") == "tp"
    assert options.alias_target("max_model_len", facts) is None


def test_flag_history_names_the_neighbouring_releases(monkeypatch):
    rows = (("0.10.0", frozenset({"preemption_mode"})), ("0.11.0", frozenset()),
            ("0.12.0", frozenset({"preemption_mode"})))
    monkeypatch.setattr(options, "_shipped", lambda: rows)
    assert options.flag_history("preemption_mode", "0.11.0") == ("0.10.0", "0.12.0")
    assert options.flag_history("preemption_mode", "0.10.0") == (None, "0.12.0")
    assert options.flag_history("preemption_mode", "0.12.0") == ("0.10.0", None)


def _setting(value, source="config"):
    from patchops.lint.input.serve_config import Setting
    return Setting(key="cudagraph_capture_sizes", name="cudagraph_capture_sizes", value=value, line=1,
                   column=1, source=source)


def test_a_config_files_list_is_split_into_tokens_from_the_boundary():
    from patchops.lint.vllm import releases
    boundary = str(releases.UNKNOWN_LIST_SPLIT)
    before = "0.10.1"
    assert releases.release(before) < releases.UNKNOWN_LIST_SPLIT
    assert options.argv_of(_setting([1, 2]), boundary) == "--cudagraph-capture-sizes 1 2"
    assert options.argv_of(_setting([1, 2]), before) == "--cudagraph-capture-sizes [1, 2]"
    assert options.argv_of(_setting(True), before) == "--cudagraph-capture-sizes"


def test_close_names_take_at_most_two_near_ones():
    known = options.known_names(facts_for_version("0.8.5"))
    assert options.close_names("max_model_length", known)[0] == "max_model_len"
    assert options.close_names("frobnicate", known) == []
