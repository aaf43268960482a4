"""PO105 yaml-collection-mangled."""

from __future__ import annotations

import json
from typing import Iterator, Optional

from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts, Flag
from patchops.lint.reading.read_config import Fate, ReadConfig
from patchops.lint.rule import Diagnostic, Example, Rule, with_vllm_message
from patchops.lint.vllm import inputs, wording
from patchops.lint.vllm.releases import (COMPILATION_JSON, COMPILATION_LITERAL_EVAL, DICTS_AS_JSON, DOTTED_KEYS,
                                         LISTS_EXPANDED, Version, release)

def as_json(value) -> Optional[str]:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return None


class YamlCollectionMangled(Rule):
    """
    ## What it does
    Flags a YAML list before vLLM 0.10.2, and a YAML mapping before vLLM 0.20, written as a
    config value: vLLM passes Python's `str()` of it to the option.

    ## Why is this bad?
    `_load_config_file` turns every value into `--key str(value)`. A list arrives as the one
    token `"[1, 2, 4]"`: a number-list option such as `--cuda-graph-sizes` fails with
    argparse's "invalid int value", a text option silently gets the brackets. A mapping
    arrives as Python's repr `"{'level': 3}"`, which is not JSON: every JSON-typed option
    rejects it (`--speculative-config`, `--hf-overrides`, and `--compilation-config` from
    0.9), except `--compilation-config` in 0.7.x-0.8.x, which reads it with
    `ast.literal_eval`. vLLM 0.10.2 expands lists into separate tokens; 0.20 writes mappings
    as JSON.

    ## Fix
    Write a mapping as a JSON string (`compilation_config: '{"level": 3}'`) or, from vLLM
    0.9, as dotted keys (`compilation_config.level: 3`). Put a list on the command line
    (`--cuda-graph-sizes 1 2 4 8`), or write it as a JSON string if the option takes JSON.
    """

    code = "PO105"
    name = "yaml-collection-mangled"
    severity = "error"
    versions = "<0.20"
    vllm_message = "vllm serve: error: argument {flag}: invalid {type} value: {value}"  # argparse

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  compilation-config: '{\"level\": 3}'\n",
                vllm="0.9.2"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\ncompilation_config: {level: 3}\n",
                kind="config", vllm="0.8.5"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  cuda-graph-sizes: [1, 2, 4, 8]\n",
                vllm="0.10.2"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "  cuda-graph-sizes: [1, 2, 4, 8]\n", vllm="0.9.2", at=(4, 3)),
        Example("model: meta-llama/Llama-3.1-8B-Instruct\nspeculative_config:\n  method: ngram\n"
                "  num_speculative_tokens: 4\n  prompt_lookup_max: 4\n", kind="config",
                vllm="0.8.5", at=(2, 1)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  compilation-config:\n    level: 3\n",
                vllm="0.11.0", at=(3, 3)),
        # 0.6.x-0.10.1 pass a list as its Python text: the served name becomes "['qwen', ...]"
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  served-model-name: [qwen, qwen-7b]\n",
                vllm="0.7.3", at=(3, 3), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        version = release(facts)
        for setting in inputs.written_settings(cfg):
            value = setting.value
            if isinstance(value, list) and version < LISTS_EXPANDED:
                kind = "list"
            elif isinstance(value, dict) and version < DICTS_AS_JSON:
                kind = "mapping"
            else:
                continue
            outcome = cfg.outcome_of(setting)
            dest = outcome.dest if outcome is not None else None
            flag = facts.flags.get(dest or "") or facts.flags.get(setting.name) or facts.flag(setting.key)
            if outcome is not None and outcome.fate is Fate.REJECTED:
                yield self._finding(cfg, facts, setting, flag, kind, version, outcome.detail)
            elif outcome is not None and outcome.fate is Fate.IGNORED:
                yield self._finding(cfg, facts, setting, flag, kind, version, None)
            elif outcome is None:
                # no reading result (no flag table): judge from the version alone
                if kind == "mapping" and setting.name == "compilation_config" and \
                        COMPILATION_LITERAL_EVAL <= version < COMPILATION_JSON:
                    continue
                yield self._finding(cfg, facts, setting, flag, kind, version, None)
            # accepted (compilation_config's literal_eval in 0.7-0.8) and unknown (unknown-flag)
            # need nothing here

    def _finding(self, cfg: ReadConfig, facts: Facts, setting: Setting, flag: Optional[Flag],
                 kind: str, version: Version, error: Optional[str]) -> Diagnostic:
        text = str(setting.value)
        option = "--" + (flag.name if flag else setting.name.replace("_", "-"))
        since = LISTS_EXPANDED if kind == "list" else DICTS_AS_JSON
        how = "expanded into separate values" if kind == "list" else "passed as JSON"
        if error is not None:
            what, severity = "the option rejects it and vLLM exits", "error"
        elif kind == "list":
            what, severity = "the option silently gets that text, brackets and all", "warning"
        else:
            what, severity = "the option silently gets that text", "warning"
        message = f'the {kind} given to "{setting.key}" reaches vLLM {facts.version} as Python text'
        explanation = f'vLLM gets the text "{text}" ({kind}s are {how} only from {since}): {what}'
        encoded = as_json(setting.value)
        if kind == "list" and not (flag is not None and flag.type == "json"):
            items = " ".join(str(v) for v in setting.value)
            fix = f"remove the key and pass it on the command line: {option} {items}"
        else:
            fix = f"write it as a JSON string: {setting.key}: '{encoded}'"
            if kind == "mapping" and version >= DOTTED_KEYS and encoded is not None:
                first = next(iter(setting.value.items()), None)
                if first is not None and not isinstance(first[1], (dict, list)):
                    fix += f", or as dotted keys ({setting.key}.{first[0]}: {as_json(first[1])})"
        found = self.diagnostic(cfg, setting, message, explanation=explanation,
                                fields=(flag.dest if flag else setting.name,),
                                severity=severity, fix=fix)
        return with_vllm_message(found, wording.parser_error(cfg, error) if error else None)
