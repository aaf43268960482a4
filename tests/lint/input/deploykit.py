"""Lint a deploy file written to a temporary folder, as `patchops lint FILE` does."""

from __future__ import annotations

from pathlib import Path
from typing import List, Set, Tuple

from patchops import api
from patchops.core.settings import Settings


def lint_file(folder: Path, name: str, text: str, version: str = "0.6.3.post1") -> list:
    """Write `text` to `folder/name` and return its LintResults (`version`: the fallback release)."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return api.lint_inputs([path], vllm_version=version, settings=Settings())


def found(results) -> Set[Tuple[str, int, int, str, str]]:
    """Return every finding as (file name, line, column, severity, code)."""
    return {(Path(d.file).name, d.line, d.column, d.severity, d.code)
            for result in results for d in result.diagnostics}


def versions(results) -> List[str]:
    return [result.vllm_version for result in results]
