"""PO003 input-not-linted."""

from __future__ import annotations

import re
from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule


class InputNotLinted(Rule):
    """
    ## What it does
    Reports an input patchops could not lint: a missing or unreadable file, invalid YAML, a
    spec of the wrong shape, or no vLLM to judge it against.

    ## Why is this bad?
    Nothing in that file was checked, so any launch failure in it goes unreported. The other
    inputs of the same run are still linted (pre-commit passes files in batches, and one bad
    file must not hide the findings in the rest), and JSON and SARIF output still holds
    every finding, this one included. `lint` exits 2 when any input was not linted. It is
    reported whatever `--select`, `--ignore` or suppressions say. vLLM itself would fail on
    the same file before it reads any setting.

    ## Fix
    Correct the file as the message says. When no vLLM is installed here, state the version
    in the spec (`vllm: {version: X}`), or pass `--vllm-version X`, `--vllm PATH` or
    `--python PYTHON`.
    """

    code = "PO003"
    name = "input-not-linted"
    severity = "error"
    versions = ">=0"
    VALID = [Example("model: m\nargs:\n  max-model-len: 4096\n")]
    INVALID = [
        Example("model: m\nargs: [1, 2\n", at=(3, 1)),
        Example("- a\n- b\n", at=(1, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        """Yield nothing: the API reports inputs that failed to load with from_error()."""
        return iter(())

    @classmethod
    def from_error(cls, path: str, error: Exception) -> Diagnostic:
        """Turn the error that stopped `path` from being linted into a finding at its position."""
        message = str(error)
        line, column = 1, 1
        # Input errors read `path:line:col: message` or `path: message` (lint/input/serve_config.py).
        found = re.match(re.escape(path) + r"(?::(\d+):(\d+))?: ", message)
        if found:
            message = message[found.end():]
            if found.group(1):
                line, column = int(found.group(1)), int(found.group(2))
        return Diagnostic(file=path, line=line, column=column, code=cls.code, name=cls.name,
                          severity=cls.severity, message=message)
