"""PO309 prefix-hash-sha256-on-v0."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, routing


class PrefixHashSha256OnV0(Rule):
    """
    ## What it does
    Flags `prefix-caching-hash-algo: sha256` with prefix caching on where the launch runs the
    V0 engine (0.8.5-0.10.x: `VLLM_USE_V1=0`, or a setting V1 does not support). The copy's
    guard in `EngineArgs._set_default_args_v0` says whether the check exists.

    ## Why is this bad?
    vLLM refuses to start: "sha256 is not supported for prefix caching in V0 engine. Please
    use 'builtin'."

    ## Fix
    Use `prefix-caching-hash-algo: builtin` on V0, or run the V1 engine.
    """

    code = "PO309"
    name = "prefix-hash-sha256-on-v0"
    severity = "error"
    versions = ">=0.8.5,<0.10.2"   # the guard decides: V0's default-args code, gone in 0.10.2
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    vllm_message = messages.PREFIX_HASH_SHA256_ON_V0
    VALID = [
        # V1 hashes with sha256.
        Example("model: m\nargs:\n  enable-prefix-caching: true\n  prefix-caching-hash-algo: sha256\n"),
        # V0 leaves prefix caching off unless asked.
        Example("model: m\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  prefix-caching-hash-algo: sha256\n"),
        Example("model: m\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n"
                "  prefix-caching-hash-algo: builtin\n"),
    ]
    INVALID = [
        Example("model: m\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n"
                "  prefix-caching-hash-algo: sha256\n", at=(6, 3)),
        Example("model: m\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n"
                "  prefix-caching-hash-algo: sha256\n", vllm="0.10.1.1", at=(6, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, "prefix_caching_hash_algo")
        if facts.guards.prefix_hash_sha256_v0 is None or found is None:
            return
        if str(found.value).strip() != "sha256" or not inputs.bool_value(cfg, "enable_prefix_caching"):
            return
        eng = routing.engine(cfg, facts)
        if eng.value != routing.V0 or eng.error:
            return
        yield self.diagnostic(
            cfg, found, f"prefix_caching_hash_algo sha256 on the V0 engine: vLLM {facts.version} refuses to start",
            explanation=f"the V0 engine runs: {eng.reason}",
            fields=("prefix_caching_hash_algo", "enable_prefix_caching"),
            fix="use prefix-caching-hash-algo builtin, or run the V1 engine")
