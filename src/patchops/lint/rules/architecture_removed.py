"""PO311 architecture-removed."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import architectures

# config.json `architectures` of the corpus models these examples stand for.
MLLAMA = {"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama"}
BART = {"architectures": ["BartForConditionalGeneration"], "model_type": "bart", "is_encoder_decoder": True}
WHISPER = {"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper",
           "is_encoder_decoder": True}


class ArchitectureRemoved(Rule):
    """
    ## What it does
    Flags a model whose config.json `architectures` the vLLM release no longer registers and
    names as removed: the encoder-decoder models V0 ran (Mllama, BART, Florence-2, Donut,
    last in 0.10.2), and later releases' retired models (`_PREVIOUSLY_SUPPORTED_MODELS` in
    model_executor/models/registry.py) or those moved to a plugin (`_OOT_SUPPORTED_MODELS`,
    BART from 0.20). The lists are read from the copy.

    ## Why is this bad?
    vLLM no longer has its own implementation. With `--model-impl auto` it first tries the
    Transformers backend (`_try_resolve_transformers`): when the installed transformers
    implements the architecture and its attention can be swapped, vLLM runs it that way
    (slower, without the model's own kernels; vLLM 0.33.0 does so for Mllama, given its
    processor config). Otherwise `_ModelRegistry._raise_for_unsupported` stops vLLM while it
    builds the model config: "ValueError: Model architecture MllamaForConditionalGeneration was
    supported in vLLM until v0.10.2, and is not supported anymore. Please use an older version
    of vLLM if you want to use this model architecture." (or "... is not supported in-tree
    anymore. Please install the plugin at <url> ..."). Which of the two happens depends on the
    model classes of the transformers beside vLLM, which lint does not read (it reads only the
    model types its AutoConfig knows: PO313), so this is a warning. 0.8.5-0.10 still run these
    models, on V0 (PO306).

    ## Fix
    Use the last release that ran it (the message names it), install the plugin the message
    names, or serve a model this release supports.
    """

    code = "PO311"
    name = "architecture-removed"
    severity = "warning"
    versions = ">=0.11"
    vllm_message = ("Model architecture <arch> was supported in vLLM until v<release>, and is not "
                    "supported anymore. Please use an older version of vLLM if you want to use this "
                    "model architecture.")
    needs = Needs(model=True)
    VALID = [
        Example("model: /models/whisper-large-v3\n", vllm="0.33.0", model=WHISPER),
        # 0.10.1.1 still registers Mllama (it runs on V0: PO306's finding)
        Example("model: /models/Llama-3.2-11B-Vision-Instruct\nargs:\n  max-model-len: 8192\n",
                vllm="0.10.1.1", model=MLLAMA),
    ]
    INVALID = [
        Example("model: /models/Llama-3.2-11B-Vision-Instruct\nargs:\n  max-model-len: 8192\n",
                vllm="0.11.0", model=MLLAMA, at=(1, 1)),
        Example("vllm serve /models/Llama-3.2-11B-Vision-Instruct --max-model-len 8192\n", kind="command",
                vllm="0.33.0", model=MLLAMA, at=(1, 12)),
        Example("model: facebook/bart-large-cnn\n", vllm="0.33.0", model=BART, at=(1, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = architectures.removed_message(cfg, facts)
        if found is None:
            return
        arch, message = found
        yield self.diagnostic(
            cfg, cfg.model,
            f"vLLM {facts.version} no longer implements the model's architecture {arch}",
            explanation="the architecture is config.json's `architectures`: vLLM runs it through the "
            "Transformers backend if the installed transformers can, else it refuses to start while it "
            "builds the model config",
            fields=("model",), vllm_message=message,
            fix="use the release or plugin vLLM's message names, or serve a model this release supports")
