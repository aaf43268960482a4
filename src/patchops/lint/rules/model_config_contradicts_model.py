"""PO004 model-config-contradicts-model."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule

QWEN_7B = {"_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "architectures": ["Qwen2ForCausalLM"],
           "model_type": "qwen2", "num_attention_heads": 28, "hidden_size": 3584}
QWEN_UNNAMED = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_attention_heads": 28}


class ModelConfigContradictsModel(Rule):
    """
    ## What it does
    Flags a model config given with `--model-config` that is plainly for another model than
    the input's: its `_name_or_path` names another hub model, or its architecture is of a
    family the model's name does not mention (a `Qwen2ForCausalLM` config for a Llama launch).

    ## Why is this bad?
    vLLM reads the served model's own config.json, so the checks that read the given one would
    judge the launch by another model's heads, context length and quantization. The config is
    not used: the model-aware rules are listed as not run for this input. vLLM itself says
    nothing: it never sees the file given to patchops.

    ## Fix
    Name the model each config is for: `--model-config ORG/MODEL=FILE`, once per model (or a
    folder of snapshots with `--model-config DIR`).
    """

    code = "PO004"
    name = "model-config-contradicts-model"
    severity = "warning"
    versions = ">=0"
    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  tensor-parallel-size: 4\n", model=QWEN_7B),
        # A family the name does not spell (DeepSeek's distills name both) is no contradiction.
        Example("vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-7B -tp 4\n", kind="command",
                model=QWEN_UNNAMED),
    ]
    INVALID = [
        Example("model: meta-llama/Llama-3.1-8B-Instruct\nargs:\n  tensor-parallel-size: 4\n",
                model=QWEN_7B, at=(1, 1)),
        Example("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 4\n", kind="command",
                model=QWEN_UNNAMED, at=(1, 12)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        source = cfg.model_source
        if source is None or source.contradiction is None:
            return
        yield self.diagnostic(
            cfg, cfg.model,
            f"model config {Path(source.path).name} is for {source.contradiction}; not used",
            fields=("model",),
            fix=f"pass --model-config {source.model}=FILE with that model's own config.json")
