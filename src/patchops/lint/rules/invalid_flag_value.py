"""PO107 invalid-flag-value."""

from __future__ import annotations

import re
from typing import Iterator

from patchops.lint.facts.model import Facts
from patchops.lint.reading.read_config import Fate, ReadConfig
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import messages
from patchops.lint.vllm.wording import TYPE_WORDS


class InvalidFlagValue(Rule):
    """
    ## What it does
    Flags a value that vLLM's argument parser refuses: the wrong type (`--max-model-len 32k`
    before 0.8.5, `-tp two`), a choice the version does not offer (`--dtype float77`,
    `--kv-cache-dtype fp9`), an ambiguous abbreviation, a `--config FILE` that is no YAML file
    or that does not exist (tried from the input's folder and from here).

    ## Why is this bad?
    `vllm serve` exits at once with `vllm serve: error: argument --max-model-len: invalid int
    value: '32k'`. Cheap to fix, but in a launch script that starts a fleet, or a benchmark
    sweep, the arm is simply lost. Types and choices are read from the vLLM that will run,
    since they change between versions (`32k` is accepted from 0.8.5, `fp8_inc` from 0.10).

    ## Fix
    Write a value of the type the flag takes, or one of the choices vLLM lists.
    """

    code = "PO107"
    name = "invalid-flag-value"
    severity = "error"
    versions = ">=0"
    vllm_message = "vllm serve: error: argument --{flag}: invalid {type} value: '{value}'"
    explains = (messages.KV_CACHE_DTYPE_CHECK, messages.PREFIX_HASH_CHECK,)
    VALID = [
        Example("model: m\nargs:\n  max-model-len: 32k\n", vllm="0.8.5"),
        Example("vllm serve m --dtype bfloat16 -tp 2\n", kind="command", vllm="0.6.3.post1"),
        Example("model: m\nargs:\n  guided-decoding-backend: xgrammar\n", vllm="0.8.5"),
    ]
    INVALID = [
        Example("vllm serve m --max-model-len 32k\n", kind="command", vllm="0.6.3.post1", at=(1, 14)),
        Example("model: m\nargs:\n  kv-cache-dtype: fp9\n", vllm="0.8.5", at=(3, 3)),
        Example("tensor-parallel-size: two\n", kind="config", vllm="0.11.0", at=(1, 1)),
        # 0.8.5 builds these choices from Literal V0 | Literal V1, one of them picked by hash order.
        Example("model: m\nargs:\n  guided-decoding-backend: outlines\n", vllm="0.8.5", at=(3, 3)),
        Example("vllm serve m --config missing-serve-config.yaml\n", kind="command", vllm="0.33.0",
                at=(1, 23)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        prog = "vllm serve" if cfg.entrypoint == "serve" else "api_server.py"
        for outcome in sorted(cfg.outcomes_of(Fate.REJECTED), key=lambda o: o.dest):
            name, setting, why = outcome.dest, outcome.setting, outcome.detail
            value = setting.raw if setting.raw is not None else setting.value
            shown = f"{setting.key} {setting.value}" if setting.source == "cli" else f"{setting.key}: {value}"
            message = f'vLLM {facts.version} refuses "{shown}" and exits at once'
            explanation = f"its argument parser says: {why}"
            flag = facts.flag(name)
            if flag is not None and flag.chance_choices and any(
                    f"invalid choice: {c!r} " in why for c in flag.chance_choices):
                message = f'vLLM {facts.version} refuses "{shown}" in about half of all launches'
                explanation += ("; its parser takes the choices from one of the field's Literal types in "
                                "set order, which changes from launch to launch (PYTHONHASHSEED does not "
                                "fix it), and only some of them hold this value")
            yield self.diagnostic(cfg, setting, message, explanation=explanation, fields=(name,), fix=_fix(why),
                                  vllm_message=f"{prog}: error: {why}")


def _fix(why: str) -> str:
    """Name what vLLM takes instead: the choices argparse lists, or the type it wants."""
    choices = re.search(r"\(choose from (.+)\)\s*$", why)
    if choices:
        return f"use one of {choices.group(1)}"
    wanted = re.search(r"invalid (\w+) value", why)
    if wanted:
        kind = TYPE_WORDS.get(wanted.group(1), f"a {wanted.group(1)} value")
        return f"write {kind}, with no unit or suffix (this vLLM reads the value as it is)"
    return "write the value as `vllm serve --help` shows it for this flag"
