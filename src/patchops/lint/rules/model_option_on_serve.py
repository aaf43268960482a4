"""PO109 model-option-on-serve."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import messages


class ModelOptionOnServe(Rule):
    """
    ## What it does
    Flags `vllm serve --model X` on a command line where the copy refuses it: any `--model`
    on 0.6.3-0.7.3, the exact token `--model` (not `--model=X`) on 0.8.5-0.11. Read from the
    copy's own check (the `--model` guard of `vllm serve`); 0.12+ only warns.

    ## Why is this bad?
    vLLM exits while it parses the command line: "With `vllm serve`, you should provide the
    model as a positional argument or in a config file instead of via the `--model` option."

    ## Fix
    Give the model as the first argument: `vllm serve MODEL ...` (or `model:` in the config).
    """

    code = "PO109"
    name = "model-option-on-serve"
    severity = "error"
    versions = ">=0.6.3,<0.12"   # the copy's guard decides; 0.12+ only warns
    vllm_message = messages.MODEL_OPTION_ON_SERVE
    explains = (messages.MODEL_OPTION_CHECK,)
    VALID = [
        Example("vllm serve /models/m --max-model-len 4096\n", kind="command"),
        # 0.8.5 compares each token with `--model`: the `=` form passes its check.
        Example("vllm serve --model=/models/m --max-model-len 4096\n", kind="command"),
        Example("vllm serve --model /models/m\n", kind="command", vllm="0.33.0"),
        # A config file may name the model.
        Example("model: /models/m\nargs:\n  max-model-len: 4096\n"),
    ]
    INVALID = [
        Example("vllm serve --model /models/m --max-model-len 4096\n", kind="command", at=(1, 12)),
        Example("vllm serve --model /models/m\n", kind="command", vllm="0.10.1.1", at=(1, 12)),
        Example("vllm serve --model=/models/m\n", kind="command", vllm="0.7.3", at=(1, 12)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        refused = facts.guards.model_option_refused
        found = cfg.model
        if cfg.entrypoint != "serve" or not refused or found is None or found.source != "cli" \
                or found.key != "--model" or (refused == "token" and found.raw != "--model"):
            return
        yield self.diagnostic(
            cfg, found, f"the model as `{found.raw}` is refused by `vllm serve` of vLLM {facts.version}",
            explanation="it exits while it parses the command line: give the model as the first argument",
            fields=("model",), fix=f"write `vllm serve {found.value} ...` instead of `--model {found.value}`")
