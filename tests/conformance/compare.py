"""Compare `patchops lint` with real vLLM's recorded verdicts, case by case.

Per case and version, patchops' errors (warnings and notes do not count) meet vLLM's verdict:

* agree: both fine; or both refuse and a patchops error names the cause vLLM gives (the
  codes in causes.yaml for vLLM's message, or the case's own `cause`); or vLLM is fine and
  every patchops error comes from a rule that documents a later-stage failure (`stage`);
* false error: patchops errors, vLLM builds its configuration;
* miss: vLLM refuses, patchops has no error (or only errors of later-stage rules);
* wrong cause: both refuse, but no patchops error names vLLM's cause (errors of later-stage
  rules do not count: vLLM's config stage refuses before they would fail);
* unmapped: both refuse, and no pattern in causes.yaml matches vLLM's message yet (a pattern
  with no codes is a known check no rule covers: any patchops error on it is a wrong cause).

A choice only some launches accept (0.8.5 `--guided-decoding-backend outlines`: the parser's
choices come from one Literal of a Union in set order, which follows addresses and so changes
per launch whatever PYTHONHASHSEED says) makes the recorded verdict one toss of a coin. lint
reports that refusal (PO107) and reads the value as given for everything else, as the other
half of the launches do; the judge counts its PO107 only when vLLM's recorded refusal is that
choice, and otherwise compares patchops' other errors with what vLLM did.

baseline.json lists today's disagreements by case id, so the test fails on a regression
and on an improvement that the baseline does not record yet.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import yaml

from conformance import harness
from conformance.cases import Case, all_cases

HERE = Path(__file__).resolve().parent
CAUSES = HERE / "causes.yaml"
BASELINE = HERE / "baseline.json"
OUTCOMES = ("agree", "false-error", "miss", "wrong-cause", "unmapped")
DISAGREEMENTS = OUTCOMES[1:]
HUB_VARS = ("HF_", "TRANSFORMERS_")  # the offline environment lint is told about
INPUT_ERROR = "input"  # patchops refused to read the launch at all


@dataclass(frozen=True)
class Row:
    case: str
    version: str
    outcome: str
    vllm: dict                    # the recorded verdict
    errors: Tuple[str, ...]       # patchops error codes
    expected: Tuple[str, ...]     # the codes naming vLLM's cause ((): none or not known)
    messages: Tuple[str, ...]     # patchops error lines, for reports


# --------------------------------------------------------------------------- causes

def load_causes() -> List[Tuple[re.Pattern, Tuple[str, ...]]]:
    """Return (pattern, codes) from causes.yaml, in file order (the first match wins)."""
    entries = yaml.safe_load(CAUSES.read_text()) or []
    return [(re.compile(e["pattern"]), tuple(e["codes"] or ())) for e in entries]


def expected_causes(case: Case, verdict: dict, causes=None) -> Optional[Tuple[str, ...]]:
    """Return the rule codes that name why vLLM refused `case`.

    () means a known vLLM check that no rule covers yet (any patchops error is then a wrong
    cause); None means nobody has mapped vLLM's message yet.
    """
    if case.cause:
        return case.cause
    message = verdict.get("message", "")
    for pattern, codes in causes if causes is not None else load_causes():
        if pattern.search(message):
            return codes
    return None


# --------------------------------------------------------------------------- patchops

def lint_case(case: Case, version: str, workdir: Path):
    """Return patchops' diagnostics for `case` against the shipped facts of `version`.

    The launch is the case's command line with its `--config` file beside it, plus the
    declared GPUs as a spec's `hardware:` would give them and the harness's offline Hugging
    Face environment (vLLM runs with HF_HUB_OFFLINE and an empty cache). A launch patchops refuses to read
    returns the LintInputError instead.
    """
    from patchops.run.stand_in import offline_environment
    from patchops.core.errors import LintInputError
    from patchops.lint.input.serve_config import Setting
    from patchops.lint.input.loaders import load_command
    from patchops.lint.facts.model import facts_for_version
    from patchops.lint.runner import lint_config

    folder = case.materialize(workdir)
    try:
        cfg = load_command(case.command(), path=f"{case.id}.sh", base_dir=str(folder))
        for source in (cfg, *cfg.sources.values()):
            source.suppressions = {}    # the judge counts what lint finds, not what a comment hides
        profile = case.profile()
        major, minor = profile["capability"]
        hardware = {"gpus": case.gpus, "memory_gib": profile["memory_gib"], "platform": "cuda",
                    "compute_capability": f"{major}.{minor}", "name": profile["name"],
                    "host_memory_gib": profile["host_ram_gib"]}
        for key, value in hardware.items():
            cfg.context[f"hardware.{key}"] = Setting(key=key, name=f"hardware.{key}", value=value,
                                                     line=1, column=1)
        for name, value in offline_environment(workdir).items():
            if name.startswith(HUB_VARS) and name not in cfg.env:
                cfg.env[name] = Setting(key=name, name=name, value=value, line=1, column=1, source="env")
        return lint_config(cfg, facts_for_version(version))
    except LintInputError as exc:
        return exc


def rule_stages(version: str) -> Dict[str, str]:
    """Return each rule's stage on `version`: "config" or "later" (see Rule.stage)."""
    from patchops.lint.rules import ALL_RULES

    return {rule.code: rule.stage_in(version) for rule in ALL_RULES}


