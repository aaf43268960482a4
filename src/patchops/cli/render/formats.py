"""`patchops lint`'s machine formats: JSON, SARIF 2.1.0 and GitHub Actions annotations."""

from __future__ import annotations

import json
import sys
from typing import Optional

from patchops import __version__
from patchops.core.records import as_dict
from patchops.cli.render.lint import lint_summary
from patchops.lint.codes import old_codes

# The distribution is vllm-patchops: `patchops` on PyPI is an unrelated project.
PROJECT_URL = "https://pypi.org/project/vllm-patchops/"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def print_lint(console, results, output_format: str, *, unsafe: bool = False,
               fixed: Optional[int] = None, verbosity: int = 0) -> None:
    """Print lint's results in `output_format`: text, concise, json, sarif or github."""
    from patchops.cli.render.lint import lint_text

    if output_format == "json":
        print(lint_json(results))
    elif output_format == "sarif":
        from patchops import api

        print(lint_sarif(results, api.rules()))
    elif output_format == "github":
        sys.stdout.write(lint_github(results))
    else:
        lint_text(console, results, concise=output_format == "concise", unsafe=unsafe, fixed=fixed,
                  verbosity=verbosity)


def lint_json(results) -> str:
    diagnostics = [d for result in results for d in result.diagnostics]
    document = {
        "vllm_version": results[0].vllm_version if results else None,
        "diagnostics": [_diagnostic_dict(d) for d in diagnostics],
        "summary": lint_summary(diagnostics),
        "inputs": [{"file": r.path, "vllm_version": r.vllm_version or None,
                    "facts_origin": r.facts_origin or None, "linted": r.error is None,
                    "error": r.error, "assumed_hardware": r.hardware,
                    "model_config": r.model_config,
                    "not_run": [{"rule": n.rule, "reason": n.reason, "hint": n.hint} for n in r.not_run],
                    "launch": r.launch, "notes": list(r.notes), "no_launch": r.no_launch}
                   for r in results],
    }
    return json.dumps(document, indent=2)


def _diagnostic_dict(d) -> dict:
    """Return a finding as JSON; `fix` as ruff has it: message, applicability, edits (or null)."""
    data = as_dict(d)
    data["fields"] = list(d.fields)
    del data["autofix"]
    data["fix"] = _fix_dict(d)
    return data


def _fix_dict(d) -> Optional[dict]:
    if d.fix is None and d.autofix is None:
        return None
    found = d.autofix
    return {"message": d.fix,
            "applicability": found.applicability if found else "display-only",
            "edits": [{"content": e.content,
                       "location": {"row": e.start_at[0], "column": e.start_at[1]},
                       "end_location": {"row": e.end_at[0], "column": e.end_at[1]},
                       **({"file": e.file} if e.file else {})}
                      for e in (found.edits if found else ())]}


def _sarif_fixes(d) -> dict:
    """Return SARIF's `fixes` (3.55) for a finding `lint --fix` can fix, else {}."""
    if d.autofix is None:
        return {}
    files = dict.fromkeys(e.file or d.file for e in d.autofix.edits)   # an edit names its own file
    return {"fixes": [{
        "description": {"text": d.autofix.title},
        "artifactChanges": [{
            "artifactLocation": {"uri": sarif_uri(file)},
            "replacements": [{
                "deletedRegion": {"startLine": e.start_at[0], "startColumn": e.start_at[1],
                                  "endLine": e.end_at[0], "endColumn": e.end_at[1]},
                "insertedContent": {"text": e.content},
            } for e in d.autofix.edits if (e.file or d.file) == file],
        } for file in files],
    }]}


def lint_sarif(results, rules) -> str:
    """Return a SARIF 2.1.0 log with one run and the rule catalogue as the driver's rules."""
    diagnostics = [d for result in results for d in result.diagnostics]
    index = {rule.code: i for i, rule in enumerate(rules)}
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "patchops",
                "version": __version__,
                "informationUri": PROJECT_URL,
                "rules": [{
                    "id": rule.code,
                    **({"deprecatedIds": list(old_codes(rule.code))} if old_codes(rule.code) else {}),
                    "name": rule.name,
                    "shortDescription": {"text": rule.summary()},
                    "fullDescription": {"text": rule.docs()},
                    "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
                    "properties": {"vllm_versions": rule.versions, "fix": rule.fixable},
                } for rule in rules],
            }},
            "results": [{
                "ruleId": d.code,
                **({"ruleIndex": index[d.code]} if d.code in index else {}),
                "level": SARIF_LEVEL[d.severity],
                "message": {"text": _with_fix(d)},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": sarif_uri(d.file)},
                    "region": {"startLine": d.line, "startColumn": d.column},
                }}],
                "properties": {"fields": list(d.fields), "vllm_message": d.vllm_message,
                               "fix": d.autofix.applicability if d.autofix else None},
                **_sarif_fixes(d),
            } for d in diagnostics],
            "invocations": [{"executionSuccessful": all(r.error is None for r in results)}],
        }],
    }
    return json.dumps(log, indent=2)


def sarif_uri(path: str) -> str:
    """Return `path` as a URI reference: `file:` for absolute paths, percent-encoded otherwise.

    `<command>` and `<stdin>` become `%3Ccommand%3E`, a relative reference code-scanning
    tools accept; a space becomes `%20`.
    """
    from pathlib import PurePosixPath
    from urllib.parse import quote

    if path.startswith("/"):
        return PurePosixPath(path).as_uri()
    return quote(path.replace("\\", "/"))


def lint_github(results) -> str:
    """Return GitHub Actions workflow commands, one annotation per finding."""
    lines = []
    for result in results:
        for d in result.diagnostics:
            message = _with_fix(d, lines=True)
            lines.append(f"::{GITHUB_COMMAND[d.severity]} file={_gh_prop(d.file)},line={d.line},"
                         f"col={d.column},title={_gh_prop(f'{d.code} {d.name}')}::{_gh_data(message)}")
    return "".join(line + "\n" for line in lines)


def _with_fix(d, lines: bool = False) -> str:
    """Return the headline, the why and the fix as one text, for formats with one message field.

    GitHub shows an annotation's lines as written, so with `lines` each part is a line.
    """
    text = d.message.rstrip(".")
    if d.explanation:
        text += ("\n" if lines else ": ") + d.explanation.rstrip(".")
    return text + ("\n" if lines else ". ") + f"Fix: {d.fix}" if d.fix else text


def _gh_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(value: str) -> str:
    return _gh_data(value).replace(":", "%3A").replace(",", "%2C")
