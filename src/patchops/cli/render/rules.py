"""What `patchops rules` prints: the rule table, one rule's docs, or the catalogue as JSON."""

from __future__ import annotations

import json
import textwrap

from patchops.cli.output import Line, Output
from patchops.cli.render.lint import SEVERITY_STYLE
from patchops.lint.codes import CATEGORIES, old_codes


def rules_table(console: Output, rules) -> None:
    """Print each category's rules: a heading line (code, name, severity, vLLM versions) and its summary."""
    width = max(len(rule.name) for rule in rules)
    for category, members in by_category(rules):
        console.print(Line(f"{category.prefix} {category.name}: {category.description}", style="dim"))
        for rule in members:
            _rule_line(console, rule, width)


def by_category(rules):
    """Return (category, its rules in the given order) for each category of lint/codes.py holding some."""
    return [(category, [rule for rule in rules if rule.category() == category]) for category in CATEGORIES
            if any(rule.category() == category for rule in rules)]


def _rule_line(console: Output, rule, width: int) -> None:
    """Print one rule: code, name, severity, vLLM versions, fix kind, then its summary indented."""
    line = Line(f"{rule.code}  ", style="bold")
    line.append(f"{rule.name:<{width}}  ")
    line.append(f"{_severities(rule):<12}  ", style=SEVERITY_STYLE[rule.severity])
    line.append(f"vLLM {_versions(rule.versions)}", style="dim")
    if rule.fixable:
        line.append(f"  fix: {rule.fixable}", style="green")
    console.print(line)
    summary = textwrap.fill(rule.summary(), max(console.width, 40), initial_indent=" " * 7,
                            subsequent_indent=" " * 7)
    console.print(Line(summary))


def _severities(rule) -> str:
    """Return `error`, or `error|info` for a rule that says info when the facts cannot tell."""
    return f"{rule.severity}|{rule.unsure_severity}" if rule.unsure_severity else rule.severity


def _fix_kind(rule) -> str:
    """Say whether and how `lint --fix` fixes the rule's findings."""
    if rule.fixable == "safe":
        return "fix: safe, when exact (`lint --fix`)"
    if rule.fixable == "unsafe":
        return "fix: unsafe, when exact (`lint --fix --unsafe-fixes`)"
    return "fix: none (the finding suggests one)"


def _versions(spec: str) -> str:
    return "all versions" if spec in ("", ">=0") else spec


def rule_json(rules) -> str:
    return json.dumps([{
        "code": rule.code, "name": rule.name, "severity": rule.severity,
        "unsure_severity": rule.unsure_severity, "versions": rule.versions,
        "summary": rule.summary(), "docs": rule.docs(), "vllm_message": rule.vllm_message,
        "fix": rule.fixable, "category": rule.category().name, "old_codes": list(old_codes(rule.code)),
    } for rule in rules], indent=2)


def rule_docs(console: Output, rule) -> None:
    """Print a rule's documentation: rendered Markdown on a terminal, the raw text in a pipe."""
    text = rule_markdown(rule)
    if console.is_terminal:
        from rich.markdown import Markdown

        console.rich().print(Markdown(text))
    else:
        console.print(text)


def rule_markdown(rule) -> str:
    """Return a rule's documentation as Markdown: docs, vLLM's message, first failing and passing example."""
    formerly = f" (formerly {', '.join(old_codes(rule.code))})" if old_codes(rule.code) else ""
    text = (f"# {rule.code} {rule.name}{formerly}\n\nCategory: {rule.category().prefix} {rule.category().name}; "
            f"severity: {_severities(rule)}; "
            f"vLLM {_versions(rule.versions)}; {_fix_kind(rule)}\n\n{rule.docs()}")
    if rule.vllm_message:
        text += f"\n\n## vLLM message prevented\n{rule.vllm_message}"
    for title, examples in (("Failing example", rule.INVALID), ("Passing example", rule.VALID)):
        if examples:
            text += f"\n\n## {title}\n{_example(examples[0], failing=examples is rule.INVALID)}"
    return text


_FENCE = {"spec": "yaml", "config": "yaml", "command": "sh"}
_INPUT = {"spec": "a serve spec", "config": "a vLLM --config file", "command": "a launch command"}


def _example(example, failing: bool) -> str:
    """Return one example as Markdown: what it is, on which release, its text, where it fails."""
    said = f"{_INPUT.get(example.kind, example.kind)}, linted against vLLM {example.vllm}"
    if example.model is not None:
        said += ", with the model's config.json in the example"
    if failing and example.at is not None:
        said += f"; flagged at line {example.at[0]}, column {example.at[1]}"
    fence = _FENCE.get(example.kind, "")
    return f"{said}:\n\n```{fence}\n{example.text.rstrip()}\n```"


def rules_markdown_table(rules) -> str:
    """Return the README's rule tables, one per category: code, name, severity, vLLM versions, stage."""
    tables = []
    for category, members in by_category(rules):
        rows = [f"**{category.prefix} {category.name}**: {category.description}", "",
                "| code | name | severity | vLLM | stage |", "| --- | --- | --- | --- | --- |"]
        for rule in members:
            severity = _severities(rule).replace("|", "\\|")
            rows.append(f"| {rule.code} | {rule.name} | {severity} | {_versions(rule.versions)} | {rule.stage} |")
        tables.append("\n".join(rows) + "\n")
    return "\n".join(tables)
