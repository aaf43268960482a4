"""The `patchops` command: parse arguments, call patchops.api, render, exit. Nothing else."""

from __future__ import annotations

import functools
import os
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.text import Text

from patchops import api, render
from patchops.errors import PatchopsError, UsageError

OK = 0
PROBLEMS_FOUND = 1
USAGE_OR_INPUT_ERROR = 2
DRIFTED = 3
INTERNAL_ERROR = 70  # EX_SOFTWARE

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Locate, patch, roll back and lint vLLM installs without importing vLLM.")


def _console() -> Console:
    return Console(highlight=False)


def command(*args, **kwargs):
    """Register a command whose PatchopsError becomes `error: <message>` and its exit code."""

    def register(function):
        @functools.wraps(function)
        def run(*a, **kw):
            try:
                return function(*a, **kw)
            except BrokenPipeError:  # `patchops status --json | head`: the reader left, nothing to say
                _silence_stdout()
                raise typer.Exit(OK)
            except PatchopsError as error:
                _error(error.message)
                raise typer.Exit(error.exit_code)
            except OSError as error:
                name = f"{error.filename}: " if error.filename else ""
                _error(f"{name}{error.strerror or error}")
                raise typer.Exit(USAGE_OR_INPUT_ERROR)
            except Exception as error:  # a bug: one paragraph, the traceback on request
                if os.environ.get("PATCHOPS_DEBUG") or _is_cli_flow(error):
                    raise
                _error(f"internal error ({type(error).__name__}: {error}); nothing was left "
                       "half-written. Run again with PATCHOPS_DEBUG=1 for the traceback and report it.")
                raise typer.Exit(INTERNAL_ERROR)

        return app.command(*args, **kwargs)(run)

    return register


def _error(message: str) -> None:
    """Print `error: <message>` to stderr; the message is text, never rich markup."""
    Console(stderr=True, highlight=False).print(Text.assemble(("error:", "bold red"), " ", message),
                                                soft_wrap=True)


def _is_cli_flow(error: Exception) -> bool:
    """Say whether `error` is typer's/click's own control flow (Exit, Abort, usage errors)."""
    return type(error).__module__.split(".")[0] in ("typer", "click")


PythonOption = typer.Option(None, "--python", help="Interpreter that will run vLLM (default: this one).")
RootOption = typer.Option([], "--root", help="Extra vendor root holding a vLLM copy (repeatable).")
SiteOption = typer.Option([], "--site", help="Only these site-packages folders (repeatable).")
PatchsetDirOption = typer.Option([], "--patchsets", help="Extra folder of patchset YAML files.")
JsonOption = typer.Option(False, "--json", help="Machine-readable output.")


@command("locate")
def locate_command(python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                   json_out: bool = JsonOption) -> None:
    """List every vLLM copy on the Python path and vendor roots, its version, and which one wins."""
    location = api.locate(python=python, roots=root)
    console = _console()
    if json_out:
        render.print_json(console, render.location_dict(location))
    else:
        render.location_text(console, location)
    raise typer.Exit(OK if location.copies else PROBLEMS_FOUND)


@command("patchsets")
def patchsets_command(patchsets: List[Path] = PatchsetDirOption, json_out: bool = JsonOption) -> None:
    """List the patchsets apply can use: name, vLLM versions, summary."""
    found = api.patchsets(patchsets)
    console = _console()
    if json_out:
        render.print_json(console, render.patchset_dicts(found))
    else:
        render.patchsets_text(console, found)


@command("apply")
def apply_command(names: List[str] = typer.Argument(..., help="Patchset names, e.g. corex-eager-allreduce."),
                  dry_run: bool = typer.Option(False, "--dry-run", help="Show the diff, write nothing."),
                  yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
                  force: bool = typer.Option(False, "--force",
                                             help="Take files changed since patchops wrote them (a vLLM upgrade) as the new originals."),
                  python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                  site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption) -> None:
    """Apply named patchsets to every vLLM copy as one transaction, backing up originals."""
    console = _console()
    plan = api.plan_apply(names, python=python, roots=root, sites=site, patchset_dirs=patchsets,
                          force=force, check=not dry_run)
    mismatches = api.mismatches(plan) if dry_run and plan.problems else ()
    render.plan_text(console, plan, api.diff(plan) if dry_run else "", mismatches)
    if dry_run:
        raise typer.Exit(DRIFTED if plan.problems else OK)
    if plan.changes and not yes and not typer.confirm(f"write {len(plan.changes)} file(s)?", default=False):
        console.print("not confirmed: nothing written")
        raise typer.Exit(PROBLEMS_FOUND)
    render.apply_report_text(console, api.commit_apply(plan))


