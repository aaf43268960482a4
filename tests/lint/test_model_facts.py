"""Model facts: finding and reading config.json, and the maximum length each vLLM derives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchops import api
from patchops.core import records
from patchops.cli.render.lint import skipped_notes
from patchops.cli.app import app
from patchops.core.errors import LintInputError
from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.model_config import find_model_config, model_facts_from_dict, read_model_facts
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import model_len
from patchops.lint.vllm.model_len import derived_max_len

from handmade import as_read

LLAMA = {"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 8,
         "hidden_size": 4096, "num_hidden_layers": 32, "max_position_embeddings": 8192,
         "rope_theta": 500000.0, "torch_dtype": "bfloat16"}


def write_model(folder: Path, config: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def derived(config: dict, version: str, **kw):
    return derived_max_len(model_facts_from_dict(config), facts_for_version(version).max_len, **kw)


# --- finding config.json ----------------------------------------------------------------------


def test_local_folder_and_relative_to_the_input(tmp_path):
    model = write_model(tmp_path / "m", LLAMA)
    assert find_model_config(str(model), {}) == model / "config.json"
    assert find_model_config("m", {}, [tmp_path]) == model / "config.json"
    assert find_model_config("elsewhere", {}, [tmp_path]) is None


def test_hf_cache_snapshot(tmp_path):
    snap = write_model(tmp_path / "hf" / "hub" / "models--org--name" / "snapshots" / "abc", LLAMA)
    assert find_model_config("org/name", {"HF_HOME": str(tmp_path / "hf")}) == snap / "config.json"
    assert find_model_config("org/name", {"HF_HUB_CACHE": str(tmp_path / "hf" / "hub")}) == snap / "config.json"
    assert find_model_config("org/other", {"HF_HOME": str(tmp_path / "hf")}) is None


def test_bad_config_json_is_an_input_error(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(LintInputError, match=r"config.json: the model config is not valid JSON"):
        read_model_facts(tmp_path / "config.json")


def test_fields_read_without_transformers(tmp_path):
    facts = read_model_facts(write_model(tmp_path / "m", LLAMA) / "config.json")
    assert (facts.num_attention_heads, facts.num_key_value_heads, facts.num_hidden_layers) == (32, 8, 32)
    assert (facts.hidden_size, facts.head_size, facts.num_experts, facts.dtype) == (4096, 128, 0, "bfloat16")


def test_multimodal_reads_text_config():
    facts = model_facts_from_dict({"model_type": "llava", "text_config": {"num_attention_heads": 40,
                                                                         "max_position_embeddings": 4096}})
    assert facts.num_attention_heads == 40 and facts.model_type == "llava"


def test_the_vision_tower_config_is_kept_apart_from_the_text_config():
    facts = model_facts_from_dict({"model_type": "qwen2_vl", "num_attention_heads": 12,
                                   "vision_config": {"num_heads": 16}})
    assert (facts.num_attention_heads, facts.vision_config) == (12, {"num_heads": 16})
    assert model_facts_from_dict({"model_type": "llama", "vision_config": "x"}).vision_config == {}


def test_qwen_sliding_window_off_is_no_window():
    on = model_facts_from_dict({"sliding_window": 4096})
    off = model_facts_from_dict({"sliding_window": 4096, "use_sliding_window": False})
    assert (on.sliding_window, off.sliding_window) == (4096, None)


# --- the derived maximum, per version ---------------------------------------------------------


def test_smallest_key_wins_and_model_max_length_overrides():
    got = derived({"max_position_embeddings": 8192, "seq_length": 4096}, "0.8.5")
    assert (got.value, got.key) == (4096, "seq_length")
    got = derived({"max_position_embeddings": 8192, "model_max_length": 131072}, "0.8.5")
    assert (got.value, got.key) == (131072, "model_max_length")


def test_no_length_key_is_none():
    assert derived({"num_attention_heads": 8}, "0.8.5") is None


def test_linear_rope_scales_and_llama3_does_not():
    linear = derived({"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}, "0.8.5")
    assert (linear.value, linear.shown) == (8192.0, "8192.0")
    llama3 = derived({"max_position_embeddings": 131072,
                      "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "0.8.5")
    assert llama3.value == 131072


def test_yarn_scaled_from_the_original_until_033():
    config = {"max_position_embeddings": 32768, "rope_theta": 1e6,
              "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    assert derived(config, "0.20.0").value == 131072
    assert derived(config, "0.33.0").value == 32768      # taken as already scaled


def test_033_shows_a_float_for_any_rope_model():
    # transformers 5 turns rope_theta into rope_parameters, and 0.33 multiplies by 1.0.
    assert derived(LLAMA, "0.33.0").shown == "8192.0"
    assert derived(LLAMA, "0.10.1.1").shown == "8192"


def test_disabled_sliding_window_caps():
    config = {"max_position_embeddings": 32768, "sliding_window": 4096}
    assert derived(config, "0.8.5", disable_sliding_window=True).value == 4096
    assert derived(config, "0.8.5").value == 32768


def test_tokenizer_model_max_length_counts_from_010_for_absolute_position_models(tmp_path):
    # get_and_verify_max_len reads tokenizer_config only for pooling models with absolute
    # position embeddings (the BERT family); a generative model's tokenizer never counts.
    bert = write_model(tmp_path / "bert", {"max_position_embeddings": 32768, "position_embedding_type": "absolute"})
    llama = write_model(tmp_path / "llama", {"max_position_embeddings": 32768})
    for folder in (bert, llama):
        (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 16384}))
    bert_facts, llama_facts = read_model_facts(bert / "config.json"), read_model_facts(llama / "config.json")
    assert derived_max_len(bert_facts, facts_for_version("0.8.5").max_len).value == 32768
    assert derived_max_len(bert_facts, facts_for_version("0.10.1.1").max_len).value == 16384
    assert derived_max_len(llama_facts, facts_for_version("0.10.1.1").max_len).value == 32768


def test_no_length_key_means_2048(tmp_path):
    # bloom-560m (ALiBi) names no length: vLLM assumes 2048 rather than the tokenizer's 1e30
    folder = write_model(tmp_path / "bloom", {"architectures": ["BloomForCausalLM"], "n_layer": 24})
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 10 ** 30}))
    cfg = as_read(load_text("model: m\n", path="s.yaml"), read_model_facts(folder / "config.json"))
    assert model_len.max_model_len(cfg, facts_for_version("0.10.1.1")).value == 2048


# --- end to end -------------------------------------------------------------------------------


def model_not_run(result) -> list:
    """Return the rules not run on `result`'s input for want of its model's config.json."""
    return [n.rule for n in result.not_run if "config.json" in n.reason]


def test_lint_reads_a_local_model_folder(tmp_path):
    model = write_model(tmp_path / "llama", LLAMA)
    spec = tmp_path / "serve.yaml"
    spec.write_text(f"model: {model}\nargs:\n  tensor-parallel-size: 3\n  max-model-len: 8193\n")
    result = api.lint(spec, vllm_version="0.10.1.1")
    found = {(d.code, d.line, d.severity) for d in result.diagnostics}
    assert ("PO701", 3, "error") in found and ("PO207", 4, "error") in found
    assert model_not_run(result) == [] and result.model_config == str(model / "config.json")


def test_hf_home_from_the_spec_env(tmp_path):
    write_model(tmp_path / "hf" / "hub" / "models--org--llama" / "snapshots" / "1", LLAMA)
    spec = tmp_path / "serve.yaml"
    spec.write_text(f"model: org/llama\nenv:\n  HF_HOME: {tmp_path / 'hf'}\nargs:\n  tensor-parallel-size: 3\n")
    # PO507 (tensor_parallel_size 3 turns custom all-reduce off) is beside the point here
    assert [d.code for d in api.lint(spec, vllm_version="0.8.5").diagnostics if d.code != "PO507"] == ["PO701"]


def test_unknown_model_says_what_was_skipped(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: org/not-here\nargs:\n  tensor-parallel-size: 3\n")
    result = api.lint(spec, vllm_version="0.8.5")
    assert [d for d in result.diagnostics if d.code != "PO507"] == []
    assert model_not_run(result) == ["max-model-len-above-derived", "pipeline-parallel-unsupported-model",
                              "model-type-unknown-to-transformers", "generate-runner-on-pooling-model",
                              "remote-code-needs-trust", "lora-unsupported-model",
                              "multimodal-limit-on-text-model", "sliding-window-off-with-rope-scaling",
                              "mla-unsupported-on-gpu", "prefix-caching-with-sliding-window",
                              "kv-cache-too-small", "heads-not-divisible-by-tp", "expert-parallel-without-experts",
                              "vision-heads-not-divisible-by-tp", "quantized-shard-breaks-kernel-tile",
                              "quantization-config-not-found", "quantization-unsupported-here",
                              "quantization-kernel-not-installed"]
    assert skipped_notes([result], verbose=True)[:1] == [
        f"{spec}: 18 checks did not run, no model config.json (pass --model-config FILE): "
        f"{', '.join(model_not_run(result))}"]
    other, third = (records.replace(result, path=f"{name}.yaml") for name in ("b", "c"))
    assert skipped_notes([result, other, third])[0].startswith(
        "20 checks did not run for 3 inputs: no model config.json (pass --model-config FILE)")
    assert api.lint(spec, vllm_version="0.8.5",
                    ignore=["PO207", "PO312", "PO313", "PO314", "PO315", "PO316", "PO317", "PO318", "PO504",
                            "PO62", "PO7", "PO809", "PO813", "PO818"]).not_run == []


def test_cli_model_config_option(tmp_path):
    model = write_model(tmp_path / "elsewhere", LLAMA)
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: org/not-here\nargs:\n  tensor-parallel-size: 3\n")
    plain = CliRunner().invoke(app, ["lint", "--vllm-version", "0.8.5", str(spec)])
    assert plain.exit_code == 0 and "no model config.json (pass --model-config FILE)" in " ".join(plain.stdout.split())
    given = CliRunner().invoke(app, ["lint", "--vllm-version", "0.8.5", "--model-config",
                                     str(model / "config.json"), "--format", "json", str(spec)])
    assert given.exit_code == 1
    document = json.loads(given.stdout)
    assert [d["code"] for d in document["diagnostics"] if d["code"] != "PO507"] == ["PO701"]
    assert {n["rule"] for n in document["inputs"][0]["not_run"]} == {  # for want of hardware.* only
        "world-size-exceeds-gpus", "kv-cache-too-small", "swap-space-exceeds-host-memory"}  # no MLA here


def test_a_model_name_too_long_for_a_path_is_not_a_local_folder(tmp_path):
    from patchops.lint.input.model_config import find_model_config

    assert find_model_config("org/" + "x" * 300, {"HF_HOME": str(tmp_path)}) is None
    spec = tmp_path / "serve.yaml"
    spec.write_text(f"model: {'m' * 300}\nargs:\n  tensor-parallel-size: 1\n")
    assert api.lint(spec, vllm_version="0.8.5").error is None
