"""PO909 tracing-without-opentelemetry."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, messages
from patchops.lint.vllm.packages import OPENTELEMETRY_DISTS


class TracingWithoutOpentelemetry(Rule):
    """
    ## What it does
    Flags `--otlp-traces-endpoint` on a vLLM whose wheel does not depend on OpenTelemetry
    (the Requires-Dist of 0.9-0.15 lacks it; 0.8.5 and 0.20+ bring it), where the copy's
    `ObservabilityConfig` refuses the endpoint when `opentelemetry` cannot be imported.

    ## Why is this bad?
    vLLM refuses to start: "OpenTelemetry is not available. Unable to configure
    'otlp_traces_endpoint'. Ensure OpenTelemetry packages are installed."

    ## Fix
    `pip install opentelemetry-sdk opentelemetry-api opentelemetry-exporter-otlp
    opentelemetry-semantic-conventions-ai`, or drop the endpoint. On a copy where they were
    installed by hand, lint that copy (`--vllm SITE_PACKAGES`): a warning only says it cannot see.
    """

    code = "PO909"
    name = "tracing-without-opentelemetry"
    severity = "error"
    unsure_severity = "warning"
    # Where the wheel's Requires-Dist lacks OpenTelemetry (0.8.x and 0.20+ bring it; older
    # wheels are left out); the copy's guard and its Requires-Dist decide.
    versions = ">=0.9,<0.20"
    vllm_message = messages.OPENTELEMETRY_MISSING
    explains = (messages.OPENTELEMETRY_CHECK,)
    VALID = [
        Example("model: m\nargs:\n  otlp-traces-endpoint: http://localhost:4317\n"),
        Example("model: m\nargs:\n  otlp-traces-endpoint: http://localhost:4317\n", vllm="0.33.0"),
        Example("model: m\nargs:\n  max-model-len: 4096\n", vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  otlp-traces-endpoint: http://localhost:4317\n", vllm="0.10.1.1",
                at=(3, 3)),
        Example("vllm serve m --otlp-traces-endpoint http://localhost:4317\n", kind="command",
                vllm="0.10.1.1", at=(1, 14)),
        # An inspected copy may have had OpenTelemetry installed by hand: a warning.
        Example("model: m\nargs:\n  otlp-traces-endpoint: http://localhost:4317\n", vllm="0.10.1.1",
                facts={"origin": "/opt/venv/lib/python3.12/site-packages"}, at=(3, 3), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, "otlp_traces_endpoint")
        if found is None or not found.value or facts.guards.otlp_needs_opentelemetry is None:
            return
        if not facts.required_dists or any(d in facts.required_dists for d in OPENTELEMETRY_DISTS):
            return
        shipped = facts.origin.startswith("shipped facts")
        yield self.diagnostic(
            cfg, found, f"otlp_traces_endpoint needs OpenTelemetry, which vLLM {facts.version} does not install",
            explanation=f"OpenTelemetry is not among the dependencies of the vLLM {facts.version} wheel, so "
            "a plain `pip install vllm` lacks it and vLLM refuses to start"
            + ("" if shipped else " (unless it was installed beside this copy by hand)"),
            severity=None if shipped else self.unsure_severity, fields=("otlp_traces_endpoint",),
            fix="pip install opentelemetry-sdk opentelemetry-api opentelemetry-exporter-otlp "
                "opentelemetry-semantic-conventions-ai, or drop otlp-traces-endpoint")
