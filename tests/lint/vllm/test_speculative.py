"""lint/vllm/speculative.py: SpeculativeConfig's refusals of a --speculative-config dict."""

from __future__ import annotations

import pytest

from patchops.lint.facts.groups import NestedField
from patchops.lint.vllm import releases, speculative


def problem(value, bounds=None, model_type="qwen2", version="0.8.5"):
    """Run speculative.problem with SpeculativeConfig fields of these pydantic bounds."""
    fields = {name: NestedField(kinds=("int",), **bound) for name, bound in (bounds or {}).items()}
    return speculative.problem(version, value, fields, model_type)


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


def test_a_method_that_needs_a_draft_model_has_one():
    assert problem({"method": "eagle", "num_speculative_tokens": 3})[1] == speculative.NO_DRAFT_MODEL
    assert problem({"method": "eagle", "num_speculative_tokens": 3}, version="0.11.0")[1] == \
        speculative.NO_DRAFT_MODEL_011
    assert problem({"method": "eagle", "num_speculative_tokens": 3, "model": "d"}) is None


def test_before_0_11_the_target_drafts_itself_by_its_model_type():
    deepseek_mtp = {"method": "deepseek_mtp", "num_speculative_tokens": 1}
    assert problem(deepseek_mtp, version="0.10.2")[1] == speculative.NO_DRAFT_MODEL
    assert problem(deepseek_mtp, model_type="deepseek_v3", version="0.10.2") is None
    assert problem(deepseek_mtp, version="0.11.0") is None
    assert problem({"num_speculative_tokens": 1}, model_type="deepseek_v3", version="0.11.0")[1] == \
        speculative.NO_DRAFT_MODEL_011
    assert problem({"num_speculative_tokens": 1}, model_type="mimo", version="0.8.5")[1] == speculative.NO_DRAFT_MODEL
    assert problem({"num_speculative_tokens": 1}, model_type="mimo", version="0.9.0") is None
    assert problem({"num_speculative_tokens": 1}, model_type="qwen3_next", version="0.10.1.1") is not None
    assert problem({"num_speculative_tokens": 1}, model_type="qwen3_next", version="0.10.2") is None


def test_methods_that_need_no_draft_model_arrive_by_release():
    for method, last_without, first_with in (("suffix", "0.11.0", "0.11.1"),
                                             ("extract_hidden_states", "0.16.0", "0.17.0"),
                                             ("ngram_gpu", "0.17.1", "0.18.0")):
        value = {"method": method, "num_speculative_tokens": 3}
        assert problem(value, version=last_without) is not None, method
        assert problem(value, version=first_with) is None, method


def test_custom_class_without_its_class_path_is_refused_in_its_own_words():
    value = {"method": "custom_class", "num_speculative_tokens": 3}
    assert problem(value, version="0.22.0")[1] == speculative.CUSTOM_CLASS_NEEDS_MODEL
    assert problem(value, version="0.21.0")[1] == speculative.NO_DRAFT_MODEL_011
    assert problem(dict(value, model="my_module.MyProposer"), version="0.22.0") is None


def test_ngram_gpu_takes_the_ngram_window_from_0_18():
    value = {"method": "ngram_gpu", "num_speculative_tokens": 3, "prompt_lookup_min": 5, "prompt_lookup_max": 3}
    assert problem(value, version="0.18.0")[1] == "prompt_lookup_min=5 must be <= prompt_lookup_max=3"
    assert "ngram_gpu" not in speculative.window_methods("0.17.1")


# --- against real vLLM: each wording where the boundaries say --------------------------------


def _speculative_source(site) -> str:
    import re

    for name in ("vllm/config/speculative.py", "vllm/config/__init__.py", "vllm/config.py"):
        path = site / name
        if path.exists() and "class SpeculativeConfig" in path.read_text():
            # adjacent string literals, as Python joins them
            return re.sub(r'"\s*\n\s*"', "", path.read_text())
    raise AssertionError(f"no SpeculativeConfig in {site}")


@pytest.mark.vllm
@pytest.mark.parametrize("version,method", [("0.10.0", "eagle"), ("0.11.0", "eagle"), ("0.12.0", "eagle"),
                                            ("0.25.0", "custom_class")])
def test_the_no_draft_model_wording_is_the_releases_own(vllm_site, version, method):
    source = _speculative_source(vllm_site(version))
    assert speculative.no_draft_model(version, method) in source
    if method == "eagle":
        other = speculative.NO_DRAFT_MODEL_011 if releases.release(version) < releases.SPEC_NO_MODEL_WORDING \
            else speculative.NO_DRAFT_MODEL
        assert other not in source


@pytest.mark.vllm
@pytest.mark.parametrize("version", ["0.11.0", "0.12.0", "0.25.0", "0.33.0"])
def test_every_method_said_to_need_no_draft_model_is_given_one_by_the_release(vllm_site, version):
    source = _speculative_source(vllm_site(version))
    for method in speculative.self_drafting(version):
        if method != "[ngram]":
            assert f'self.model = "{method}"' in source, (version, method)
    for method in {"suffix", "extract_hidden_states", "ngram_gpu"} - set(speculative.self_drafting(version)):
        assert f'self.model = "{method}"' not in source, (version, method)