@command("status")
def status_command(names: List[str] = typer.Argument(None, help="Patchsets to report (default: all)."),
                   python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                   site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption,
                   json_out: bool = JsonOption) -> None:
    """Show, per copy and patchset: applied, not applied, satisfied, not applicable or drifted."""
    rows = api.status(names or None, python=python, roots=root, sites=site, patchset_dirs=patchsets)
    console = _console()
    if json_out:
        render.print_json(console, render.status_dicts(rows))
    else:
        render.status_text(console, rows)
    raise typer.Exit(DRIFTED if api.any_drift(rows) else OK)


@command("rollback")
def rollback_command(names: List[str] = typer.Argument(None, help="Patchsets to roll back."),
                     all_: bool = typer.Option(False, "--all", help="Roll back every patchset."),
                     force: bool = typer.Option(False, "--force",
                                                help="Restore originals even over later edits (kept in the store)."),
                     python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                     site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption) -> None:
    """Restore byte-identical originals, keeping other patchsets applied to the same files."""
    if bool(names) == all_:
        raise UsageError("name the patchsets to roll back, or pass --all (not both)")
    report = api.rollback(None if all_ else names, force=force, python=python, roots=root,
                          sites=site, patchset_dirs=patchsets)
    render.rollback_report_text(_console(), report)


@command("verify")
def verify_command(python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                   site: List[Path] = SiteOption, json_out: bool = JsonOption) -> None:
    """Check every file of each vLLM copy against the hashes pip recorded at install (RECORD)."""
    results = api.verify(python=python, roots=root, sites=site)
    console = _console()
    if json_out:
        render.print_json(console, render.verify_dicts(results))
    else:
        render.verify_text(console, results)
    if api.any_difference(results):
        raise typer.Exit(DRIFTED)
    raise typer.Exit(USAGE_OR_INPUT_ERROR if any(r.error for r in results) else OK)


@command("capture")
def capture_command(name: str = typer.Argument(..., help="Name of the new patchset, kebab-case."),
                    files: List[Path] = typer.Argument(..., help="Hand-edited files inside a vLLM copy."),
                    base: Optional[Path] = typer.Option(None, "--base", help="The pristine text of the one FILE."),
                    from_wheel: bool = typer.Option(False, "--from-wheel",
                                                    help="Take the pristine text from this vLLM's PyPI wheel, checked against RECORD."),
                    out: Path = typer.Option(Path("patchsets"), "--out", help="Folder to write NAME.yaml in."),
                    vllm: Optional[str] = typer.Option(None, "--vllm", help="vLLM range of the patchset (default: >= the copy's)."),
                    force: bool = typer.Option(False, "--force", help="Replace an existing NAME.yaml."),
                    no_record: bool = typer.Option(False, "--no-record",
                                                   help="Do not record the edited files as patched by NAME.")) -> None:
    """Turn hand edits of installed vLLM files into a patchset that reproduces them byte for byte."""
    result = api.capture(name, files, base=base, from_wheel=from_wheel, out_dir=out, versions=vllm,
                         force=force, record=not no_record)
    render.capture_text(_console(), result)


@command("diff")
def diff_command(target: Optional[str] = typer.Argument(None, help="A patchset name or a file (default: every patched file)."),
                 python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                 site: List[Path] = SiteOption) -> None:
    """Show patched or drifted files as unified diffs against the originals patchops keeps."""
    render.file_diffs(_console(), api.file_diffs(target, python=python, roots=root, sites=site))


@command("export")
def export_command(name: str = typer.Argument(..., help="The patchset to export."),
                   output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the patch here."),
                   python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                   site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption) -> None:
    """Write what a patchset does to a copy as a patch file for `git apply` or `patch -p1`."""
    text = api.export(name, python=python, roots=root, sites=site, patchset_dirs=patchsets)
    if output is None:
        render.raw(text)
    else:
        api.write_text(output, text)
        _console().print(f"wrote {output}", soft_wrap=True, highlight=False)


