"""Model architectures and the engine: the registry's lists read from real vLLM trees, and what
PO306 (V0 fallback, forced-V1 refusal, the 0.11.0 assertion) and PO311 (removed architectures)
make of a config.json's `architectures`."""

from __future__ import annotations

import pytest

from patchops import api
from patchops.lint.explain import explain
from patchops.lint.facts.model import facts_for_version
from patchops.lint.extract.model_registry import architecture_facts
from patchops.lint.extract.source_tree import Source
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.rule import Example
from patchops.lint.input.loaders import load_text
from patchops.lint.runner import lint_example
from patchops.lint.vllm import routing
from tests.support import wheelcache

from handmade import as_read, model_of

pytestmark = pytest.mark.vllm

BLOOM = {"architectures": ["BloomForCausalLM"], "model_type": "bloom"}
MAMBA = {"architectures": ["MambaForCausalLM"], "model_type": "mamba"}
WHISPER = {"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", "is_encoder_decoder": True}
MLLAMA = {"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama"}
MOTIF = {"architectures": ["MotifForCausalLM"], "model_type": "motif"}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
BART = {"architectures": ["BartForConditionalGeneration"], "model_type": "bart"}


def arch_facts(version):
    return architecture_facts(Source(wheelcache.site_packages(version)))


def found(code, model, version, env=""):
    text = "model: /models/m\n" + (f"env:\n  VLLM_USE_V1: \"{env}\"\n" if env else "")
    return [d for d in lint_example(Example(text, vllm=version, model=model)) if d.code == code]


def test_v0_only_classes_read_from_real_trees():
    v085 = arch_facts("0.8.5")
    assert {"BloomForCausalLM", "MambaForCausalLM", "WhisperForConditionalGeneration",
            "MllamaForConditionalGeneration"} <= set(v085["v0_only"])
    # RobertaEmbeddingModel (roberta.py) inherits SupportsV0Only from BertEmbeddingModel (bert.py)
    assert "RobertaModel" in v085["v0_only"] and "LlamaForCausalLM" not in v085["v0_only"]
    assert "WhisperForConditionalGeneration" in v085["transcription"]
    v010 = arch_facts("0.10.1.1")
    assert "BloomForCausalLM" in v010["v0_only"] and "MambaForCausalLM" not in v010["v0_only"]
    assert "MambaForCausalLM" in v010["inner_state"] and "LlamaForCausalLM" not in v010["inner_state"]
    v011 = arch_facts("0.11.0")
    assert v011["v0_only"] == ["MotifForCausalLM"]
    assert v011["previously_supported"]["MllamaForConditionalGeneration"] == "0.10.2"
    v033 = arch_facts("0.33.0")
    assert v033["v0_only"] == [] and "MambaForCausalLM" in v033["inner_state"]
    assert v033["out_of_tree"]["BartForConditionalGeneration"] == "https://github.com/vllm-project/bart-plugin"
    assert "MllamaForConditionalGeneration" not in v033["registered"] and "LlamaForCausalLM" in v033["registered"]


def test_v0_only_architecture_falls_back_or_refuses():
    [fallback] = found("PO306", BLOOM, "0.8.5")
    assert fallback.severity == "warning" and "model's architecture" in fallback.explanation
    assert fallback.vllm_message == "['BloomForCausalLM'] is not supported by the V1 Engine. Falling back to V0. "
    [forced] = found("PO306", BLOOM, "0.10.1.1", env="1")
    assert forced.severity == "error"
    assert forced.vllm_message == "VLLM_USE_V1=1 is not supported with ['BloomForCausalLM']."
    assert found("PO306", BLOOM, "0.10.1.1", env="0") == []
    assert found("PO306", BLOOM, "0.33.0") == []


def test_mamba_is_experimental_on_0_9_and_0_10_only():
    assert found("PO306", MAMBA, "0.8.5")[0].vllm_message.startswith("['MambaForCausalLM'] is not supported")
    [experimental] = found("PO306", MAMBA, "0.10.1.1")
    assert experimental.severity == "warning"
    assert experimental.vllm_message == "Mamba is experimental on VLLM_USE_V1=1. Falling back to V0 Engine."
    assert found("PO306", MAMBA, "0.10.1.1", env="1") == []   # _warn_or_fallback keeps V1 when asked
    assert found("PO306", MAMBA, "0.11.0") == []


def test_whisper_task_resolves_to_transcription_on_0_8_5():
    [forced] = found("PO306", WHISPER, "0.8.5", env="1")
    assert forced.vllm_message == "VLLM_USE_V1=1 is not supported with --task transcription."
    # 0.9+: no task check, the architecture itself is V0-only
    assert found("PO306", WHISPER, "0.10.1.1", env="1")[0].vllm_message == (
        "VLLM_USE_V1=1 is not supported with ['WhisperForConditionalGeneration'].")


