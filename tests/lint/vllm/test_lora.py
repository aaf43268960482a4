"""lint/vllm/lora.py: LoRA on a model class without SupportsLoRA, refused by the worker or the config."""

from __future__ import annotations

from patchops.lint.facts.groups import Architectures
from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.vllm import lora

from handmade import as_read

GPT2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}


def config(model, args="  enable-lora: true\n"):
    cfg = load_text("model: openai-community/gpt2\nargs:\n  seed: 0\n" + args, path="serve.yaml")
    return as_read(cfg, model_facts_from_dict(model))


def test_the_worker_refuses_until_0_32_and_the_config_from_0_33():
    assert lora.stage("0.32.0") == "later" and lora.stage("0.33.0") == "config"
    late = lora.refusal(config(GPT2), facts_for_version("0.32.0"))
    assert (late.stage, late.message) == ("later", "GPT2LMHeadModel does not support LoRA yet.")
    early = lora.refusal(config(GPT2), facts_for_version("0.33.0"))
    assert early.stage == "config" and early.message.startswith(
        "LoRA is not supported for GPT2LMHeadModel (openai-community/gpt2). Supported models implement")


def test_only_enabled_lora_on_a_class_the_facts_name_is_refused():
    facts = facts_for_version("0.8.5")
    assert lora.refusal(config(GPT2, ""), facts) is None
    assert lora.refusal(config(GPT2, "  enable-lora: false\n"), facts) is None
    assert lora.refusal(config(LLAMA), facts) is None
    assert lora.refusal(config(GPT2, "  enable-lora: true\n  model-impl: transformers\n"), facts) is None
    assert lora.refusal(config(GPT2), facts.replace(architectures=Architectures())) is None
