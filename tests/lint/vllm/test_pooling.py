"""lint/vllm/pooling.py: the chunked prefill a pooling runner defaults to from its stated pooling type."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.vllm import pooling

from handmade import as_read

CAUSAL = {"architectures": ["MistralModel"], "model_type": "mistral"}
BIDIRECTIONAL = dict(CAUSAL, is_causal=False)
HYBRID = {"architectures": ["JambaForSequenceClassification"], "model_type": "jamba"}


def config(pooler=None, flag="pooler-config", model=CAUSAL):
    stated = f" --{flag} '{pooler}'" if pooler is not None else ""
    cfg = load_text(f"vllm serve /models/e5 --runner pooling{stated}\n", kind="command")
    return as_read(cfg, None if model is None else model_facts_from_dict(model))


def default(version, pooler=None, **kw):
    return pooling.chunked_prefill_by_pooling(config(pooler, **kw), facts_for_version(version))


def test_the_stated_pooler_config_under_either_flag():
    assert pooling.stated_pooler_config(config('{"pooling_type": "MEAN"}')) == {"pooling_type": "MEAN"}
    assert pooling.stated_pooler_config(config('{"pooling_type": "CLS"}', flag="override-pooler-config")) == \
        {"pooling_type": "CLS"}
    assert pooling.stated_pooler_config(config()) == {}
    assert pooling.stated_pooler_config(config('"MEAN"')) == {}


def test_v1_runs_no_pooling_model_before_0_10():
    assert default("0.9.2", '{"pooling_type": "MEAN"}') is None
    assert default("0.10.0", '{"pooling_type": "MEAN"}') is False


@pytest.mark.parametrize("version", ["0.10.1.1", "0.11.0"])
def test_before_0_12_only_last_pooling_of_a_causal_model_chunks(version):
    assert default(version, '{"pooling_type": "last"}') is True
    assert default(version, '{"pooling_type": "LAST"}', model=BIDIRECTIONAL) is False
    assert default(version, '{"pooling_type": "CLS"}') is False
    assert default(version) is None
    assert default(version, '{"pooling_type": "LAST"}', model=None) is True      # unread config.json: causal
    # the class's attention type is not asked before 0.12
    assert default(version, '{"pooling_type": "MEAN"}', model=HYBRID) is False


def test_from_0_12_last_pooling_depends_on_the_class():
    assert default("0.12.0", '{"pooling_type": "LAST"}') is None
    assert default("0.12.0", '{"pooling_type": "LAST"}', model=BIDIRECTIONAL) is False
    assert default("0.12.0", model=BIDIRECTIONAL) is False


@pytest.mark.parametrize("pooler, chunks", [('{"seq_pooling_type": "MEAN"}', False),
                                            ('{"seq_pooling_type": "CLS"}', False),
                                            ('{"tok_pooling_type": "STEP"}', False),
                                            ('{"tok_pooling_type": "ALL"}', None),
                                            ('{"pooling_type": "STEP"}', False)])
def test_from_0_12_sequence_and_token_pooling_types_decide(pooler, chunks):
    assert default("0.33.0", pooler) is chunks


def test_from_0_12_a_hybrid_or_attention_free_class_is_not_decided_here():
    assert default("0.12.0", '{"pooling_type": "MEAN"}', model=HYBRID) is None
    mamba = {"architectures": ["MambaForCausalLM"], "model_type": "mamba"}
    assert default("0.12.0", '{"pooling_type": "MEAN"}', model=mamba) is None
