"""PO113 config-check-refuses."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import config_checks


class ConfigCheckRefuses(Rule):
    """
    ## What it does
    Runs the checks vLLM's config classes make when they are built (`__post_init__`,
    `__init__`, pydantic `model_validator(mode="after")`, `verify_with_*`), read from the copy
    as small programs, on the settings this config states: LoRA's rank, extra vocabulary and
    adapter counts (`LoRAConfig`, only with `--enable-lora`), the long-prefill limits
    (`SchedulerConfig`), data-parallel ranks, EPLB and nsight (`ParallelConfig`), the
    structured-output backend options (`DecodingConfig`, `StructuredOutputsConfig`), the
    `--compilation-config` and `--kv-transfer-config` keys that exclude each other; EngineArgs'
    own checks (external data parallel on a dense model, `--attention-backend` with
    `--attention-config`'s backend), and ModelConfig's check of the parallel layout against
    the model's config.json (decode context parallel against the KV heads, the external
    launcher's seed). A check counts only when the config decides it: a value vLLM rewrites
    itself, a platform query or an environment variable vLLM may set leaves it unjudged (an
    unset one is envs.py's default). Checks other rules explain with more context (budgets,
    memory, executors, attention heads) are left to them.

    ## Why is this bad?
    vLLM refuses to build its config and exits, quoting the check: "max_lora_rank (12) must be
    one of (8, 16, 32, 64, 128, 256, 320, 512).", "max_cpu_loras (2) must be >= max_loras (4)",
    "enable_expert_parallel must be True to use EPLB.".

    ## Fix
    Change the setting the message names to a value the check accepts.
    """

    code = "PO113"
    name = "config-check-refuses"
    severity = "error"
    versions = ">=0.7"
    needs = Needs(optional=("hardware.platform",))
    VALID = [
        Example("model: m\nargs:\n  enable-lora: true\n  max-lora-rank: 64\n", vllm="0.8.5"),
        Example("model: m\nargs:\n  max-lora-rank: 12\n", vllm="0.8.5"),          # no LoRA: never built
        Example("model: m\nargs:\n  enable-lora: true\n  max-loras: 4\n  max-cpu-loras: 4\n",
                vllm="0.10.1.1"),
        Example("model: m\nargs:\n  max-num-partial-prefills: 4\n  max-long-partial-prefills: 4\n",
                vllm="0.10.1.1"),
        Example("model: m\nargs:\n  async-scheduling: true\n", vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  enable-lora: true\n  max-lora-rank: 12\n", vllm="0.8.5", at=(4, 3)),
        Example("model: m\nargs:\n  enable-lora: true\n  max-loras: 4\n  max-cpu-loras: 2\n",
                vllm="0.10.1.1", at=(5, 3)),
        Example("model: m\nargs:\n  enable-lora: true\n  lora-extra-vocab-size: 100\n", vllm="0.10.1.1",
                at=(4, 3)),
        Example("model: m\nargs:\n  async-scheduling: true\n  pipeline-parallel-size: 2\n", vllm="0.10.1.1",
                at=(3, 3)),
        Example("model: m\nargs:\n  max-num-partial-prefills: 2\n  max-long-partial-prefills: 3\n",
                vllm="0.10.1.1", at=(4, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for refusal in config_checks.refusals(cfg, facts, lambda text: self.explained_by_enabled(text, facts)):
            at = refusal.settings[0]
            names = tuple(s.name for s in refusal.settings)
            yield self.diagnostic(
                cfg, at, f"vLLM {facts.version} refuses "
                f"{' with '.join(dict.fromkeys(n.lstrip('-') for n in names))} ({refusal.config_class})",
                explanation=f"{refusal.config_class}'s check says: {refusal.message}",
                fields=names, fix="change the setting to a value the check accepts",
                vllm_message=f"{refusal.exception}: {refusal.message}")
