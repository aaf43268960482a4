"""lint/vllm/speculative.py: SpeculativeConfig's refusals of a --speculative-config dict."""

from __future__ import annotations

from patchops.lint.vllm import speculative


def problem(value, fields=None, model_type="qwen2"):
    return speculative.problem(value, fields or {}, model_type)


def test_an_ngram_window_fills_a_missing_end_from_the_other():
    assert problem({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2}) is None
    assert problem({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3}) is None
    assert problem({"method": "ngram", "num_speculative_tokens": 3}) is None          # both 5


def test_min_above_max_is_refused_and_equal_is_not():
    assert problem({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 4,
                    "prompt_lookup_max": 4}) is None
    _, vllm = problem({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 5,
                       "prompt_lookup_max": 4})
    assert vllm == "prompt_lookup_min=5 must be <= prompt_lookup_max=4"


def test_a_window_end_below_one_is_refused_unless_pydantic_bounds_it():
    value = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 0, "prompt_lookup_max": 0}
    assert problem(value)[1] == "prompt_lookup_min=0 must be > 0"
    assert problem(value, {"prompt_lookup_min": {"ge": 1}, "prompt_lookup_max": {"ge": 1}}) is None
    value = dict(value, prompt_lookup_min=1, prompt_lookup_max=1)
    assert problem(value) is None


def test_tokens_must_be_given_and_positive():
    assert problem({"method": "ngram"})[1] == speculative.MISSING_TOKENS
    assert problem({})[1] == speculative.MISSING_TOKENS
    assert problem({"method": "ngram", "num_speculative_tokens": 0})[1] == \
        "Expected num_speculative_tokens to be greater than zero (0)."
    assert problem({"method": "ngram", "num_speculative_tokens": 1}) is None
    assert problem({"method": "ngram", "num_speculative_tokens": 0}, {"num_speculative_tokens": {"gt": 0}}) is None


def test_a_method_that_needs_a_draft_model_has_one_or_drafts_itself():
    assert problem({"method": "eagle", "num_speculative_tokens": 3})[1] == speculative.NO_DRAFT_MODEL
    assert problem({"method": "eagle", "num_speculative_tokens": 3, "model": "d"}) is None
    assert problem({"method": "deepseek_mtp", "num_speculative_tokens": 1}) is None
    assert problem({"method": "eagle", "num_speculative_tokens": 3}, model_type="deepseek_v3") is None
    for method in speculative.SELF_DRAFTING:
        assert problem({"method": method, "num_speculative_tokens": 3}) is None, method