def test_v0_only_architecture_on_0_11_is_the_api_server_assertion():
    [crash] = found("PO306", MOTIF, "0.11.0")
    assert crash.severity == "error" and crash.vllm_message.startswith("AssertionError")


@pytest.mark.parametrize("model,version,env,expected", [
    (BLOOM, "0.8.5", "", "V0"), (BLOOM, "0.8.5", "0", "V0"), (MAMBA, "0.10.1.1", "", "V0"),
    (MAMBA, "0.10.1.1", "1", "V1"), (MAMBA, "0.33.0", "", "V1"), (LLAMA, "0.8.5", "", "V1"),
])
def test_engine_prediction_follows_the_architecture(model, version, env, expected):
    cfg = load_text("model: /models/m\n" + (f"env:\n  VLLM_USE_V1: \"{env}\"\n" if env else ""), path="s.yaml")
    prediction = routing.engine(as_read(cfg, model_facts_from_dict(model)), facts_for_version(version))
    assert prediction.value == expected and prediction.error is None


@pytest.mark.parametrize("model,version,expected", [
    (MLLAMA, "0.10.1.1", None),   # still registered (V0)
    (MLLAMA, "0.11.0", "Model architecture MllamaForConditionalGeneration was supported in vLLM until v0.10.2"),
    (BART, "0.12.0", "Model architecture BartForConditionalGeneration was supported in vLLM until v0.10.2"),
    (BART, "0.33.0", "Model architecture BartForConditionalGeneration is not supported in-tree anymore. "
                     "Please install the plugin at https://github.com/vllm-project/bart-plugin"),
    (WHISPER, "0.33.0", None),
])
def test_removed_architectures_by_release(model, version, expected):
    hits = found("PO311", model, version)
    assert [d.vllm_message[:len(expected)] for d in hits] == ([expected] if expected else [])
    assert all(d.severity == "warning" for d in hits)   # the Transformers backend may still run it


def test_a_registered_name_first_in_the_list_wins():
    both = {"architectures": ["LlamaForCausalLM", "BloomForCausalLM"]}
    assert found("PO306", both, "0.8.5") == []
    assert found("PO311", {"architectures": ["LlamaForCausalLM", "MllamaForConditionalGeneration"]}, "0.33.0") == []


def test_model_facts_keep_architectures_and_encoder_decoder():
    facts = model_facts_from_dict(WHISPER)
    assert facts.architectures == ("WhisperForConditionalGeneration",) and facts.is_encoder_decoder
    nested = model_facts_from_dict({"architectures": ["X"], "text_config": {"is_encoder_decoder": True}})
    assert nested.is_encoder_decoder
    assert not model_facts_from_dict(BLOOM).is_encoder_decoder


def test_a_fork_that_drops_the_interface_is_linted_as_it_is(tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site")
    bloom = site / "vllm/model_executor/models/bloom.py"
    bloom.write_text(bloom.read_text().replace("SupportsPP, SupportsV0Only, SupportsQuant", "SupportsPP, SupportsQuant"))
    folder = tmp_path / "bloom"
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["BloomForCausalLM"], "model_type": "bloom"}')
    spec = tmp_path / "serve.yaml"
    spec.write_text(f"model: {folder}\n")
    assert [d.code for d in api.lint(spec, vllm_path=site).diagnostics if d.code == "PO306"] == []
    upstream = api.lint(spec, vllm_path=wheelcache.site_packages("0.8.5")).diagnostics
    assert [d.severity for d in upstream if d.code == "PO306"] == ["warning"]


def test_platform_supports_v1_read_from_real_trees():
    from patchops.lint.extract.oracle import platform_v1_facts

    v085 = platform_v1_facts(Source(wheelcache.site_packages("0.8.5")))
    assert v085["cpu"] == {"device_type": "cpu", "supports_v1": False}
    assert v085["rocm"] == {"device_type": "cuda", "supports_v1": True}
    assert platform_v1_facts(Source(wheelcache.site_packages("0.10.1.1")))["cpu"]["supports_v1"] is True
    assert platform_v1_facts(Source(wheelcache.site_packages("0.11.0"))) == {}   # the oracle no longer asks