def classify(case: Case, version: str, verdict: dict, found, *, causes=None,
             stages: Optional[Dict[str, str]] = None) -> Row:
    """Return the outcome of one case on one version."""
    stages = stages if stages is not None else rule_stages(version)
    if isinstance(found, Exception):
        errors, messages = (INPUT_ERROR,), (str(found),)
    else:
        found = [d for d in found if d.severity == "error" and not _chance_missed(d, version, verdict)]
        errors = tuple(dict.fromkeys(d.code for d in found))
        messages = tuple(f"{d.code} {d.name}: {d.message}" for d in found)
    expected: Optional[Tuple[str, ...]] = ()
    if verdict["verdict"] == "ok":
        later = all(stages.get(code) == "later" for code in errors)
        outcome = "agree" if not errors or later else "false-error"
    else:
        expected = expected_causes(case, verdict, causes)
        # A later-stage rule's error neither names nor contradicts a config-time refusal:
        # vLLM stops before that failure would come.
        config_errors = [code for code in errors if stages.get(code) != "later"]
        if set(errors) & set(expected or ()):
            outcome = "agree"
        elif not config_errors:
            outcome = "miss"
        elif expected is None:
            outcome = "unmapped"
        else:
            outcome = "wrong-cause"
    return Row(case=case.id, version=version, outcome=outcome, vllm=verdict, errors=errors,
               expected=expected or (), messages=messages)


def _chance_missed(diagnostic, version: str, verdict: dict) -> bool:
    """Return whether `diagnostic` is a refusal by chance that this recorded launch escaped."""
    from patchops.lint.facts.model import facts_for_version

    if diagnostic.code != "PO107" or not getattr(diagnostic, "fields", ()):
        return False
    flag = facts_for_version(version).flag(diagnostic.fields[0])
    if flag is None or not flag.chance_choices:
        return False
    said = re.search(r"argument \S+: invalid choice: (.*?) \(choose", diagnostic.vllm_message or "")
    if said is None or said.group(1) not in {repr(c) for c in flag.chance_choices}:
        return False
    return said.group(0) not in verdict.get("message", "")


def compare_version(version: str, cases: Sequence[Case]) -> List[Row]:
    """Return a Row per case that has a current verdict for `version`."""
    recorded = harness.load_verdicts(version)["cases"]
    causes, stages = load_causes(), rule_stages(version)
    rows = []
    with tempfile.TemporaryDirectory(prefix="patchops-compare-") as scratch:
        for case in cases:
            verdict = recorded.get(case.id)
            if verdict is None or verdict.get("key") != case.key():
                continue
            found = lint_case(case, version, Path(scratch))
            rows.append(classify(case, version, verdict, found, causes=causes, stages=stages))
    return rows


def compare_all(versions: Iterable[str], cases: Optional[Sequence[Case]] = None
                ) -> Dict[str, List[Row]]:
    cases = list(cases) if cases is not None else all_cases()
    return {version: compare_version(version, cases) for version in versions}


# --------------------------------------------------------------------------- reports

