"""What `patchops lint` prints on a terminal: the full form with snippets, or one line each.

Also the summary line every text run ends with, and `lint --engine`'s verdict under the
static findings. The machine formats (JSON, SARIF, GitHub) are in cli/render/formats.py.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from patchops.cli.output import Line, Output
from patchops.cli.render.snippet import snippet

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def lint_summary(diagnostics) -> Dict[str, int]:
    summary = {"error": 0, "warning": 0, "info": 0}
    for diagnostic in diagnostics:
        summary[diagnostic.severity] += 1
    return summary


def lint_text(console: Output, results, *, concise: bool = False, unsafe: bool = False,
              fixed: Optional[int] = None, verbosity: int = 0) -> None:
    """Print each finding as `file:line:col: severity: headline [CODE name]`, then a summary.

    The full form adds the source line with a caret under the column, then the why, the fix
    (marked `(--fix)` when `lint --fix` makes it) and the vLLM message, indented and wrapped
    to the width; `concise` prints the first line alone (`[CODE]` only), whole, as
    `ruff --output-format concise` does. `fixed` is how many fixes `lint --fix` made;
    `unsafe` whether unsafe fixes count as fixable; `verbosity` -1 hides the notes, 1 lists
    them per input.
    """
    width = console.width
    for result in results:
        lines = result.source_lines
        if result.launch and not concise:   # which launch of a deploy file these findings are of
            console.print(Line(f"{result.path}: {result.launch}, vLLM {result.vllm_version}", style="dim"))
        for d in result.diagnostics:
            tag = f"[{d.code}]" if concise else f"[{d.code} {d.name}]"
            line = Line(f"{d.file}:{d.line}:{d.column}:", style="bold")
            line.append(f" {d.severity}:", style=SEVERITY_STYLE[d.severity])
            line.append(f" {d.message} ")
            line.append(tag, style="dim")
            console.print(line)
            if concise:
                continue
            shown = result.sources.get(d.file, lines)     # a `--config FILE`'s finding: its lines
            if 0 < d.line <= len(shown):
                for row in snippet(shown[d.line - 1], d.line, d.column, width):
                    console.print(Line(row, style="dim"))
            if d.explanation:
                _wrapped(console, "  ", d.explanation, width, "")
            if d.fix:
                _wrapped(console, f"  fix{_fix_mark(d, unsafe)}: ", d.fix, width, "green")
            if d.vllm_message:
                _wrapped(console, "  vLLM: ", d.vllm_message, width, "dim")
    if fixed is not None:
        remaining = sum(len(r.diagnostics) for r in results)
        console.print(Line(f"fixed {_plural(fixed, 'finding')}, {remaining} remaining", style="bold"))
    if verbosity >= 0:
        for hardware in sorted({r.hardware for r in results if r.hardware}):
            console.print(Line(f"assumed hardware: {hardware}", style="dim"))
        for note in skipped_notes(results, verbose=verbosity > 0) + input_notes(results, concise=concise):
            _wrapped(console, "", note, width, "dim")
    console.print(Line(lint_summary_line(results, unsafe=unsafe), style="dim"))


def _wrapped(console: Output, lead: str, text: str, width: int, style: str) -> None:
    """Print `lead` + `text` wrapped to `width`, later lines indented under the lead.

    Words are never broken: a flag name or a path longer than the room stays whole.
    """
    import textwrap

    rows = textwrap.wrap(" ".join(text.split()), width=max(width, 40), initial_indent=lead,
                         subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
    for row in rows:
        console.print(Line(row, style=style))


def _fix_mark(d, unsafe: bool) -> str:
    """Return ` (--fix)` or ` (--unsafe-fixes)` for a finding `lint --fix` can fix."""
    if d.autofix is None:
        return ""
    return " (--fix)" if d.autofix.applicability == "safe" or unsafe else " (--unsafe-fixes)"


def fixable_note(diagnostics, unsafe: bool = False) -> str:
    """Return `; 2 fixable with --fix (1 more with --unsafe-fixes)`, or "" when none is."""
    safe = sum(d.autofix is not None and (d.autofix.applicability == "safe" or unsafe) for d in diagnostics)
    more = sum(d.autofix is not None for d in diagnostics) - safe
    if not safe:
        return f"; {more} fixable with --fix --unsafe-fixes" if more else ""
    extra = f" ({more} more with --unsafe-fixes)" if more else ""
    return f"; {safe} fixable with --fix{extra}"


def fix_diff_summary(fixes) -> str:
    """Return what `lint --diff` would do: `would fix 3 findings in 2 files, 1 remaining`."""
    changed = [f for f in fixes if f.changed]
    remaining = sum(len(f.result.diagnostics) for f in fixes)
    return (f"would fix {_plural(sum(f.fixed for f in fixes), 'finding')} in "
            f"{_plural(len(changed), 'file')}, {remaining} remaining")


def input_notes(results, concise: bool = False) -> List[str]:
    """Return what inputs left unknown (a Secret's value, a `latest` tag), and the files that
    hold no vLLM launch in one line: `2 files hold no vLLM launch: a.yaml (a Helm values file), ...`."""
    notes = [] if concise else [f"{result.path}: {note}" for result in results for note in result.notes]
    empty = [result for result in results if result.no_launch]
    if empty:
        what = "" if concise else ": " + "; ".join(f"{r.path} ({r.no_launch})" for r in empty)
        notes.append(f"{_plural(len(empty), 'file')} {'holds' if len(empty) == 1 else 'hold'} "
                     f"no vLLM launch{what}")
    return notes


def lint_summary_line(results, unsafe: bool = False) -> str:
    """Return `2 errors, 1 warning in 3 files; against vLLM 0.8.5: 2 files, ...; 1 not linted`."""
    results = [result for result in results if not result.no_launch]
    counts = lint_summary([d for result in results for d in result.diagnostics])
    text = ", ".join(_plural(counts[key], key) for key in ("error", "warning", "info"))
    against: Dict[str, int] = {}
    for result in results:
        if result.error is None:
            key = f"vLLM {result.vllm_version} from {_origin(result.facts_origin)}"
            against[key] = against.get(key, 0) + 1
    text += f" in {_plural(len(results), 'input')}"
    if against:
        text += "; linted against " + ", ".join(
            key if len(against) == 1 else f"{key} ({n})" for key, n in against.items())
    failed = sum(result.error is not None for result in results)
    if failed:
        text += f"; {failed} not linted"
    text += fixable_note([d for result in results for d in result.diagnostics], unsafe)
    return text


def not_run(result) -> List[Tuple[str, str, Tuple[str, ...]]]:
    """Return why checks did not run for one input: (what was missing, the hint, the rules)."""
    reasons: Dict[Tuple[str, str], List[str]] = {}
    for missing in result.not_run:
        reasons.setdefault((missing.reason, missing.hint), []).append(missing.rule)
    return [(what, hint, tuple(rules)) for (what, hint), rules in reasons.items()]


def skipped_notes(results, verbose: bool = False) -> List[str]:
    """Return the checks that did not run: one line for the whole run, or with `verbose` one
    line per input and reason naming the checks.

    A batch of specs without their model's config.json used to repeat a 500-character list
    of rule names for every file, burying the findings: `13 checks did not run for 2 inputs: no model
    config.json (pass --model-config FILE); -v lists them`.
    """
    found = [(result.path, reason) for result in results for reason in not_run(result)]
    if verbose:
        return [f"{path}: {len(rules)} {_noun(len(rules))} did not run, {what} ({hint}): "
                f"{', '.join(rules)}" for path, (what, hint, rules) in found]
    if not found:
        return []
    checks = {rule for _, (_, _, rules) in found for rule in rules}
    inputs = {path for path, _ in found}
    why = "; ".join(f"{what} ({hint})" for what, hint in dict.fromkeys((w, h) for _, (w, h, _) in found))
    return [f"{len(checks)} {_noun(len(checks))} did not run for {_plural(len(inputs), 'input')}: "
            f"{why}; -v lists them"]


def _noun(count: int) -> str:
    return "check" if count == 1 else "checks"


def _origin(origin: str) -> str:
    """Return where facts came from in a few words: `shipped facts` or the copy's folder."""
    return "shipped facts" if origin.startswith("shipped facts") else origin


def _plural(count: int, noun: str) -> str:
    if noun == "info":
        return f"{count} info"
    return f"{count} {noun}" + ("" if count == 1 else "s")


def engine_text(console: Output, found) -> None:
    """Print vLLM's own verdict under the static findings, with its time and whether they agree."""
    verdict = found.verdict
    where = f"vLLM {found.vllm_version or '?'} via {found.python}, {verdict.seconds:g} s"
    if not verdict.ran:   # no verdict: nothing to agree or disagree with
        console.print(Line.assemble((f"{found.path}: engine: ", "bold"), ("could not run", "bold red"),
                                    f" ({where}): {verdict.message}"))
        return
    if verdict.profile is not None:
        gpu = verdict.profile
        where += (f"; {found.profiled_because}, so it answered a declared GPU profile: "
                  f"{gpu['count']} x {gpu['name']}, cc {gpu['capability'][0]}.{gpu['capability'][1]}, "
                  f"{gpu['memory_gib']:g} GiB")
    if verdict.ok:
        keys = ("engine", "chunked_prefill", "max_num_batched_tokens", "max_num_seqs", "max_model_len")
        values = ", ".join(f"{k}={verdict.resolved.get(k)}" for k in keys if k in verdict.resolved)
        console.print(Line.assemble((f"{found.path}: engine: ", "bold"), ("ok", "green"),
                                    f" ({where}): {values}"))
    else:
        console.print(Line.assemble((f"{found.path}: engine: ", "bold"), ("error", "bold red"),
                                    f" at {verdict.stage} ({where}): {verdict.error_type}: {verdict.message}"))
    if found.agrees:
        console.print(Line("  agrees with the static lint", style="dim"))
    else:
        said = f"{found.static_errors} error(s)" if found.static_errors else "no error"
        console.print(Line(f"  disagrees with the static lint, which found {said}", style="yellow"))
