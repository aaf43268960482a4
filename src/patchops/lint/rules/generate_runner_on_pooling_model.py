"""PO314 generate-runner-on-pooling-model."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import architectures, inputs, messages
from patchops.lint.vllm.releases import EMBEDDING_RUNNER_MESSAGE, release

# config.json of BAAI/bge-m3 (XLMRobertaModel: an embedding class without compute_logits) and
# of a Qwen2.5 chat model (a generative class that can also be converted to pooling).
BGE_M3 = {"architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta", "num_attention_heads": 16,
          "max_position_embeddings": 8194}
QWEN = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_attention_heads": 28,
        "max_position_embeddings": 32768}


class GenerateRunnerOnPoolingModel(Rule):
    """
    ## What it does
    Flags `--runner generate` (or 0.10's deprecated `--task generate`, which picks that runner)
    for a model whose architecture can only pool: its class in the copy's model registry is a
    pooling model (`is_pooling_model`) and defines no `compute_logits` (facts
    `architectures.pooling_only`: BERT/RoBERTa/XLM-RoBERTa embedders and cross-encoders,
    reward models). Before `--runner` (0.8-0.10.0), `--task generate` for a class without
    `compute_logits`.

    ## Why is this bad?
    `ModelConfig` refuses to build: "This model does not support `--runner generate`." (0.10.1
    onward; before it `_resolve_task`'s "This model does not support the 'generate' task.
    Supported tasks: {'embed', 'classify', ...}"), worded "Embedding models do not support `--runner generate`. Use `--runner
    pooling` or `--runner auto` for embedding models." in later releases. vLLM has no converter
    from a pooling model to a generative one.

    ## Fix
    Drop the runner (auto picks pooling for these models), or serve a generative checkpoint.
    """

    code = "PO314"
    name = "generate-runner-on-pooling-model"
    severity = "error"
    versions = ">=0.8"
    # and messages.GENERATE_TASK_UNSUPPORTED before --runner, messages.GENERATE_RUNNER_ON_EMBEDDING from 0.25
    vllm_message = messages.GENERATE_RUNNER_UNSUPPORTED
    needs = Needs(model=True)
    VALID = [
        Example("vllm serve BAAI/bge-m3 --runner pooling\n", kind="command", vllm="0.10.1.1", model=BGE_M3),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --runner generate\n", kind="command",
                vllm="0.33.0", model=QWEN),
    ]
    INVALID = [
        Example("vllm serve BAAI/bge-m3 --runner generate\n", kind="command", vllm="0.10.1.1",
                model=BGE_M3, at=(1, 24)),
        Example("model: BAAI/bge-m3\nargs:\n  task: generate\n", vllm="0.10.1.1", model=BGE_M3, at=(3, 3)),
        Example("vllm serve BAAI/bge-m3 --runner generate\n", kind="command", vllm="0.33.0",
                model=BGE_M3, at=(1, 24)),
        Example("vllm serve BAAI/bge-m3 --task generate\n", kind="command", vllm="0.8.5",
                model=BGE_M3, at=(1, 24)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        runner, task = inputs.value(cfg, "runner"), inputs.value(cfg, "task")
        by_task = runner in (None, "auto") and task == "generate"
        if not (runner == "generate" or by_task) or not architectures.has(cfg, facts, "pooling_only"):
            return
        if "runner" in facts.flags:
            refusal = messages.GENERATE_RUNNER_ON_EMBEDDING if release(facts) >= EMBEDDING_RUNNER_MESSAGE \
                else messages.GENERATE_RUNNER_UNSUPPORTED
        else:   # before --runner: _resolve_task lists the tasks the class supports
            refusal = messages.GENERATE_TASK_UNSUPPORTED
        arch = architectures.resolved(cfg, facts)
        said = "task 'generate'" if by_task else "runner 'generate'"
        yield self.diagnostic(
            cfg, inputs.setting(cfg, "task" if by_task else "runner"),
            f"{said} for {arch}, which can only pool: vLLM {facts.version} refuses to start",
            explanation=f"{arch} is a model class with no generation head"
            + (" (task 'generate' picks the generate runner)" if by_task else ""),
            fields=("task" if by_task else "runner", "model"),
            vllm_message=refusal,
            fix="drop the runner (auto picks pooling for this model), or serve a generative checkpoint")
