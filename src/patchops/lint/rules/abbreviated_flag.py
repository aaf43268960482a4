"""PO108 abbreviated-flag."""

from __future__ import annotations

from typing import Iterator, Optional

from patchops.lint.edits import rename_key
from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import options


def _written(key: str) -> Optional[str]:
    """Return the long option a key spells (`--enable-chunked`), None for short options."""
    if key.startswith("-") and not key.startswith("--"):
        return None
    body = key.lstrip("-").split("=", 1)[0]
    head, dot, tail = body.partition(".")
    return "--" + head.replace("_", "-")


class AbbreviatedFlag(Rule):
    """
    ## What it does
    Warns about a flag written as an abbreviation that this vLLM's argument parser expands
    (argparse accepts any unique prefix: `--enable-chunked` for `--enable-chunked-prefill`),
    naming the full flag and the releases where the same prefix is ambiguous, unknown or
    means another flag. An abbreviation that is ambiguous in this release is an error of
    `invalid-flag-value`.

    ## Why is this bad?
    A prefix is unique only until a release adds a flag that shares it. In 0.33.0 every
    `--enable-x` also answers to `--disable-x`, so `--enable-chunked` (now also
    `--enable-chunked-mm-input`) and `--disable-log` stop vLLM with "ambiguous option".

    ## Fix
    Write the full flag name (`lint --fix` does, in the file's spelling).
    """

    code = "PO108"
    name = "abbreviated-flag"
    severity = "warning"
    versions = ">=0"
    fixable = "safe"
    VALID = [
        Example("vllm serve m --enable-chunked-prefill\n", kind="command", vllm="0.10.1.1"),
        Example("vllm serve m -tp 2\n", kind="command", vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("vllm serve m --enable-chunked\n", kind="command", vllm="0.10.1.1", at=(1, 14),
                fixed="vllm serve m --enable-chunked-prefill\n"),
        Example("model: m\nargs:\n  max-model: 4096\n", vllm="0.8.5", at=(3, 3),
                fixed="model: m\nargs:\n  max-model-len: 4096\n"),
        Example("vllm serve m --max-model=4096 \\\n    --enable-chunked\n", kind="command", vllm="0.10.1.1",
                at=(1, 14), fixed="vllm serve m --max-model-len=4096 \\\n    --enable-chunked-prefill\n"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for dest, found in sorted(cfg.args.items()):
            option = _written(found.key)
            expanded = options.expansion(facts, option) if option else None
            if expanded is None or expanded[1] != dest:
                continue
            elsewhere = options.meaning_elsewhere(option, dest)
            where = ("; ".join(elsewhere)) if elsewhere else None
            full = expanded[0] if found.source == "cli" else _in_file_style(expanded[0], found.key)
            yield self.diagnostic(
                cfg, found, f"abbreviation {option} expands to {expanded[0]} in vLLM {facts.version}",
                explanation=where, fields=(dest,), fix=f"write {expanded[0]}",
                edits=[rename_key(cfg, found, full) if "." not in found.key else None],
                edit_title=f"write {full}")


def _in_file_style(option: str, key: str) -> str:
    """Return `--max-model-len` as a YAML key spelled like `key`: `max-model-len` or `max_model_len`."""
    name = option.lstrip("-")
    return name.replace("-", "_") if "_" in key and "-" not in key else name
