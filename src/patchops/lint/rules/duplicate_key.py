"""PO104 duplicate-key."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.edits import remove_setting
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule


def shown(setting: Setting) -> str:
    """Return the value as the user wrote it, for a message."""
    if setting.raw is not None and setting.source != "cli":  # a command's raw is the option token
        return setting.raw
    return "true" if setting.value is True else str(setting.value)


def written(setting: Setting) -> str:
    """Return the setting as written: `key: value` in YAML, `--key value` on a command line."""
    if setting.source == "cli":
        return setting.key if setting.value is True else f"{setting.key} {shown(setting)}"
    return f"{setting.key}: {shown(setting)}"


class DuplicateKey(Rule):
    """
    ## What it does
    Flags a setting given twice (the same key, or two spellings of one option such as
    `max_model_len` and `max-model-len`), pointing at the earlier one, which has no effect.

    ## Why is this bad?
    Nothing complains: PyYAML's `safe_load` keeps the last of two equal keys, and argparse
    keeps the last of two options (so `--max-model-len` on the command line also overrides
    the config file). The earlier value is silently ignored, and whoever reads the file
    top-down sees a setting that is not the one vLLM runs with.

    ## Fix
    Delete the earlier line (or the later one, if the earlier value is the one you meant).
    `lint --fix` deletes the earlier one where it is written in the same file and layer as
    the later one and the key appears just twice, so what vLLM reads does not change.
    """

    code = "PO104"
    name = "duplicate-key"
    severity = "warning"
    versions = ">=0"
    fixable = "safe"
    vllm_message = None  # silent: last wins

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 8192\n"
                "  max-num-seqs: 128\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nmax_model_len: 8192\ngpu_memory_utilization: 0.9\n",
                kind="config"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "  max-num-seqs: 128\n  max-model-len: 8192\n", at=(3, 3),
                fixed="model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-num-seqs: 128\n  max-model-len: 8192\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nmax_model_len: 4096\ngpu_memory_utilization: 0.9\n"
                "max-model-len: 32768\n", kind="config", at=(2, 1),
                fixed="model: Qwen/Qwen2.5-7B-Instruct\ngpu_memory_utilization: 0.9\nmax-model-len: 32768\n"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096 --max-num-seqs 64 "
                "--max-model-len 8192\n", kind="command", at=(1, 37),
                fixed="vllm serve Qwen/Qwen2.5-7B-Instruct --max-num-seqs 64 --max-model-len 8192\n"),
        # Two spellings of one option, the earlier with a comment of its own.
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max_num_seqs: 64   # old\n"
                "  max-model-len: 4096\n  max-num-seqs: 128\n", at=(3, 3),
                fixed="model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                      "  max-num-seqs: 128\n"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for earlier, later in cfg.duplicates:
            where = self._where(earlier, later)
            what = "option" if earlier.source == "cli" else "key"
            if earlier.source != later.source and later.source == "cli":
                message = f'duplicate setting "{earlier.key}" {shown(earlier)}: the command line sets it'
                explanation = f'this value is overridden by "{written(later)}" on the command line'
                severity = "info"
            elif earlier.value == later.value:
                message = f'duplicate {what} "{earlier.key}": set again at {where} to the same value ({shown(later)})'
                explanation = "so this one has no effect"
                severity = "info"
            else:
                message = (f'duplicate {what} "{earlier.key}": this value ({shown(earlier)}) is overridden '
                           f'at {where}')
                explanation = (f'this value ({shown(earlier)}) is silently ignored: "{later.key}" at {where} '
                               f"overrides it with {shown(later)} (the last value wins)")
                severity = self.severity
            yield self.diagnostic(cfg, earlier, message, explanation=explanation, fields=(later.name,),
                                  severity=severity,
                                  fix=f"delete this one, or the later one at {where} if this value "
                                      "is the one you meant",
                                  edits=[self._removal(cfg, earlier, later)],
                                  edit_title="delete the earlier one")

    @staticmethod
    def _removal(cfg: ReadConfig, earlier: Setting, later: Setting):
        """Return the edit deleting `earlier` when that leaves what vLLM reads as it is.

        Both in this file's one layer (a `--config` file's key seen from its command has no
        span; the command line overriding a file is another layer), written in that order, and
        the option given only these two times: with a third spelling in between, PyYAML's
        key order decides which one argparse sees last.
        """
        if earlier.source != later.source or (earlier.line, earlier.column) >= (later.line, later.column):
            return None
        names = {earlier.name, later.name}
        pairs = [p for p in cfg.duplicates if p[0].name in names or p[1].name in names]
        if len(pairs) != 1:
            return None
        return remove_setting(cfg, earlier)

    @staticmethod
    def _where(earlier: Setting, later: Setting) -> str:
        if later.line == earlier.line:
            return f"column {later.column}"
        return f"line {later.line}"
