"""Pooling deployments: the chunked prefill a stated pooling type decides, the pooler config's
fields, and which architectures can only pool (read from real trees)."""

from __future__ import annotations

import pytest

from patchops.lint.extract.model_registry import architecture_facts
from patchops.lint.extract.source_tree import Source
from patchops.lint.rule import Example
from patchops.lint.runner import lint_example
from tests.support import wheelcache

# config.json of intfloat/e5-mistral-7b-instruct (MistralModel: 32768 positions, causal)
E5_MISTRAL = {"architectures": ["MistralModel"], "model_type": "mistral", "num_attention_heads": 32,
              "num_key_value_heads": 8, "num_hidden_layers": 32, "hidden_size": 4096,
              "max_position_embeddings": 32768}
BIDIRECTIONAL = dict(E5_MISTRAL, is_causal=False)
FLAG = {"0.10.1.1": "override-pooler-config", "0.32.0": "pooler-config", "0.33.0": "pooler-config"}


def po201(version, pooling, *extra, model=E5_MISTRAL):
    stated = [f"--{FLAG[version]}", f"'{{\"pooling_type\": \"{pooling}\"}}'"] if pooling else []
    line = " ".join(["vllm serve /models/e5 --runner pooling --convert embed --max-num-batched-tokens 16384",
                     *stated, *extra])
    found = lint_example(Example(line + "\n", kind="command", vllm=version, model=model))
    return [d.severity for d in found if d.code == "PO201"]


@pytest.mark.parametrize("version", ["0.10.1.1", "0.32.0", "0.33.0"])
def test_mean_or_cls_pooling_rules_out_chunked_prefill(version):
    # MEAN/CLS pooling: chunked prefill off, so a budget below max_model_len is refused
    assert po201(version, "MEAN") == ["error"] and po201(version, "CLS") == ["error"]
    # unstated: the model class's default pooling type decides, which lint cannot read
    assert po201(version, None) == ["warning"]
    # an explicit enable_chunked_prefill is not the pooling type's to decide
    assert po201(version, "MEAN", "--enable-chunked-prefill") == ([] if version != "0.10.1.1" else ["warning"])


def test_last_token_pooling_keeps_chunked_prefill_on_0_10_for_causal_models_only():
    # _set_default_args_v1 (0.10.1.1): on only for "last" pooling of a causal model
    assert po201("0.10.1.1", "LAST") == []
    assert po201("0.10.1.1", "last") == []
    assert po201("0.10.1.1", "LAST", model=BIDIRECTIONAL) == ["error"]


def test_last_token_pooling_from_0_12_depends_on_the_class():
    # is_chunked_prefill_supported: the class's default pooling type still picks the attention type
    assert po201("0.33.0", "LAST") == ["warning"]
    assert po201("0.33.0", "LAST", model=BIDIRECTIONAL) == ["error"]


def nested(version, text):
    found = lint_example(Example(f"vllm serve /models/e5 --runner pooling {text}\n", kind="command",
                                 vllm=version, model=E5_MISTRAL))
    return [(d.severity, d.message) for d in found if d.code == "PO112"]


def test_pooler_config_fields_are_checked_per_release():
    # PoolerConfig lost `normalize` (0.30+: "Parameter `normalize` was removed; use `use_activation`")
    hits = nested("0.33.0", "--pooler-config '{\"pooling_type\": \"MEAN\", \"normalize\": true}'")
    assert [s for s, _ in hits] == ["error"] and "'normalize'" in hits[0][1]
    assert nested("0.33.0", "--pooler-config '{\"pooling_type\": \"MEAN\", \"use_activation\": true}'") == []
    assert nested("0.10.1.1", "--override-pooler-config '{\"pooling_type\": \"MEAN\", \"normalize\": true}'") == []


@pytest.mark.vllm
def test_pooling_only_architectures_read_from_real_trees():
    v085 = architecture_facts(Source(wheelcache.site_packages("0.8.5")))["pooling_only"]
    v010 = architecture_facts(Source(wheelcache.site_packages("0.10.1.1")))["pooling_only"]
    v033 = architecture_facts(Source(wheelcache.site_packages("0.33.0")))["pooling_only"]
    for found in (v085, v010, v033):
        # embedders and cross-encoders pool only; causal LMs (also MistralModel, whose class is
        # LlamaForCausalLM) generate, whatever runner converts them
        assert {"XLMRobertaModel", "XLMRobertaForSequenceClassification", "BertModel"} <= set(found)
        assert not {"LlamaForCausalLM", "MistralModel", "Qwen2ForCausalLM", "Qwen3ForCausalLM"} & set(found)
    # 0.8.5's pooling protocol has no is_pooling_model flag: every class can pool there, so
    # the list is the classes without compute_logits (a speculator's too)
    assert "MLPSpeculatorPreTrainedModel" in v085 and "MLPSpeculatorPreTrainedModel" not in v010
