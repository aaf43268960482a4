"""PO316 lora-unsupported-model."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, lora

GPT2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_head": 12, "n_layer": 12,
        "n_embd": 768, "n_positions": 1024, "vocab_size": 50257}
LLAMA_8B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 32,
            "num_key_value_heads": 8, "hidden_size": 4096, "num_hidden_layers": 32,
            "max_position_embeddings": 131072}


class LoraUnsupportedModel(Rule):
    """
    ## What it does
    Flags `--enable-lora` on a model whose class does not implement vLLM's `SupportsLoRA`
    interface, as the copy's model registry says (GPT-2, Falcon, Bloom, Mamba, ...). Not
    judged with `--model-impl transformers`, whose classes take LoRA.

    ## Why is this bad?
    Up to 0.32 the engine config is built and the worker refuses once it has loaded the model:
    "GPT2LMHeadModel does not support LoRA yet.". From 0.33 the config build refuses: "LoRA is
    not supported for GPT2LMHeadModel (gpt2). Supported models implement the `SupportsLoRA`
    interface. Run this model without `enable_lora`."

    ## Fix
    Serve the model without `--enable-lora` (merge the adapter into the weights instead), or
    use a model vLLM supports LoRA for.
    """

    code = "PO316"
    name = "lora-unsupported-model"
    severity = "error"
    versions = ">=0"
    stage = "later"
    vllm_message = lora.WORKER_MESSAGE
    needs = Needs(model=True)
    VALID = [
        Example("model: meta-llama/Llama-3.1-8B\nargs:\n  enable-lora: true\n", model=LLAMA_8B),
        Example("model: openai-community/gpt2\nargs:\n  max-model-len: 1024\n", model=GPT2),
        Example("vllm serve openai-community/gpt2 --enable-lora --model-impl transformers\n", kind="command",
                vllm="0.10.1.1", model=GPT2),
    ]
    INVALID = [
        Example("model: openai-community/gpt2\nargs:\n  enable-lora: true\n", model=GPT2, at=(3, 3)),
        Example("vllm serve openai-community/gpt2 --enable-lora\n", kind="command", vllm="0.33.0",
                model=GPT2, at=(1, 34)),
    ]

    @classmethod
    def stage_in(cls, version: str) -> str:
        """0.33 refuses while the engine config is built, earlier releases in the worker."""
        return lora.stage(version)

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = lora.refusal(cfg, facts)
        if found is None:
            return
        yield self.diagnostic(
            cfg, inputs.setting(cfg, "enable_lora"),
            f"enable_lora on {found.architecture}, whose model class {found.cls} does not support LoRA",
            explanation=f"vLLM {facts.version}'s {found.cls} does not implement SupportsLoRA; vLLM refuses "
                        + ("while it builds the engine config" if found.stage == "config"
                           else "once the worker has loaded the model"),
            fields=("enable_lora",),
            fix="serve the model without --enable-lora, or merge the adapter into the weights",
            vllm_message=found.message)
