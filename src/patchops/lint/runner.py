"""Run the rule catalogue over one config: version filter, select/ignore, needs, suppressions.

A rule whose declared inputs (Rule.needs) are missing is not called: it is recorded as not
run, with the reason and what to do, so no rule skips silently.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, List, Optional, Sequence, Tuple

from patchops.lint import selectors
from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.facts.model import Facts
from patchops.lint.input import model_source
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.reading import read_as_vllm
from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.rule import Diagnostic, Example, Needs, NotRun
from patchops.lint.rules import ALL_RULES
from patchops.lint.rules.input_not_linted import InputNotLinted
from patchops.lint.rules.unused_suppression import UnusedSuppression

# The generic parser findings step aside when a specific rule already explains the same
# setting (num_scheduler_steps on 0.10.1+ is "multistep-removed", not just "unknown"; a YAML
# `yes` refused as a value is "yaml-11-boolean", not just "invalid value").
GENERIC_CODES = ("PO101", "PO107")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
HARDWARE_HINT = "state it under hardware: or with --hardware"
WORKLOAD_HINT = "state it under workload:"


@dataclasses.dataclass
class Run:
    """One config's findings (sorted by position, then code) and the rules not run on it."""

    diagnostics: List[Diagnostic]
    not_run: List[NotRun]
    seen: ReadConfig           # the config as the release reads it, with its model source


def lint_config(cfg: ServeConfig, facts: Facts, *, select: Sequence[str] = (),
                ignore: Sequence[str] = (), model: Optional[model_source.ModelSource] = None) -> List[Diagnostic]:
    """Return the findings for `cfg` against `facts`, sorted by position then code."""
    return run_rules(cfg, facts, select=select, ignore=ignore, model=model).diagnostics


def run_rules(cfg: ServeConfig, facts: Facts, *, select: Sequence[str] = (), ignore: Sequence[str] = (),
              given: model_source.GivenConfigs = model_source.GivenConfigs(), fetch: bool = False,
              model: Optional[model_source.ModelSource] = None) -> Run:
    """Run every selected rule of `facts.version` whose needs `cfg` meets; record the others.

    `select` and `ignore` hold codes, code prefixes or rule names (comma lists allowed), as
    do the file's `# patchops: ignore[...]` comments. `given` and `fetch` choose the model
    config (lint/input/model_source.py) unless `model` is that choice already (a second run).
    """
    select, ignore = selectors.split(select), selectors.split(ignore)
    selectors.check("--select", select, ALL_RULES)
    selectors.check("--ignore", ignore, ALL_RULES)
    seen = prepare(cfg, facts, given, fetch, model)
    found: List[Diagnostic] = []
    not_run: List[NotRun] = []
    enabled = [rule_class for rule_class in ALL_RULES
               if selectors.is_selected(rule_class.code, rule_class.name, select, ignore)]
    for rule_class in enabled:
        if rule_class in (UnusedSuppression, InputNotLinted) or not rule_class.applies_to(facts.version):
            continue
        rule = rule_class(enabled)
        if seen.model_facts is not None and not rule.concerns(seen):
            continue
        lacking = missing(rule_class.needs, seen)
        not_run.extend(NotRun(rule_class.name, cfg.path, reason, hint) for reason, hint in lacking)
        if not lacking:
            found.extend(rule.check(seen, facts))
    found = _drop_explained(found)
    kept = [d for d in found if not suppressed(cfg, d)]
    if selectors.is_selected(UnusedSuppression.code, UnusedSuppression.name, select, ignore):
        kept.extend(UnusedSuppression().check_suppressions(cfg, found))
    return Run(sorted(kept, key=lambda d: (d.line, d.column, d.code)), not_run, seen)


def prepare(cfg: ServeConfig, facts: Facts, given: model_source.GivenConfigs = model_source.GivenConfigs(),
            fetch: bool = False, model: Optional[model_source.ModelSource] = None) -> ReadConfig:
    """Return `cfg` as `facts.version` reads it, with its model source (`model`, else chosen)."""
    seen = read_as_vllm(cfg, facts)
    return seen.with_model(model if model is not None else model_source.choose(seen, given, fetch))


def missing(needs: Needs, seen: ReadConfig) -> List[Tuple[str, str]]:
    """Return (what is missing, what to do) for each required input `seen` lacks."""
    lacking = []
    for name in needs.required:
        if name == "model":
            if seen.model_facts is None:
                source = seen.model_source
                lacking.append((source.reason, source.hint))
        elif name not in seen.context:
            lacking.append((f"{name} not known",
                            HARDWARE_HINT if name.startswith("hardware.") else WORKLOAD_HINT))
    return lacking


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
        r, diagnostics=[], not_run=[],
        no_launch=f"the `--config` of {user}, linted as that launch reads it")
        for r, user in zip(results, loader)]


def example_facts(example: Example) -> Facts:
    """Return the shipped facts of an Example's vLLM version with its `facts`, said as in the facts' JSON."""
    from patchops.lint.facts.model import GROUP_RECORDS, facts_for_version

    facts = facts_for_version(example.vllm)
    if not example.facts:
        return facts
    return dataclasses.replace(facts, **{
        k: GROUP_RECORDS[k](v) if k in GROUP_RECORDS else tuple(v) if isinstance(v, list) else v
        for k, v in example.facts.items()})


def lint_example(example: Example) -> List[Diagnostic]:
    """Lint a rule's Example against the shipped facts of its vLLM version."""
    from patchops.core.errors import LintInputError
    from patchops.lint.input.loaders import load_text

    facts = example_facts(example)
    try:
        cfg = load_text(example.text, path="example.yaml", kind=example.kind)
    except LintInputError as error:
        return [InputNotLinted.from_error("example.yaml", error)]
    given = model_source.GivenConfigs(read=model_facts_from_dict(example.model)) \
        if example.model is not None else model_source.GivenConfigs()
    return run_rules(cfg, facts, given=given).diagnostics
