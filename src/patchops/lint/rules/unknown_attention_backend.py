"""PO501 unknown-attention-backend."""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule, with_vllm_message
from patchops.lint.vllm import attention, inputs, messages, releases
from patchops.lint.vllm.attention import ATTENTION_BACKEND_FLAG
from patchops.lint.vllm.attention import ATTENTION_BACKEND_ENV as ENV
from patchops.lint.vllm.routing import v1_oracle_backends


class UnknownAttentionBackend(Rule):
    """
    ## What it does
    Flags `VLLM_ATTENTION_BACKEND` set to a name this vLLM version does not know (the names
    are case-sensitive), and, on vLLM 0.8.5-0.11, to a name the V1 engine does not accept;
    from 0.15, `--attention-backend` set to a name outside the backend enum (any case, or
    `auto`).

    ## Why is this bad?
    What vLLM does with an unknown name depends on the version:
    - 0.6.x: `ValueError: Invalid attention backend 'x'. Available backends: ... (case-sensitive).`
    - 0.7.x-0.10.0: the name is silently ignored and vLLM picks a backend itself; from 0.8
      the V1 engine's oracle also rejects the name and the whole launch silently falls
      back to the old V0 engine.
    - 0.10.1-0.10.2: V0 fallback, then `Invalid attention backend: 'x'. Valid backends are: [...]`.
    - 0.11.0: the V0 fallback crashes the API server (`assert envs.VLLM_USE_V1`).
    - 0.12: `Invalid value 'x' for VLLM_ATTENTION_BACKEND. Valid options: [...]`.
    - 0.15+ (`--attention-backend`): `Unknown attention backend: 'X'. Valid options are: ...`
      while the engine config is built.
    A valid name outside the V1 allow-list (`XFORMERS` before 0.11) also falls back to V0
    in 0.8.5-0.10.x, and crashes 0.11.0. With `VLLM_USE_V1=1` the fallback becomes
    `NotImplementedError: VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND=x.`

    ## Fix
    Use a backend name this version lists, spelled in upper case (`FLASH_ATTN`,
    `FLASHINFER`; `FLASH_ATTN_VLLM_V1` only in 0.7-0.10), or remove the variable to let
    vLLM choose.
    """

    code = "PO501"
    name = "unknown-attention-backend"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.UNKNOWN_BACKEND_ENVS

    @classmethod
    def stage_in(cls, version: str) -> str:
        """0.10.1-0.10.2 build the config, then raise when the selector meets the name (later)."""
        v = releases.release(version)
        return "later" if releases.BACKEND_VALIDATED_BY_SELECTOR <= v < releases.V0_REMOVED else cls.stage

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "env:\n  VLLM_ATTENTION_BACKEND: FLASH_ATTN\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: XFORMERS\n",
                vllm="0.6.3.post1"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASHINFER\n",
                vllm="0.12.0"),
        Example("VLLM_ATTENTION_BACKEND=FLASH_ATTN vllm serve Qwen/Qwen2.5-7B-Instruct\n",
                kind="command", vllm="0.11.0"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --attention-backend flash_attn\n",
                kind="command", vllm="0.33.0"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --attention-backend auto\n",
                kind="command", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "env:\n  VLLM_ATTENTION_BACKEND: flashinfer\n", vllm="0.12.0", at=(5, 3)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: XFORMERS\n",
                vllm="0.8.5", at=(3, 3), severity="warning"),
        Example("VLLM_ATTENTION_BACKEND=FLASH_ATTN_VLLM_V1 vllm serve Qwen/Qwen2.5-7B-Instruct\n",
                kind="command", vllm="0.11.0", at=(1, 1)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenv:\n  VLLM_ATTENTION_BACKEND: FLASH_ATTENTION\n",
                vllm="0.6.3.post1", at=(3, 3)),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --attention-backend FLASH_ATTENTION\n",
                kind="command", vllm="0.33.0", at=(1, 37)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        flagged = self._unknown_flag(cfg, facts)
        if flagged is not None:
            yield flagged
        setting = cfg.env.get(ENV)
        name = inputs.env_text(cfg, ENV)
        if setting is None or name is None or not facts.attention_env_var:
            return
        known = tuple(facts.attention_backends)
        if not known:
            return  # the copy's backend list could not be read: nothing to compare against
        if name not in known:
            yield self._unknown(cfg, facts, setting, name, known)
        else:
            found = self._not_v1(cfg, facts, setting, name, known)
            if found is not None:
                yield found

    def _unknown_flag(self, cfg: ReadConfig, facts: Facts) -> Optional[Diagnostic]:
        """Check `--attention-backend`: AttentionConfig parses it as `AttentionBackendEnum[X.upper()]`."""
        setting = cfg.args.get(ATTENTION_BACKEND_FLAG)
        known = tuple(facts.attention_backends)
        if ATTENTION_BACKEND_FLAG not in facts.flags or setting is None or not isinstance(setting.value, str) \
                or not known:
            return None
        name = setting.value
        if name.lower() == "auto" or name.upper() in known:
            return None
        guess = attention.suggest_backend(name.upper(), known)
        listing = ", ".join(known)
        return self.diagnostic(
            cfg, setting, f'unknown attention backend "{name}" in --attention-backend of vLLM {facts.version}',
            explanation="vLLM does not know it, and refuses to start while it builds its config",
            fields=(ATTENTION_BACKEND_FLAG,), fix=f"use --attention-backend {guess}" if guess else
            f"use one of {listing}, or auto",
            vllm_message=messages.UNKNOWN_BACKEND_FLAG.format(name=name.upper(), backends=listing))

    def _unknown(self, cfg: ReadConfig, facts: Facts, setting: Setting, name: str,
                 known: Tuple[str, ...]) -> Diagnostic:
        version = releases.release(facts)
        guess = attention.suggest_backend(name, known)
        listing = ", ".join(known)
        case_note = " (names are case-sensitive)" if guess and guess.upper() == name.upper() else ""
        use_v1 = inputs.use_v1_env(cfg)
        severity = "error"
        fields = [ENV]
        if version < releases.UNKNOWN_BACKEND_IGNORED:
            outcome = "vLLM exits with a ValueError when it selects the attention backend"
            vllm_message = messages.UNKNOWN_BACKEND_063.format(backend_name=name, backends=listing)
        elif version < releases.V1_DEFAULT:
            outcome = "vLLM silently ignores it and picks a backend itself"
            severity, vllm_message = "warning", None
        elif version < releases.V1_ONLY and use_v1 is True:
            outcome = "vLLM refuses to start (VLLM_USE_V1=1 forbids the V0 fallback it triggers)"
            vllm_message = messages.BACKEND_FORCED_V1.format(x=name)
            fields.append("VLLM_USE_V1")
        elif version < releases.BACKEND_VALIDATED_BY_SELECTOR:
            severity = "warning"
            if use_v1 is False or name in (v1_oracle_backends(facts.version) or ()):
                outcome = "vLLM silently ignores it and picks a backend itself"
                vllm_message = None
            else:
                outcome = ("vLLM ignores it for backend selection, but the V1 engine rejects it, so "
                           "the launch also silently falls back to the slower V0 engine")
                vllm_message = messages.BACKEND_FALLS_BACK_TO_V0.format(x=name)
        elif version < releases.V0_REMOVED:
            outcome = "vLLM exits with a ValueError when the model's attention layers are built"
            vllm_message = messages.UNKNOWN_BACKEND_SELECTOR.format(backend_by_env_var=name, backends=list(known))
        elif version < releases.BACKEND_VALIDATED_BY_ENVS:
            outcome = ("the V1 engine rejects it and falls back to V0, which 0.11 no longer has: "
                       "the API server crashes on `assert envs.VLLM_USE_V1`")
            vllm_message = messages.BACKEND_FALLS_BACK_TO_V0.format(x=name)
        else:
            outcome = "vLLM exits with a ValueError as soon as it reads the variable"
            vllm_message = messages.UNKNOWN_BACKEND_ENVS.format(value=name, actual_choices=list(known))
        message = f'unknown attention backend {ENV}="{name}" in vLLM {facts.version}'
        explanation = f"vLLM does not know it{case_note}, so {outcome}"
        if guess:
            fix = f'did you mean {ENV}={guess}?'
        else:
            fix = f"use one of {listing}, or remove the variable"
        found = self.diagnostic(cfg, setting, message, explanation=explanation, fields=fields,
                                severity=severity, fix=fix)
        return with_vllm_message(found, vllm_message)

    def _not_v1(self, cfg: ReadConfig, facts: Facts, setting: Setting, name: str,
                known: Tuple[str, ...]) -> Optional[Diagnostic]:
        allowed = v1_oracle_backends(facts.version)
        use_v1 = inputs.use_v1_env(cfg)
        if allowed is None or name in allowed or use_v1 is False:
            return None
        v1_names = [n for n in allowed if n in known]
        guess = attention.suggest_backend(name, tuple(v1_names))
        fields = [ENV]
        if use_v1 is True:
            outcome = "vLLM refuses to start"
            vllm_message = messages.BACKEND_FORCED_V1.format(x=name)
            fields.append("VLLM_USE_V1")
            severity = "error"
        elif releases.release(facts) < releases.V0_REMOVED:
            outcome = "the launch silently falls back to the slower V0 engine"
            vllm_message = messages.BACKEND_FALLS_BACK_TO_V0.format(x=name)
            severity = "warning"
        else:
            outcome = ("vLLM falls back to V0, which 0.11 no longer has: the API server crashes on "
                       "`assert envs.VLLM_USE_V1`")
            vllm_message = messages.BACKEND_FALLS_BACK_TO_V0.format(x=name)
            severity = "error"
        message = f'attention backend {ENV}="{name}" is not one the V1 engine of vLLM {facts.version} accepts'
        explanation = f"so {outcome}"
        fix = (f"use a V1 backend ({', '.join(v1_names)})" if not guess or guess == name
               else f"use {ENV}={guess}")
        fix += ", or remove the variable to let vLLM choose"
        found = self.diagnostic(cfg, setting, message, explanation=explanation, fields=fields,
                                severity=severity, fix=fix)
        return with_vllm_message(found, vllm_message)
