"""The library API the CLI calls: plain functions returning plain dataclasses.

Other programs (CI gates, launch scripts) call these directly; nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

from patchops.lint.rule import Diagnostic


# ---------------------------------------------------------------- lint

@dataclass(frozen=True)
class LintResult:
    path: str
    vllm_version: str
    facts_origin: str
    diagnostics: List[Diagnostic]

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)


def lint(path: Optional[Path] = None, *, command: Optional[str] = None,
         vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
         select: Sequence[str] = (), ignore: Sequence[str] = ()) -> LintResult:
    """Lint one serve spec, vLLM config or launch script (`path`) or a launch `command`."""
    from patchops.lint.config import load_command, load_file
    from patchops.lint.runner import lint_config
    from patchops.lint.select import facts_for_config

    if (path is None) == (command is None):
        raise ValueError("pass exactly one of path or command")
    cfg = load_command(command) if command is not None else load_file(Path(path))
    facts = facts_for_config(cfg, vllm_path=vllm_path, vllm_version=vllm_version)
    return LintResult(path=cfg.path, vllm_version=facts.version, facts_origin=facts.origin,
                      diagnostics=lint_config(cfg, facts, select=select, ignore=ignore))


def rules(code: Optional[str] = None):
    """Return every rule class, or the one whose code or name is `code`."""
    from patchops.errors import PatchopsError
    from patchops.lint.rules import ALL_RULES

    if code is None:
        return list(ALL_RULES)
    wanted = code.upper() if code[:2].upper() == "PO" else code
    match = [rule for rule in ALL_RULES if wanted in (rule.code, rule.name)]
    if not match:
        raise PatchopsError(f"no rule {code!r}; `patchops rules` lists them all")
    return match


# ---------------------------------------------------------------- locate

def locate(*, python: Optional[str] = None, roots: Sequence[Path] = ()):
    """Return every vLLM copy `python` could import plus vendor-root copies (a Location)."""
    from patchops import locate as locating

    return locating.locate(python=python, roots=roots)
