"""What `patchops explain` prints: each effective setting, its value and where it comes from."""

from __future__ import annotations

import json

from patchops.cli.output import Line, Output


def explain_table(console: Output, result) -> None:
    """Print setting, value and origin per row; then why, for every value that is not a plain default."""
    from patchops.lint.vllm.wording import sizes_text

    if result.errors:
        named = "; ".join(f"{d.code} {d.message}" for d in result.errors)
        console.print(Line.assemble(("error:", "bold red"), f" vLLM {result.vllm_version} will not start "
                                    f"this config: {named} (`patchops lint` says why)"))
    console.print(Line(f"{result.path}: vLLM {result.vllm_version} ({result.facts_origin})", style="bold"))
    cells, notes = [], []
    for row in result.rows:
        if row.value is None:   # vLLM decides it when it starts (the GPU, the model)
            value = "decided at start-up"
        else:
            value = sizes_text(row.value) if isinstance(row.value, list) else str(row.value)
        if not row.certain and row.value is not None:
            value += " (or " + ", ".join(map(str, row.alternatives)) + ")" if row.alternatives else " (likely)"
        cells.append((row.field, value, row.origin + (f" ({row.where})" if row.where else "")))
        if not row.origin.startswith("vLLM ") and row.origin != "set by you" or not row.certain:
            notes.append(f"{row.field}: {row.reason}")
    widths = [max(len(c[i]) for c in cells) for i in (0, 1)]
    for name, value, origin in cells:
        console.print(Line(f"  {name:<{widths[0]}}  {value:<{widths[1]}}  ").append(origin, style="dim"))
    for note in notes:
        console.print(Line(note))
    if result.hardware:
        console.print(Line(f"assumed hardware: {result.hardware}", style="dim"))


def explain_json(result) -> str:
    """Return the effective settings keyed by vLLM's field names, each with value and origin."""
    return json.dumps({"file": result.path, "vllm_version": result.vllm_version,
                       "facts_origin": result.facts_origin, "assumed_hardware": result.hardware,
                       "errors": [{"code": d.code, "message": d.message, "line": d.line,
                                   "column": d.column} for d in result.errors],
                       "settings": {row.field: row.to_dict() for row in result.rows}}, indent=2)
