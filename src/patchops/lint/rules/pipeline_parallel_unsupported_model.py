"""PO312 pipeline-parallel-unsupported-model."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import architectures, inputs, messages

# config.json `architectures` of the corpus models these examples stand for.
WHISPER = {"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", "is_encoder_decoder": True}
MLLAMA = {"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama"}
QWEN2_VL = {"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl"}


class PipelineParallelUnsupportedModel(Rule):
    """
    ## What it does
    Flags `pipeline_parallel_size` above 1 for a model whose class does not implement vLLM's
    `SupportsPP` interface (Whisper in every release, Mllama until it was removed). Which
    classes implement it is read from the copy's model registry and model files.

    ## Why is this bad?
    `ModelConfig.verify_with_parallel_config` refuses while vLLM builds its configuration:
    "NotImplementedError: Pipeline parallelism is not supported for this model. Supported
    models implement the `SupportsPP` interface."

    ## Fix
    Use tensor parallelism (`--tensor-parallel-size`) instead, or serve the model on fewer GPUs.
    """

    code = "PO312"
    name = "pipeline-parallel-unsupported-model"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.PIPELINE_PARALLEL_UNSUPPORTED
    needs = Needs(model=True)
    explains = (messages.PIPELINE_PARALLEL_CHECK,)
    VALID = [
        Example("model: /models/Qwen2-VL-7B-Instruct\nhardware: {gpus: 2}\nargs:\n  pipeline-parallel-size: 2\n"
                "  distributed-executor-backend: mp\n", vllm="0.33.0", model=QWEN2_VL),
        Example("model: /models/whisper-large-v3\nhardware: {gpus: 2}\nargs:\n  tensor-parallel-size: 2\n",
                vllm="0.33.0", model=WHISPER),
    ]
    INVALID = [
        Example("model: /models/whisper-large-v3\nhardware: {gpus: 2}\nargs:\n  pipeline-parallel-size: 2\n",
                vllm="0.33.0", model=WHISPER, at=(4, 3)),
        Example("vllm serve /models/Llama-3.2-11B-Vision-Instruct -pp 2 --max-model-len 8192\n", kind="command",
                vllm="0.10.1.1", model=MLLAMA, at=(1, 50)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        pp = inputs.to_int(inputs.value(cfg, "pipeline_parallel_size")) or 1
        if pp <= 1 or not architectures.has(cfg, facts, "no_pp"):
            return
        at = inputs.setting(cfg, "pipeline_parallel_size")
        yield self.diagnostic(
            cfg, at,
            f"pipeline_parallel_size {pp} with {architectures.resolved(cfg, facts)}, which has no "
            "pipeline parallelism",
            explanation=f"pipeline parallelism needs a model class that implements SupportsPP, and vLLM "
            f"{facts.version}'s class for config.json's architecture does not: vLLM refuses to start "
            "while it builds its configuration",
            fields=("pipeline_parallel_size", "model"), vllm_message=messages.PIPELINE_PARALLEL_UNSUPPORTED,
            fix="use tensor parallelism instead (--tensor-parallel-size)")
