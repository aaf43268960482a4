"""PO808 unknown-quantization-method."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages
from patchops.lint.vllm.quantization_claims import ALLOW_DEPRECATED, QUANTIZATION


class UnknownQuantizationMethod(Rule):
    """
    ## What it does
    Flags a `--quantization` method the copy does not have, where argparse no longer lists
    the choices (0.9+: the type hint is `Any` at run time, so the flag takes any string), and
    a deprecated method
    (`DEPRECATED_QUANTIZATION_METHODS`, 0.20+) without `--allow-deprecated-quantization`.
    The methods are read from the copy (`QuantizationMethods`); methods come and go between
    releases (0.33 drops `gguf` and `bitsandbytes`). Where argparse still lists them (0.8.5),
    `invalid-flag-value` reports an unknown name at parse time. Not judged when an override
    claims the checkpoint's method whatever `--quantization` says (0.3x: a gpt-oss MXFP4
    checkpoint), since vLLM then never looks the user's name up.

    ## Why is this bad?
    vLLM refuses to build its model config: "Unknown quantization method: gguf. Must be one
    of ['awq', 'auto_awq', 'fp8', ...]", or "The quantization method %s is deprecated and
    will be removed in future versions of vLLM. To bypass, set
    `--allow-deprecated-quantization`."

    ## Fix
    Use a method this vLLM lists (or none for an unquantized model: the checkpoint's
    `quantization_config` is read by itself), add `--allow-deprecated-quantization` for a
    deprecated one, or load a plugin that registers the method.
    """

    code = "PO808"
    name = "unknown-quantization-method"
    severity = "error"
    versions = ">=0.9"
    needs = Needs(optional=("model",))
    vllm_message = messages.UNKNOWN_QUANTIZATION_METHOD
    VALID = [
        Example("model: m\nargs:\n  quantization: fp8\n", vllm="0.33.0"),
        Example("model: m\nargs:\n  quantization: gguf\n", vllm="0.10.1.1"),
        Example("model: m\nargs:\n  quantization: fbgemm_fp8\n  allow-deprecated-quantization: true\n",
                vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  quantization: gguf\n", vllm="0.33.0", at=(3, 3)),
        Example("vllm serve m -q fbgemm_fp8\n", kind="command", vllm="0.33.0", at=(1, 14)),
        Example("model: m\nargs:\n  quantization: awq4\n", vllm="0.10.1.1", at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, QUANTIZATION)
        flag = facts.flags.get(QUANTIZATION)
        names = facts.registries.get("quantization")
        if found is None or flag is None or flag.choices or not names or \
                not isinstance(found.value, str) or not found.value or inputs.quantization_taken_over(cfg, facts):
            return
        method = found.value if found.value in names else found.value.lower()  # lower-cased first (0.33)
        if method not in names:
            shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
            yield self.diagnostic(
                cfg, found, f"quantization method {found.value!r} is not one vLLM {facts.version} has",
                explanation=f"it has {shown}; vLLM refuses it while building ModelConfig", fields=(QUANTIZATION,),
                fix=f"use one of {', '.join(names)}",
                vllm_message=messages.UNKNOWN_QUANTIZATION_METHOD.format(name=method, names=list(names)))
        elif method in facts.registries.get("quantization_deprecated", ()) and ALLOW_DEPRECATED in facts.flags \
                and not inputs.bool_value(cfg, ALLOW_DEPRECATED):
            yield self.diagnostic(
                cfg, found, f"quantization method {method!r} is deprecated in vLLM {facts.version}",
                explanation="vLLM refuses it without --allow-deprecated-quantization",
                fields=(QUANTIZATION, ALLOW_DEPRECATED),
                fix="add --allow-deprecated-quantization, or use another method",
                vllm_message=messages.DEPRECATED_QUANTIZATION_METHOD)
