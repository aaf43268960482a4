"""lint/vllm/architectures.py: config.json's `architectures` asked of a release's registry facts."""

from __future__ import annotations

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.vllm import architectures

from handmade import as_read


def config(model=None, args=""):
    cfg = load_text(f"model: /models/m\nargs:\n  {args or 'seed: 0'}\n", path="serve.yaml")
    return as_read(cfg, None if model is None else model_facts_from_dict(model))


def test_no_model_config_has_no_architectures():
    cfg = config()
    assert architectures.architectures(cfg) == () and architectures.shown(cfg) == "[]"
    assert architectures.resolved(cfg, facts_for_version("0.8.5")) is None
    assert architectures.interleaved_window(cfg, facts_for_version("0.8.5")) is False


def test_shown_as_vllm_prints_the_list():
    cfg = config({"architectures": ["MyModel", "LlamaForCausalLM"]})
    assert architectures.shown(cfg) == "['MyModel', 'LlamaForCausalLM']"


def test_the_first_registered_architecture_is_the_one_inspected():
    facts = facts_for_version("0.8.5")
    assert architectures.resolved(config({"architectures": ["MyModel", "LlamaForCausalLM",
                                                            "JambaForCausalLM"]}), facts) == "LlamaForCausalLM"
    assert architectures.resolved(config({"architectures": ["MyModel"]}), facts) is None


def test_has_asks_only_the_inspected_architecture():
    facts = facts_for_version("0.8.5")
    assert architectures.has(config({"architectures": ["JambaForCausalLM"]}), facts, "hybrid")
    assert not architectures.has(config({"architectures": ["LlamaForCausalLM", "JambaForCausalLM"]}),
                                 facts, "hybrid")
    assert not architectures.has(config({"architectures": ["MyModel"]}), facts, "hybrid")


def test_a_removed_architecture_is_refused_only_once_the_release_dropped_it():
    model = config({"architectures": ["Phi3SmallForCausalLM"]})
    arch, message = architectures.removed_message(model, facts_for_version("0.11.0"))
    assert arch == "Phi3SmallForCausalLM"
    assert message.startswith("Model architecture Phi3SmallForCausalLM was supported in vLLM until v0.9.2, "
                              "and is not supported anymore.")
    assert architectures.removed_message(model, facts_for_version("0.8.5")) is None
    with_current = config({"architectures": ["Phi3SmallForCausalLM", "LlamaForCausalLM"]})
    assert architectures.removed_message(with_current, facts_for_version("0.11.0")) is None


def test_an_architecture_moved_to_a_plugin_names_the_plugin():
    facts = facts_for_version("0.33.0")
    arch, message = architectures.removed_message(config({"architectures": ["Nemotron3_5AsrForRNNT"]}), facts)
    assert arch == "Nemotron3_5AsrForRNNT" and "is not supported in-tree anymore" in message
    assert facts.architectures.out_of_tree[arch] in message
    assert architectures.removed_message(config({"architectures": ["MyModel"]}), facts) is None


def test_a_model_type_transformers_lacks_is_unknown_unless_another_path_builds_it():
    qwen3 = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}
    assert architectures.unknown_model_type(config(qwen3), facts_for_version("0.6.3.post1")) == "qwen3"
    assert architectures.unknown_model_type(config(qwen3), facts_for_version("0.8.5")) is None
    overridden = config(qwen3, args="hf-overrides: '{\"max_position_embeddings\": 4096}'")
    assert architectures.unknown_model_type(overridden, facts_for_version("0.6.3.post1")) is None


def test_remote_code_builds_an_unknown_model_type_only_when_trusted():
    remote = {"model_type": "madeup", "auto_map": {"AutoConfig": "configuration_madeup.MadeUpConfig"}}
    facts = facts_for_version("0.8.5")
    # an auto_map config is remote_code_refused()'s (PO315) untrusted, its own class trusted
    assert architectures.unknown_model_type(config(remote), facts) is None
    assert architectures.remote_code_refused(config(remote), facts) == "madeup"
    assert architectures.remote_code_refused(config(remote, args="trust-remote-code: true"), facts) is None
    local = {"model_type": "madeup"}           # no auto_map: trusting remote code loads nothing
    assert architectures.unknown_model_type(config(local, args="trust-remote-code: true"), facts) == "madeup"
    # a model type vLLM builds with its own config class (transformers 4.51 has no chatglm)
    assert architectures.unknown_model_type(config({"model_type": "chatglm"}), facts) is None


def test_interleaved_window_from_layer_types_a_hybrid_cache_or_a_window_list():
    facts = facts_for_version("0.33.0")
    both = {"layer_types": ["sliding_attention", "full_attention"]}
    assert architectures.interleaved_window(config(both), facts)
    assert not architectures.interleaved_window(config({"layer_types": ["full_attention"] * 2}), facts)
    assert architectures.interleaved_window(config({"cache_implementation": "hybrid"}), facts)
    assert architectures.interleaved_window(config({"sliding_window": [4096, None]}), facts)
    assert not architectures.interleaved_window(config({"sliding_window": 4096}), facts)


def test_interleaved_model_types_are_the_releases_own_list():
    gemma2 = config({"model_type": "gemma2", "sliding_window": 4096})
    assert architectures.interleaved_window(gemma2, facts_for_version("0.8.5"))
    assert not architectures.interleaved_window(gemma2, facts_for_version("0.33.0"))
