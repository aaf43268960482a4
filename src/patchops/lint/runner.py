"""Run the rule catalogue over one config: version filter, select/ignore, suppressions."""

from __future__ import annotations

import dataclasses
from typing import Iterable, List, Sequence

from patchops.lint import selectors
from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.facts.model import Facts
from patchops.lint.input.model_config import model_facts_for, model_facts_from_dict
from patchops.lint.reading import read_as_vllm
from patchops.lint.rule import Diagnostic, Example
from patchops.lint.rules import ALL_RULES
from patchops.lint.rules.input_not_linted import InputNotLinted
from patchops.lint.rules.unused_suppression import UnusedSuppression

# The generic parser findings step aside when a specific rule already explains the same
# setting (num_scheduler_steps on 0.10.1+ is "multistep-removed", not just "unknown"; a YAML
# `yes` refused as a value is "yaml-11-boolean", not just "invalid value").
GENERIC_CODES = ("PO101", "PO107")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


def lint_config(cfg: ServeConfig, facts: Facts, *, select: Sequence[str] = (),
                ignore: Sequence[str] = ()) -> List[Diagnostic]:
    """Return the findings for `cfg` against `facts`, sorted by position then code.

    `select` and `ignore` hold codes, code prefixes or rule names (comma lists allowed), as
    do the file's `# patchops: ignore[...]` comments.
    """
    select, ignore = selectors.split(select), selectors.split(ignore)
    selectors.check("--select", select, ALL_RULES)
    selectors.check("--ignore", ignore, ALL_RULES)
    seen = read_as_vllm(cfg, facts)
    seen.model_facts = model_facts_for(seen)
    found: List[Diagnostic] = []
    for rule_class in ALL_RULES:
        if rule_class in (UnusedSuppression, InputNotLinted) or \
                not selectors.is_selected(rule_class.code, rule_class.name, select, ignore):
            continue
        if rule_class.applies_to(facts.version):
            found.extend(rule_class().check(seen, facts))
    found = _drop_explained(found)
    kept = [d for d in found if not suppressed(cfg, d)]
    if selectors.is_selected(UnusedSuppression.code, UnusedSuppression.name, select, ignore):
        kept.extend(UnusedSuppression().check_suppressions(cfg, found))
    return sorted(kept, key=lambda d: (d.line, d.column, d.code))


def suppressed(cfg: ServeConfig, d: Diagnostic) -> bool:
    """Return whether a `# patchops: ignore[...]` comment on the finding's line names its rule.

    The comment is read in the file the finding is in: a `--config FILE`'s key is ignored there.
    """
    cfg = cfg.sources.get(d.file, cfg)
    names = cfg.suppressions.get(cfg.covers.get(d.line, d.line), ())
    return any(s == "*" or d.named_by(s) for s in names)


def _drop_explained(found: Iterable[Diagnostic]) -> List[Diagnostic]:
    """Drop a generic finding that a specific one explains: same position, same setting.

    Same position alone is not enough: a finding about several settings sits at one of them,
    so one setting's removed flag and another's bad value may share it. The
    setting is the generic finding's first field (later ones are context, such as the flag
    "did you mean" names), and only a finding at least as severe explains it: a warning about
    `max_num_seqs` does not explain away an unknown `max-num-active-seqs` beside it.
    """
    found = list(found)
    specific: dict = {}
    for d in found:
        if d.code not in GENERIC_CODES:
            specific.setdefault((d.file, d.line, d.column), []).append(d)
    return [d for d in found if d.code not in GENERIC_CODES or not _explained(d, specific)]


def _explained(d: Diagnostic, specific: dict) -> bool:
    subject = {d.fields[0].replace("-", "_")} if d.fields else set()
    for other in specific.get((d.file, d.line, d.column), ()):
        if SEVERITY_RANK[other.severity] < SEVERITY_RANK[d.severity]:
            continue
        names = {name.replace("-", "_") for name in other.fields}
        if not names or not subject or names & subject:
            return True
    return False


def read_elsewhere(results: List) -> List:
    """Return lint results with a file that another input loads as `--config FILE` judged there only.

    The launch that loads it is how vLLM reads it: its findings are that input's, in the file
    (linted alone it would be judged twice, and maybe against another release).
    """
    import os

    from patchops.core import records

    by = {os.path.normpath(name): result.path for result in results for name in result.sources}
    loader = [by.get(os.path.normpath(r.path)) if r.error is None else None for r in results]
    return [r if user in (None, r.path) else records.replace(
        r, diagnostics=[], skipped=[], hardware_skipped={},
        no_launch=f"the `--config` of {user}, linted as that launch reads it")
        for r, user in zip(results, loader)]


def lint_example(example: Example) -> List[Diagnostic]:
    """Lint a rule's Example against the shipped facts of its vLLM version."""
    from patchops.core.errors import LintInputError
    from patchops.lint.facts.model import facts_for_version
    from patchops.lint.input.loaders import load_text

    facts = facts_for_version(example.vllm)
    if example.facts:
        overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in example.facts.items()}
        facts = dataclasses.replace(facts, **overrides)
    try:
        cfg = load_text(example.text, path="example.yaml", kind=example.kind)
    except LintInputError as error:
        return [InputNotLinted.from_error("example.yaml", error)]
    if example.model is not None:
        cfg.model_facts = model_facts_from_dict(example.model)
    return lint_config(cfg, facts)
