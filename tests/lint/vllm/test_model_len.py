"""lint/vllm/model_len.py: the maximum length a release derives from config.json, and the one it runs with."""

from __future__ import annotations

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.vllm import model_len

from handmade import as_read

YARN = {"model_type": "qwen2", "max_position_embeddings": 32768,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}


def derived(config, version="0.8.5", **kw):
    return model_len.derived_max_len(model_facts_from_dict(config), facts_for_version(version).max_len, **kw)


def test_the_smallest_length_key_wins():
    found = derived({"max_position_embeddings": 8192, "seq_length": 4096})
    assert (found.value, found.key) == (4096, "seq_length")
    assert derived({"max_position_embeddings": 4096, "seq_length": 4096}).key == "max_position_embeddings"
    assert derived({"hidden_size": 4096}) is None


def test_model_max_length_wins_outright():
    found = derived({"max_position_embeddings": 8192, "model_max_length": 131072})
    assert (found.value, found.key, found.model_max_length) == (131072, "model_max_length", 131072)


def test_a_disabled_sliding_window_caps_the_length():
    config = {"max_position_embeddings": 32768, "sliding_window": 4096}
    assert derived(config).value == 32768
    assert derived(config, disable_sliding_window=True).value == 4096


def test_yarn_scales_the_length_until_the_release_stops_scaling_it():
    found = derived(YARN, "0.8.5")
    assert found.value == 131072.0 and found.shown == "131072.0"
    assert derived(YARN, "0.33.0").value == 32768


def test_disabling_the_window_with_rope_scaling_is_refused_only_before_0_12():
    model = model_facts_from_dict(YARN)
    assert model_len.sliding_window_off_refused(model, facts_for_version("0.11.0").max_len) == "yarn"
    assert model_len.sliding_window_off_refused(model, facts_for_version("0.12.0").max_len) is None
    llama3 = model_facts_from_dict({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}})
    assert model_len.sliding_window_off_refused(llama3, facts_for_version("0.11.0").max_len) is None


def config(args="seed: 0", model=None):
    cfg = load_text(f"model: /models/m\nargs:\n  {args}\n")
    return as_read(cfg, None if model is None else model_facts_from_dict(model))


def test_the_stated_length_else_the_derived_one_else_2048():
    facts = facts_for_version("0.8.5")
    assert model_len.max_model_len(config("max-model-len: 4096", YARN), facts).value == 4096
    assert model_len.max_model_len(config(model=YARN), facts).value == 131072
    assert model_len.max_model_len(config(model={"hidden_size": 8}), facts).value == model_len.DEFAULT_MAX_LEN
    assert model_len.max_model_len(config(), facts).value is None


def test_env_flag_reads_1_or_true():
    assert [model_len.env_flag(v) for v in ("1", " TRUE ", "true", "0", "yes", None)] == \
        [True, True, True, False, False, False]