def table(results: Dict[str, List[Row]], corpus: Optional[int] = None) -> str:
    """Return the per-version table: cases, agreements and each kind of disagreement.

    With `corpus` (the number of cases in the corpus), a version that recorded fewer cases
    (a subset version, harness.SUBSET_VERSIONS) shows "N of M recorded" in its cases column.
    """
    head = ("vLLM", "cases", "vLLM ok", "agree", "false errors", "misses", "wrong causes",
            "unmapped")
    lines = [head]
    for version, rows in results.items():
        count = {o: sum(r.outcome == o for r in rows) for o in OUTCOMES}
        ok = sum(r.vllm["verdict"] == "ok" for r in rows)
        cases = str(len(rows))
        if corpus is not None and len(rows) != corpus:
            cases = f"{len(rows)} of {corpus} recorded"
        lines.append((version, cases, str(ok), str(count["agree"]),
                      str(count["false-error"]), str(count["miss"]), str(count["wrong-cause"]),
                      str(count["unmapped"])))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(line, widths)) + " |"
           for line in lines]
    out.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def _verdict_text(verdict: dict) -> str:
    if verdict["verdict"] == "ok":
        return "ok"
    return f"{verdict['stage']}: {verdict['type']}: {verdict['message'].splitlines()[0][:160]}"


def details(results: Dict[str, List[Row]]) -> str:
    lines = []
    for version, rows in results.items():
        for row in rows:
            if row.outcome == "agree":
                continue
            lines.append(f"{version} {row.outcome:12} {row.case}")
            lines.append(f"    vLLM: {_verdict_text(row.vllm)}")
            if row.expected:
                lines.append(f"    cause: {', '.join(row.expected)}")
            lines += [f"    patchops: {m[:200]}" for m in row.messages]
    return "\n".join(lines)


def show(case_id: str, versions: Iterable[str]) -> str:
    """Return one case's files, and per version patchops' findings and vLLM's verdict."""
    case = next((c for c in all_cases() if c.id == case_id), None)
    if case is None:
        return f"no case {case_id!r}"
    lines = [case.describe()]
    with tempfile.TemporaryDirectory() as scratch:
        for version in versions:
            verdict = harness.load_verdicts(version)["cases"].get(case.id)
            lines.append(f"vLLM {version}:")
            if verdict is None or verdict.get("key") != case.key():
                lines.append("  no current verdict: run `python scripts/conformance.py record "
                             f"--version {version} --only '{case.id}'`")
                continue
            lines.append(f"  verdict: {_verdict_text(verdict)}")
            if verdict["verdict"] == "ok":
                values = verdict.get("resolved", {})
                lines.append("  resolved: " + ", ".join(f"{k}={v}" for k, v in values.items()
                                                        if k != "cudagraph_capture_sizes"))
            found = lint_case(case, version, Path(scratch))
            row = classify(case, version, verdict, found)
            lines.append(f"  outcome: {row.outcome}"
                         + (f" (cause: {', '.join(row.expected)})" if row.expected else ""))
            if isinstance(found, Exception):
                lines.append(f"  patchops refused the input: {found}")
            else:
                lines += [f"  patchops {d.severity}: {d.code} {d.name}: {d.message}" for d in found]
    return "\n".join(lines)


# --------------------------------------------------------------------------- baseline

def baseline_of(results: Dict[str, List[Row]]) -> dict:
    return {version: {outcome: sorted(r.case for r in rows if r.outcome == outcome)
                      for outcome in DISAGREEMENTS}
            for version, rows in results.items()}


def write_baseline(results: Dict[str, List[Row]]) -> None:
    BASELINE.write_text(json.dumps(baseline_of(results), indent=1) + "\n")


def load_baseline() -> dict:
    return json.loads(BASELINE.read_text()) if BASELINE.exists() else {}


def baseline_changes(results: Dict[str, List[Row]], baseline: dict) -> List[str]:
    """Return one line per case whose outcome differs from the baseline's."""
    problems = []
    for version, rows in results.items():
        known = {case: outcome for outcome, ids in baseline.get(version, {}).items()
                 for case in ids}
        for row in rows:
            was = known.get(row.case, "agree")
            if row.outcome == was:
                continue
            if row.outcome == "agree":
                problems.append(f"{version} {row.case}: now agrees (was {was}); shrink the "
                                "baseline: python scripts/conformance.py baseline")
            else:
                problems.append(f"{version} {row.case}: {row.outcome} (was {was}); vLLM says "
                                f"{_verdict_text(row.vllm)}; patchops errors: "
                                f"{', '.join(row.errors) or 'none'}")
    return problems
