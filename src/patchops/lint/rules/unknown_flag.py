"""PO101 unknown-flag."""

from __future__ import annotations

from typing import Dict, Iterator

from patchops.lint.input.serve_config import Setting
from patchops.lint.edits import rename_key
from patchops.lint.facts.model import Facts, Flag
from patchops.lint.reading.read_config import Fate, ReadConfig
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import options, wording


class UnknownFlag(Rule):
    """
    ## What it does
    Flags a key that the vLLM version you run does not accept as a `vllm serve` option:
    a typo, a short alias written as a config key (`tp: 4`), or a flag that this vLLM
    version does not have yet or no longer has.

    ## Why is this bad?
    Every config key becomes `--key`, and vLLM's argument parser rejects options it does
    not know before anything starts: `vllm: error: unrecognized arguments: --tp 4`.
    Short aliases such as `-tp` only work on the command line, with one dash.
    Flags also come and go between releases (`--num-scheduler-steps` is gone after 0.10.0,
    `--cudagraph-capture-sizes` arrives in 0.12.0), so a config that worked on one vLLM
    fails on the next. The rule names the closest option this version has and the
    shipped versions that have the flag.

    ## Fix
    Use the long option name (`tensor_parallel_size`), fix the spelling, or remove the
    key (or run a vLLM version that has the flag). `lint --fix` writes the long name of a
    short alias, and the one flag a typo is close to when no shipped release has the key
    and the flag is not set already.

    ## Example
    ```yaml
    model: Qwen/Qwen2.5-7B-Instruct
    args:
      tp: 4                 # use tensor-parallel-size: 4
      max-model-length: 4096  # did you mean max-model-len?
    ```
    """

    code = "PO101"
    name = "unknown-flag"
    severity = "error"
    versions = ">=0"
    fixable = "safe"
    # argparse (Lib/argparse.py, parse_args): msg = _('unrecognized arguments: %s'), printed by
    # the top-level `vllm` parser as "<prog>: error: <msg>".
    vllm_message = "vllm: error: unrecognized arguments: {args}"

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  tensor-parallel-size: 4\n"
                "  max-model-len: 4096\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\ntensor_parallel_size: 2\nmax_model_len: 8192\n",
                kind="config"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct -tp 4 --max-model-len 4096\n",
                kind="command"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  cudagraph-capture-sizes: [1, 2, 4, 8]\n",
                vllm="0.12.0"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  tp: 4\n  max-model-len: 4096\n",
                at=(3, 3), fixed="model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  tensor-parallel-size: 4\n"
                                 "  max-model-len: 4096\n"),
        Example("model: meta-llama/Llama-3.1-8B-Instruct\nmax_model_length: 8192\n",
                kind="config", at=(2, 1),
                fixed="model: meta-llama/Llama-3.1-8B-Instruct\nmax_model_len: 8192\n"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096 --gpu-memory-utilisation 0.85\n",
                kind="command", at=(1, 58),
                fixed="vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096 --gpu-memory-utilization 0.85\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "  cudagraph-capture-sizes: [1, 2, 4, 8]\n", vllm="0.8.5", at=(4, 3)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  tp: 2   # two cards\n  max-model-lenght: 4096\n",
                at=(3, 3), fixed="model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  tensor-parallel-size: 2   "
                                 "# two cards\n  max-model-len: 4096\n"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --tp 2 --gpu-memory-utilisation=0.85\n",
                kind="command", at=(1, 37),
                fixed="vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 "
                      "--gpu-memory-utilization=0.85\n"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        known = options.known_names(facts)
        for outcome in cfg.outcomes_of(Fate.UNKNOWN):
            yield self._finding(cfg, facts, known, outcome.setting)

    def _finding(self, cfg: ReadConfig, facts: Facts, known: Dict[str, Flag],
                 setting: Setting) -> Diagnostic:
        name = setting.name.lstrip("-").replace("-", "_")
        version = facts.version
        rejected = f'vLLM {version} has no --{name.replace("_", "-")}'
        outcome = 'vLLM\'s argument parser will exit with "unrecognized arguments"'
        vllm_message = wording.parser_error(cfg, f"unrecognized arguments: {options.argv_of(setting, version)}")
        alias = options.alias_target(name, facts)
        if alias is not None and name not in known:
            short = options.alias_short(alias, name)
            long_key = "--" + alias.name if setting.source == "cli" else wording.spelled(alias.dest, setting, cfg)
            fix = f"use the long name {long_key}"
            if setting.source == "cli":
                message = f'short alias -{short} written with two dashes ("{setting.key}")'
                explanation = f"{rejected}, so {outcome}"
                fix += f" (or the alias with one dash, -{short})"
            else:
                message = f'short alias "{setting.key}" (-{short}) works only on the command line'
                explanation = f"as a key it becomes --{short}, and {rejected}, so {outcome}"
            return self.diagnostic(cfg, setting, message, explanation=explanation, fields=(alias.dest,), fix=fix,
                                   vllm_message=vllm_message,
                                   edits=[self._rename(cfg, setting, alias, long_key)],
                                   edit_title=f"write {long_key}")

        base = name.split(".", 1)[0]
        if "." in name and base in known:
            message = f'dotted key "{setting.key}" is not understood by vLLM {version}'
            explanation = f"dotted keys arrived in 0.9; {outcome}"
            inner = name.split(".", 1)[1]
            fix = f"write {wording.spelled(base, setting, cfg)} as one JSON string, e.g. '{{\"{inner}\": ...}}'"
            return self.diagnostic(cfg, setting, message, explanation=explanation, fields=(base,), fix=fix,
                                   vllm_message=vllm_message)

        last, first = options.flag_history(name, version)
        close = options.close_names(name, known)
        suggestion = close[0] if close else None
        if last and not first:
            history = f"was removed after vLLM {last}"
        elif first and not last:
            history = f"was added in vLLM {first}"
        elif first and last:
            history = f"exists in vLLM {last} and {first} but not in this copy"
        else:
            history = None
        message = f'flag "{setting.key}" {history}' if history else f'unknown flag "{setting.key}"'
        explanation = f"{rejected}, so {outcome}"
        fixes = []
        if suggestion:
            fixes.append(f'did you mean "{wording.spelled(suggestion, setting, cfg)}"?')
        if last and not first and name in options.SUCCESSORS:
            option = name.replace('_', '-')
            fixes = [f"use {options.SUCCESSORS[name]} instead (it replaced --{option} after vLLM {last})"]
        elif last and not first:
            fixes.append(f"remove it (or run vLLM {last}, the last shipped version that has it)")
        elif first:
            fixes.append(f"remove it, or upgrade to vLLM {first} or later")
        elif not suggestion:
            fixes.append("remove it, or check the spelling against `vllm serve --help`")
        fields = [name]
        if suggestion and known[suggestion].dest != name:
            fields.append(known[suggestion].dest)
        # A typo with one clear match, of a key no shipped release knows: rename it.
        clear = suggestion is not None and len(close) == 1 and not (last or first)
        new_key = wording.spelled(suggestion, setting, cfg) if clear else ""
        return self.diagnostic(cfg, setting, message, explanation=explanation, fields=fields, fix="; ".join(fixes),
                               vllm_message=vllm_message,
                               edits=[self._rename(cfg, setting, known[suggestion], new_key)] if clear else (),
                               edit_title=f"write {new_key}")

    @staticmethod
    def _rename(cfg: ReadConfig, setting: Setting, flag: Flag, key: str):
        """Return the edit writing `key` for the setting, unless the flag is set already."""
        if flag.dest in cfg.args:
            return None                     # renaming would make a duplicate
        if setting.source != "cli" and "=" in setting.key:
            return None
        return rename_key(cfg, setting, key)
