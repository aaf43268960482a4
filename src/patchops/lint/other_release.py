"""Findings judged by another release's facts: errors only where that release's change cannot matter.

When the version linted for has no facts of its own (lint/facts/resolution.py), an error that
holds for the stand-in release but not for the release on the version's other side (the final
release of a dev build, the next release above a version PyPI never had) depends only on what
changed between the two, so it becomes a warning saying so. Past the newest release there is
no other side: the findings that only a release's flags and choices decide become warnings.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

from packaging.version import Version

from patchops.core import records
from patchops.lint.facts.model import Facts, facts_for_version, shipped_versions
from patchops.lint.facts.resolution import ResolutionKind
from patchops.lint.input.model_source import ModelSource
from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.rule import Diagnostic
from patchops.lint.runner import lint_config
from patchops.lint.rules.abbreviated_flag import AbbreviatedFlag
from patchops.lint.rules.invalid_flag_value import InvalidFlagValue
from patchops.lint.rules.unknown_attention_backend import UnknownAttentionBackend
from patchops.lint.rules.unknown_executor_backend import UnknownExecutorBackend
from patchops.lint.rules.unknown_flag import UnknownFlag
from patchops.lint.rules.unknown_parser_name import UnknownParserName
from patchops.lint.rules.unknown_quantization_method import UnknownQuantizationMethod

# The rules whose findings a release's option table and choice lists alone decide.
FLAG_AND_CHOICE_CODES = frozenset(r.code for r in (
    UnknownFlag, InvalidFlagValue, AbbreviatedFlag, UnknownAttentionBackend, UnknownExecutorBackend,
    UnknownParserName, UnknownQuantizationMethod))


def other_side(facts: Facts) -> Optional[str]:
    """Return the shipped release on the asked version's other side of `facts`, None past the newest."""
    asked, kind = facts.asked or ("", "")
    if kind == ResolutionKind.PRE:
        public = Version(Version(asked).public)   # a pre-release: a version PEP 440 reads
        above = [v for v in shipped_versions() if Version(v) >= public]
        return above[0] if above else None
    if kind == ResolutionKind.UNLISTED:
        above = [v for v in shipped_versions() if Version(v) > Version(facts.version)]
        return above[0] if above else None
    return None


def soften(cfg: ServeConfig, facts: Facts, found: List[Diagnostic], select: Sequence[str] = (),
           ignore: Sequence[str] = (), model: Optional[ModelSource] = None) -> List[Diagnostic]:
    """Return `found` (linted against `facts`) with the errors the stand-in alone decides as warnings.

    `model` is the model config the first lint chose, so the other release judges the same one.
    """
    if facts.asked is None or facts.asked[1] == ResolutionKind.LOCAL or not any(d.severity == "error" for d in found):
        return found
    asked, used, other = facts.asked[0], facts.version, other_side(facts)
    if other is not None:
        there = {(d.code, d.line, d.column) for d in lint_config(cfg, facts_for_version(other),
                                                                  select=select, ignore=ignore, model=model)}
        why = f" (vLLM {used} says so, {other} does not: unsure for {asked})"
        moved = [d.severity == "error" and (d.code, d.line, d.column) not in there for d in found]
    else:
        why = f" (vLLM {used} says so: unsure for the newer {asked})"
        moved = [d.severity == "error" and d.code in FLAG_AND_CHOICE_CODES for d in found]
    return [records.replace(d, severity="warning", message=d.message + why) if m else d
            for d, m in zip(found, moved)]

