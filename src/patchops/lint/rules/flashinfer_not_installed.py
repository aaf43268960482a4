"""PO502 flashinfer-not-installed."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule, with_vllm_message
from patchops.lint.vllm import inputs, messages, packages, releases
from patchops.lint.vllm.attention import ATTENTION_BACKEND_ENV as ENV


class FlashinferNotInstalled(Rule):
    """
    ## What it does
    Flags `VLLM_ATTENTION_BACKEND` naming a FlashInfer backend (`FLASHINFER`,
    `FLASHINFER_VLLM_V1`, `FLASHINFER_MLA`) when the vLLM copy being linted has no `flashinfer`
    package beside it.

    ## Why is this bad?
    - 0.6.x-0.7.x: nothing checks up front. The FlashInfer backend swallows the failed import
      and the first prefill in the worker dies with `'NoneType' object is not callable`,
      after the weights have loaded.
    - 0.8.5-0.12: `ModelConfig` refuses to start: "VLLM_ATTENTION_BACKEND is set to
      FLASHINFER, but flashinfer module was not found. ...". `FLASHINFER_VLLM_V1` and
      `FLASHINFER_MLA` skip that check and fail later on `No module named 'flashinfer'`.

    The rule is an error when the copy was inspected (`patchops lint --vllm PATH`, or the copy
    that wins the import) and has no flashinfer. With only a release (shipped facts), the
    wheel's own Requires-Dist answers what a plain `pip install vllm==X` brings: before 0.12
    flashinfer is not among them, so the rule is an error saying so (lint the copy itself when
    flashinfer was installed by hand); from 0.12 `flashinfer-python` is a dependency. Facts
    that know neither give an info note.

    ## Fix
    Install FlashInfer for your torch/CUDA build (`pip install flashinfer-python`, 0.10+;
    older vLLM: the matching `flashinfer` wheel), or use another backend (`FLASH_ATTN`).
    """

    code = "PO502"
    name = "flashinfer-not-installed"
    severity = "error"
    unsure_severity = "info"
    versions = "<0.15"
    vllm_message = messages.FLASHINFER_MISSING_MODEL_CONFIG

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "env:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n", facts={"has_flashinfer": True}),
        # The 0.12.0 wheel requires flashinfer-python: a plain install has it.
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n",
                vllm="0.12.0"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASH_ATTN\n",
                facts={"has_flashinfer": False}),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "env:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n", facts={"has_flashinfer": False},
                at=(5, 3)),
        Example("VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve Qwen/Qwen2.5-7B-Instruct "
                "--max-model-len 4096\n", kind="command", vllm="0.6.3.post1",
                facts={"has_flashinfer": False}, at=(1, 1)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASHINFER_VLLM_V1\n",
                vllm="0.10.2", facts={"has_flashinfer": False}, at=(3, 3)),
        # Shipped facts: the 0.8.5 wheel does not require flashinfer, so a plain install lacks it.
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n",
                vllm="0.8.5", at=(3, 3)),
        # Facts that know neither the install nor the wheel's dependencies: a note.
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n",
                vllm="0.6.3.post1", facts={"required_dists": ()}, at=(3, 3), severity="info"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        setting = cfg.env.get(ENV)
        name = inputs.env_text(cfg, ENV)
        present = packages.present(facts, "flashinfer")
        if setting is None or name is None or present.value:
            return
        if not facts.attention_env_var or not name.startswith("FLASHINFER"):
            return
        if facts.attention_backends and name not in facts.attention_backends:
            return  # unknown-attention-backend explains an unknown name
        if releases.release(facts) < releases.FLASHINFER_CHECKED_AT_START:
            outcome = ("nothing checks this up front, so the worker loads the weights and then dies "
                       "on the first batch with \"'NoneType' object is not callable\"")
            vllm_message = messages.FLASHINFER_MISSING_NONE_CALL
        elif name == "FLASHINFER":
            outcome = "vLLM refuses to start"
            vllm_message = messages.FLASHINFER_MISSING_MODEL_CONFIG
        else:
            outcome = "the worker fails to import the FlashInfer backend"
            vllm_message = messages.FLASHINFER_MISSING_IMPORT
        fix = ("install FlashInfer built for this torch/CUDA (pip install flashinfer-python), "
               f"or set {ENV}=FLASH_ATTN")
        if present.value is None:  # shipped facts that know nothing of the install
            message = f'the flashinfer package that {ENV}="{name}" needs may be missing'
            explanation = (f"the shipped facts for vLLM {facts.version} cannot tell; if it is, {outcome}")
            fix = f"lint on the machine or with --vllm SITE_PACKAGES to check; else {fix}"
            found = self.diagnostic(cfg, setting, message, explanation=explanation, fields=(ENV,), fix=fix,
                                    severity=self.unsure_severity)
            yield with_vllm_message(found, vllm_message)
            return
        if present.certain:
            message = f'no flashinfer beside vLLM {facts.version} for {ENV}="{name}"'
            explanation = outcome
        else:
            message = f'no flashinfer in a plain install of vLLM {facts.version} for {ENV}="{name}"'
            explanation = f"{present.reason}; {outcome}"
            fix += "; if flashinfer is installed by hand, lint with --vllm SITE_PACKAGES to check that copy"
        found = self.diagnostic(cfg, setting, message, explanation=explanation, fields=(ENV,), fix=fix)
        yield with_vllm_message(found, vllm_message)