class Format(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


HardwareOption = typer.Option(
    None, "--hardware", help="GPUs the config runs on, e.g. 4xBI-V100:32GiB:cc7.5:corex or "
    "'{gpus: 4, memory_gib: 32}'; fills what the config leaves unstated.")
DetectHardwareOption = typer.Option(
    True, "--detect-hardware/--no-detect-hardware",
    help="Without --hardware, read this box's GPUs (nvidia-smi, ixsmi, rocm-smi, amd-smi, npu-smi).")


def _hardware(text: Optional[str], detect: bool):
    """Return the stated hardware, this box's (when asked and found), or None."""
    from patchops import hardware

    if text is not None:
        return hardware.parse_hardware(text)
    return hardware.detect() if detect else None


@command("lint")
def lint_command(files: List[Path] = typer.Argument(None, help="serve.yaml specs, vLLM --config files or launch .sh files."),
                 cmd: Optional[str] = typer.Option(None, "--cmd", help="A launch command line to lint."),
                 vllm: Optional[Path] = typer.Option(None, "--vllm", help="site-packages (or vllm/) of the copy that will run."),
                 vllm_version: Optional[str] = typer.Option(None, "--vllm-version", help="Lint against shipped facts of this release."),
                 output_format: Format = typer.Option(Format.text, "--format"),
                 select: List[str] = typer.Option([], "--select", help="Only these codes (prefixes ok)."),
                 ignore: List[str] = typer.Option([], "--ignore", help="Skip these codes (prefixes ok)."),
                 strict: bool = typer.Option(False, "--strict", help="Warnings fail too."),
                 exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even with findings."),
                 hardware: Optional[str] = HardwareOption,
                 detect_hardware: bool = DetectHardwareOption) -> None:
    """Predict what vLLM would reject or silently degrade at launch, before loading a model."""
    if not files and cmd is None:
        raise UsageError("give a serve spec, vLLM config or launch script to lint, or --cmd COMMAND")
    inputs = [dict(path=f) for f in files or ()] + ([dict(command=cmd)] if cmd is not None else [])
    assumed = _hardware(hardware, detect_hardware)
    results = [api.lint(**given, vllm_path=vllm, vllm_version=vllm_version, select=select,
                        ignore=ignore, hardware=assumed) for given in inputs]
    console = _console()
    if output_format is Format.json:
        print(render.lint_json(results))
    elif output_format is Format.sarif:
        print(render.lint_sarif(results, api.rules()))
    elif output_format is Format.github:
        print(render.lint_github(results))
    else:
        render.lint_text(console, results)
    failing = sum(r.errors + (r.warnings if strict else 0) for r in results)
    raise typer.Exit(PROBLEMS_FOUND if failing and not exit_zero else OK)


@command("explain")
def explain_command(file: Optional[Path] = typer.Argument(None, help="A serve spec, vLLM --config file or launch .sh file."),
                    cmd: Optional[str] = typer.Option(None, "--cmd", help="A launch command line instead of FILE."),
                    vllm: Optional[Path] = typer.Option(None, "--vllm", help="site-packages (or vllm/) of the copy that will run."),
                    vllm_version: Optional[str] = typer.Option(None, "--vllm-version", help="Use shipped facts of this release."),
                    json_out: bool = JsonOption,
                    output_format: Optional[Format] = typer.Option(None, "--format", help="json: same as --json."),
                    hardware: Optional[str] = HardwareOption,
                    detect_hardware: bool = DetectHardwareOption) -> None:
    """Show the settings vLLM will really run with, and where each value comes from."""
    if (file is None) == (cmd is None):
        raise UsageError("give one serve spec, vLLM config or launch script to explain, or --cmd COMMAND")
    result = api.explain(file, command=cmd, vllm_path=vllm, vllm_version=vllm_version,
                         hardware=_hardware(hardware, detect_hardware))
    if json_out or output_format is Format.json:
        print(render.explain_json(result))
    else:
        render.explain_table(_console(), result)


@command("launch")
def launch_command(args: List[str] = typer.Argument(None, help="FILE, then `--` and extra vLLM arguments."),
                   cmd: Optional[str] = typer.Option(None, "--cmd", help="A launch command line instead of FILE."),
                   python: Optional[str] = PythonOption,
                   print_only: bool = typer.Option(False, "--print", help="Print the command instead of running it."),
                   strict: bool = typer.Option(False, "--strict", help="Warnings stop the launch too."),
                   hardware: Optional[str] = HardwareOption,
                   detect_hardware: bool = DetectHardwareOption) -> None:
    """Lint against the copy that will run, stop on errors, else run exactly that vLLM command."""
    from patchops.launching import exec_launch

    given = list(args or ())
    if cmd is None and not given:
        raise UsageError("give the serve spec, vLLM config or launch script to launch, or --cmd COMMAND")
    source = dict(command=cmd) if cmd is not None else dict(path=Path(given.pop(0)))
    result, launch = api.plan_launch(**source, python=python, extra=given,
                                     hardware=_hardware(hardware, detect_hardware))
    if result.diagnostics:
        render.lint_text(_console(), [result])
    if result.errors or (strict and result.warnings):
        raise typer.Exit(PROBLEMS_FOUND)
    if print_only:
        print(launch.shell())
        raise typer.Exit(OK)
    exec_launch(launch)


@command("rules")
def rules_command(code: Optional[str] = typer.Argument(None, help="A rule code or name."),
                  json_out: bool = JsonOption) -> None:
    """List every lint rule, or print one rule's documentation."""
    found = api.rules(code)
    console = _console()
    if json_out:
        print(render.rule_json(found))
    elif code is None:
        render.rules_table(console, found)
    else:
        render.rule_docs(console, found[0])


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main() -> None:
    """Run the CLI (console script and `python -m patchops`)."""
    try:
        app()
    except SystemExit:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
        raise
