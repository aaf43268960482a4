"""The transformers beside a copy (real transformers wheels) and vLLM's own config classes (real
vLLM trees), and what PO313 makes of them through `api.lint` on a copy laid out as pip does."""

from __future__ import annotations

import json
import shutil

import pytest

from patchops import api
from patchops.lint.extract.model_registry import architecture_facts
from patchops.lint.extract.source_tree import Source
from patchops.lint.extract.transformers_beside import transformers_beside, transformers_facts
from tests.support import wheelcache

pytestmark = pytest.mark.vllm

GPT_OSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_attention_heads": 64,
           "num_key_value_heads": 8, "hidden_size": 2880, "num_hidden_layers": 24}


def known_types(version):
    return transformers_facts(Source(wheelcache.transformers_site(version)))


def test_model_types_read_from_both_layouts_of_transformers():
    old, new = known_types("4.51.3"), known_types("4.55.4")
    assert old["version"] == "4.51.3" and new["version"] == "4.55.4"
    assert "llama" in old["model_types"] and "gpt_oss" not in old["model_types"]
    assert "gpt_oss" in new["model_types"]
    # 5.x: generated auto_mappings.py, plus configuration_auto.py's update() and `**{...}` additions
    v5 = known_types("5.19.0")["model_types"]
    assert {"gpt_oss", "afmoe", "mlcd", "gpt-sw3"} <= set(v5)


def test_no_transformers_beside_gives_no_facts(tmp_path):
    assert transformers_facts(Source(wheelcache.site_packages("0.8.5"))) == {}
    assert transformers_beside(Source(tmp_path), [wheelcache.transformers_site("4.51.3")])["version"] == "4.51.3"


def test_vllms_own_config_classes_read_from_real_trees():
    v085 = architecture_facts(Source(wheelcache.site_packages("0.8.5")))["config_classes"]
    assert {"cohere2", "chatglm"} <= set(v085)
    assert "mllama" in v085            # merged in with `**_CONFIG_REGISTRY_OVERRIDE_HF`
    assert "gpt_oss" not in v085
    v033 = architecture_facts(Source(wheelcache.site_packages("0.33.0")))["config_classes"]
    assert {"chatglm", "bagel"} <= set(v033)   # LazyConfigDict(name="Class", ...) keywords
    assert "cohere2" not in v033       # transformers has had its own since


@pytest.fixture
def gpt_oss_spec(tmp_path):
    folder = tmp_path / "gpt-oss-20b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(GPT_OSS))
    spec = tmp_path / "serve.yaml"
    spec.write_text(f"model: {folder}\n")
    return spec


@pytest.mark.parametrize("transformers, expected", [("4.51.3", ["error"]), ("4.55.4", []), (None, [])])
def test_po313_follows_the_transformers_installed_beside_the_copy(tmp_path, gpt_oss_spec, transformers, expected):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site")
    if transformers:
        shutil.copytree(wheelcache.transformers_site(transformers), site, dirs_exist_ok=True)
    found = [d for d in api.lint(gpt_oss_spec, vllm_path=site).diagnostics if d.code == "PO313"]
    assert [d.severity for d in found] == expected
    if found:
        assert "transformers 4.51.3" in found[0].message and "'gpt_oss'" in found[0].message
        assert found[0].vllm_message.startswith("The checkpoint you are trying to load has model type `gpt_oss`")
        assert (found[0].line, found[0].column) == (1, 1)


def test_po313_leaves_hf_overrides_and_remote_code_to_vllm(tmp_path):
    from patchops.lint.rule import Example
    from patchops.lint.runner import lint_example

    old = {"transformers": {"version": "4.51.3", "model_types": ["llama"]}}
    remote = dict(GPT_OSS, auto_map={"AutoConfig": "configuration_x.XConfig"})

    def codes(text, model):
        return [d.code for d in lint_example(Example(text, vllm="0.8.5", model=model, facts=old)) if d.code == "PO313"]

    assert codes("model: /m\n", GPT_OSS) == ["PO313"]
    assert codes("model: /m\nargs:\n  hf-overrides: '{\"model_type\": \"llama\"}'\n", GPT_OSS) == []
    assert codes("model: /m\nargs:\n  hf-config-path: /configs/llama\n", GPT_OSS) == []
    assert codes("model: /m\nargs:\n  trust-remote-code: true\n", GPT_OSS) == ["PO313"]  # no auto_map to load
    assert codes("model: /m\nargs:\n  trust-remote-code: true\n", remote) == []
    assert codes("model: /m\n", {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}) == []