@pytest.mark.parametrize("platform,version,env,expected", [
    ("cpu", "0.8.5", "1", ("error", "VLLM_USE_V1=1 is not supported with device type=cpu.")),
    ("cpu", "0.8.5", "", ("warning", "device type=cpu is not supported by the V1 Engine. Falling back to V0. ")),
    ("cpu", "0.10.1.1", "1", None),     # 0.9: the CPU platform supports V1
    ("gaudi", "0.9.2", "1", ("error", "VLLM_USE_V1=1 is not supported with device type=hpu.")),
    ("rocm", "0.8.5", "1", None),
])
def test_platform_without_v1_support(platform, version, env, expected):
    text = f"model: m\nhardware: {{platform: {platform}}}\n" + (f"env:\n  VLLM_USE_V1: \"{env}\"\n" if env else "")
    hits = [(d.severity, d.vllm_message) for d in lint_example(Example(text, vllm=version)) if d.code == "PO306"]
    assert hits == ([expected] if expected else [])


@pytest.mark.parametrize("model,version,env,expected", [
    (MAMBA, "0.33.0", "", False),       # attention-free: is_prefix_caching_supported says no
    (MAMBA, "0.10.1.1", "1", True),     # before 0.12 the V1 engine turns it on for every generative model
    (WHISPER, "0.33.0", "", False),     # encoder-decoder
    (LLAMA, "0.33.0", "", True),
])
def test_prefix_caching_follows_the_attention_type(model, version, env, expected):
    cfg = load_text("model: /models/m\n" + (f"env:\n  VLLM_USE_V1: \"{env}\"\n" if env else ""), path="s.yaml")
    source = model_of(cfg, model_facts_from_dict(model))
    [row] = [r for r in explain(cfg, facts_for_version(version), model=source) if r.field == "enable_prefix_caching"]
    assert row.value is expected


def test_interfaces_inherited_across_modules_on_0_33():
    v033 = arch_facts("0.33.0")
    assert "MambaForCausalLM" in v033["attention_free"] and "JambaForCausalLM" in v033["hybrid"]
    assert "JambaForCausalLM" not in v033["attention_free"]


def test_classes_without_pipeline_parallelism():
    for version in ("0.8.5", "0.10.1.1", "0.33.0"):
        no_pp = arch_facts(version)["no_pp"]
        assert "WhisperForConditionalGeneration" in no_pp and "LlamaForCausalLM" not in no_pp
        assert "Qwen2VLForConditionalGeneration" not in no_pp


@pytest.mark.parametrize("pp,version,expected", [(2, "0.33.0", "error"), (1, "0.33.0", None), (2, "0.8.5", "error")])
def test_pipeline_parallel_needs_supports_pp(pp, version, expected):
    text = f"model: /models/m\nhardware: {{gpus: 2}}\nargs:\n  pipeline-parallel-size: {pp}\n"
    hits = [d for d in lint_example(Example(text, vllm=version, model=WHISPER)) if d.code == "PO312"]
    assert [d.severity for d in hits] == ([expected] if expected else [])
    assert all(d.vllm_message.startswith("Pipeline parallelism is not supported for this model.") for d in hits)
    llama = [d for d in lint_example(Example(text, vllm=version, model=LLAMA)) if d.code == "PO312"]
    assert llama == []


def test_model_type_tables_read_from_real_trees():
    old, new = arch_facts("0.8.5"), arch_facts("0.10.1.1")
    # 0.8.5: ModelConfig.__init__'s interleaved_attn_models; no float16 refusals yet
    assert {"gemma2", "gemma3_text", "cohere2"} <= set(old["interleaved"]) and "float16_unsupported" not in old
    # 0.10.1.1: _FLOAT16_NOT_SUPPORTED_MODELS, read with its reasons
    assert new["float16_unsupported"]["gemma2"].startswith("Numerical instability")
    assert "llama" not in new["float16_unsupported"] and "interleaved" not in new


def test_classes_without_lora_read_from_real_trees():
    v063, v085, v033 = (arch_facts(v)["no_lora"] for v in ("0.6.3.post1", "0.8.5", "0.33.0"))
    # Qwen2-VL took LoRA after 0.6.3; OPT after 0.11; GPT-2 never has (gpt2.py)
    assert v063["Qwen2VLForConditionalGeneration"] == "Qwen2VLForConditionalGeneration"
    assert "Qwen2VLForConditionalGeneration" not in v085 and "Qwen2VLForConditionalGeneration" not in v033
    assert "OPTForCausalLM" in v085 and "OPTForCausalLM" not in v033
    assert all(v["GPT2LMHeadModel"] == "GPT2LMHeadModel" for v in (v063, v085, v033))
    assert not any("LlamaForCausalLM" in v for v in (v063, v085, v033))
    # an alias names the class vLLM builds, which the worker's message names
    assert v085.get("MistralForCausalLM") is None
