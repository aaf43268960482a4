"""PO503 attention-backend-env-removed."""

from __future__ import annotations

from typing import Iterator, Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule, with_vllm_message
from patchops.lint.vllm import attention, inputs, messages, releases
from patchops.lint.vllm.attention import ATTENTION_BACKEND_ENV as ENV


def truthy(value) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true", "yes", "on")


class AttentionBackendEnvRemoved(Rule):
    """
    ## What it does
    Flags `VLLM_ATTENTION_BACKEND` on a vLLM that no longer reads it (0.15 and later), where the
    backend is chosen with `--attention-backend` instead.

    ## Why is this bad?
    The variable was removed from `vllm/envs.py` when the backend choice moved to
    `--attention-backend` / `--attention-config` (`-ac`). vLLM 0.15 ignores the variable
    without a word, so the backend you asked for is not the one you get; from 0.20 vLLM
    logs "Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND" (a hard error
    with `--fail-on-environ-validation`) and still ignores it.

    ## Fix
    Remove the variable and pass the backend as an option: `--attention-backend FLASHINFER`
    (in a config file: `attention-backend: FLASHINFER`; the value is case-insensitive).
    """

    code = "PO503"
    name = "attention-backend-env-removed"
    severity = "warning"
    versions = ">=0.13"
    vllm_message = messages.UNKNOWN_ENV_VARIABLE

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "  attention-backend: FLASHINFER\n", vllm="0.33.0"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n",
                vllm="0.12.0"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --attention-backend FLASH_ATTN\n",
                kind="command", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "env:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n", vllm="0.33.0", at=(5, 3)),
        Example("VLLM_ATTENTION_BACKEND=FLASH_ATTN vllm serve Qwen/Qwen2.5-7B-Instruct\n",
                kind="command", vllm="0.33.0", at=(1, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        setting = cfg.env.get(ENV)
        value = inputs.env_text(cfg, ENV)
        if setting is None or value is None or facts.attention_env_var:
            return
        fields = [ENV]
        fail_hard = cfg.args.get("fail_on_environ_validation")
        if releases.release(facts) < releases.ENVIRON_VALIDATED:
            outcome = "vLLM ignores it without a word and picks the backend itself"
            severity, vllm_message = self.severity, None
        elif fail_hard is not None and truthy(fail_hard.value):
            outcome = "with --fail-on-environ-validation vLLM refuses to start"
            severity, vllm_message = "error", messages.UNKNOWN_ENV_VARIABLE
            fields.append("fail_on_environ_validation")
        else:
            outcome = "vLLM warns that the variable is unknown and picks the backend itself"
            severity, vllm_message = self.severity, messages.UNKNOWN_ENV_VARIABLE
        message = f'environment variable {ENV}="{value}" is no longer read by vLLM {facts.version}'
        explanation = f"the backend is now an option: {outcome}"
        name = self._backend_name(value, facts)
        if "attention_backend" in facts.flags:
            fields.append("attention_backend")
            fix = f"remove the variable and pass --attention-backend {name}"
            if cfg.kind == "spec":
                fix += f" (in the spec's args: attention-backend: {name})"
            elif cfg.kind == "config":
                fix += f" (in the config file: attention-backend: {name})"
        elif "attention_config" in facts.flags:
            fields.append("attention_config")
            fix = f"remove the variable and pass --attention-config '{{\"backend\": \"{name}\"}}'"
        else:
            fix = "remove the variable"
        found = self.diagnostic(cfg, setting, message, explanation=explanation, fields=fields,
                                severity=severity, fix=fix)
        yield with_vllm_message(found, vllm_message)

    @staticmethod
    def _backend_name(value: str, facts: Facts) -> str:
        """Return `value` as the option spells it: upper case, without the old `_VLLM_V1` suffix."""
        plain = value.strip().upper()
        if plain.endswith("_VLLM_V1"):
            plain = plain[: -len("_VLLM_V1")]
        known = tuple(facts.attention_backends)
        if known and plain not in known:
            guess: Optional[str] = attention.suggest_backend(plain, known)
            return guess or plain
        return plain
