"""PO315 remote-code-needs-trust."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import architectures, messages, releases

REMOTE = {"architectures": ["CustomForCausalLM"], "model_type": "custom",
          "auto_map": {"AutoConfig": "configuration_custom.CustomConfig"}}
KNOWN = dict(REMOTE, model_type="qwen2")   # an auto_map beside a type transformers has: its own class
OLD = {"transformers": {"version": "4.51.3", "model_types": ["llama", "qwen2"]}}
NEW = {"transformers": {"version": "4.55.4", "model_types": ["llama", "qwen2"]}}


class RemoteCodeNeedsTrust(Rule):
    """
    ## What it does
    Flags a model whose config.json `auto_map` names its own config class (custom code in the
    repo) for a `model_type` the transformers beside vLLM has no class for, launched without
    `--trust-remote-code`. The model types are read as model-type-unknown-to-transformers
    reads them (the copy's transformers, or the one its release day installed).

    ## Why is this bad?
    vLLM's `get_config` asks transformers' `AutoConfig` with `trust_remote_code=False`, which
    refuses to run the repo's code while vLLM builds the model config. With transformers
    before 4.52 vLLM words it: "Failed to load the model config. If the model is a custom
    model not yet available in the HuggingFace transformers library, consider setting
    `trust_remote_code=True` in LLM or using the `--trust-remote-code` flag in the CLI."; from
    4.52 transformers' own ValueError comes through ("The repository ... contains custom code
    which must be executed to correctly load the model").

    ## Fix
    Add `--trust-remote-code` once you have read the repo's code, or use a transformers release
    that knows the model type.
    """

    code = "PO315"
    name = "remote-code-needs-trust"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.REMOTE_CODE_NEEDS_TRUST
    needs = Needs(model=True)
    VALID = [
        Example("vllm serve org/custom --trust-remote-code\n", kind="command", model=REMOTE, facts=OLD),
        Example("vllm serve org/custom\n", kind="command", model=KNOWN, facts=OLD),
    ]
    INVALID = [
        Example("vllm serve org/custom\n", kind="command", model=REMOTE, facts=OLD, at=(1, 12)),
        Example("model: org/custom\nargs:\n  trust-remote-code: false\n", vllm="0.11.0", model=REMOTE,
                facts=NEW, at=(1, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        kind = architectures.remote_code_refused(cfg, facts)
        if kind is None:
            return
        installed = facts.transformers.version
        reworded = installed is not None and releases.parse_version(str(installed)) is not None and \
            releases.parse_version(str(installed)) >= releases.TRANSFORMERS_REMOTE_CODE_WORDING
        model = cfg.model.value if cfg.model is not None else "the model"
        yield self.diagnostic(
            cfg, cfg.model,
            f"auto_map model type '{kind}' (unknown to transformers {installed}) needs --trust-remote-code", fields=("model", "trust_remote_code"),
            fix="add --trust-remote-code once you have read the repo's code",
            vllm_message=messages.TRANSFORMERS_REMOTE_CODE.format(model=model) if reworded
            else messages.REMOTE_CODE_NEEDS_TRUST)
