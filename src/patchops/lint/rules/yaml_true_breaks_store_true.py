"""PO106 yaml-true-breaks-store-true."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.facts.model import Facts
from patchops.lint.reading.read_config import Fate, ReadConfig
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, wording


class YamlTrueBreaksStoreTrue(Rule):
    """
    ## What it does
    Flags `key: true` (or `false`) in a config file for an on/off flag such as
    `enforce-eager` on vLLM 0.6.x.

    ## Why is this bad?
    vLLM 0.6.3's `_load_config_file` (vllm/utils.py) turns every key into `--key str(value)`,
    so `enforce-eager: true` becomes `--enforce-eager True`. `--enforce-eager` is a
    `store_true` flag that takes no value, so the word `True` is left over and vLLM exits
    with `vllm: error: unrecognized arguments: True`; `false` fails the same way (and would
    have switched the flag on). Only the StoreBoolean flags (`--enable-chunked-prefill`)
    accept the value. From 0.7.3 `true` becomes a bare `--key`.

    ## Fix
    Remove the key from the config file and pass the flag itself on the command line
    (`vllm serve MODEL --config serve.yaml --enforce-eager`); leave out a `false`, since
    off is the default of a store_true flag.
    """

    code = "PO106"
    name = "yaml-true-breaks-store-true"
    severity = "error"
    versions = "<0.7"
    vllm_message = "vllm: error: unrecognized arguments: {value}"

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "  enable-chunked-prefill: true\n", vllm="0.6.3.post1"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096 --enforce-eager\n",
                kind="command", vllm="0.6.3.post1"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  enforce-eager: true\n", vllm="0.7.3"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "  enforce-eager: true\n", vllm="0.6.3.post1", at=(4, 3)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\ntrust_remote_code: true\nmax_model_len: 8192\n",
                kind="config", vllm="0.6.3.post1", at=(2, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for setting in inputs.written_settings(cfg):
            if setting.source != "yaml" or not isinstance(setting.value, bool):
                continue
            outcome = cfg.outcome_of(setting)
            dest = outcome.dest if outcome is not None else None
            flag = facts.flags.get(dest or "") or facts.flags.get(setting.name) or facts.flag(setting.key)
            if flag is None or flag.action != "store_true":
                continue
            if outcome is not None and outcome.fate is Fate.REJECTED and \
                    not (outcome.detail or "").startswith("unrecognized arguments"):
                continue  # rejected for another reason, reported elsewhere
            word = str(setting.value)
            written = setting.raw or word.lower()
            message = (f'the value {written} of "{setting.key}" becomes "--{flag.name} {word}" in vLLM '
                       f"{facts.version}")
            explanation = (f'--{flag.name} takes no value: vLLM exits with "unrecognized arguments: '
                           f'{word}"')
            if setting.value:
                fix = (f"remove the key and pass --{flag.name} on the command line "
                       f"(vllm serve MODEL --config FILE --{flag.name})")
            else:
                fix = f"remove the key: --{flag.name} is off unless given"
            yield self.diagnostic(cfg, setting, message, explanation=explanation, fields=(flag.dest,), fix=fix,
                                  vllm_message=wording.parser_error(cfg, f"unrecognized arguments: {word}"))
