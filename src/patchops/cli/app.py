"""The `patchops` command: parse arguments, call patchops.api, render, exit. Nothing else.

Over 400 lines because it holds every command's options and help; each command body stays a
few lines over api/ and cli/render/copies.py.
"""

# No `from __future__ import annotations`: typer reads every command's annotations on each
# run, and string annotations cost an eval each (a tenth of a cached lint).

import copy
import functools
import os
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from patchops import api
from patchops.cli.render import copies as render
# The exit codes are core's (the api returns them); commands and cli/fleet.py take them from here.
from patchops.core.errors import (DRIFTED, IO_ERROR, OK, PROBLEMS_FOUND, USAGE_OR_INPUT_ERROR,
                                  PatchopsError, UsageError)
from patchops.cli.output import Line, Output

NODES_DISAGREE = 6   # fleet: nodes hold different vLLM, files, patch states or lint verdicts
NODE_FAILED = 7      # fleet: a node refused, failed or died; the message says what became of it
INTERNAL_ERROR = 70  # EX_SOFTWARE
INTERRUPTED = 130    # 128 + SIGINT, as shells report Ctrl-C

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Locate, patch, roll back and lint vLLM installs without importing vLLM.")


def _print_version(value: bool) -> None:
    if value:
        from patchops import __version__

        print(f"patchops {__version__}")
        raise typer.Exit(OK)


@app.callback()
def _main_options(version: bool = typer.Option(False, "--version", callback=_print_version,
                                               is_eager=True, help="Print the version and exit.")) -> None:
    """Locate, patch, roll back and lint vLLM installs without importing vLLM."""


def _console() -> Output:
    return Output()


def command(*args, group: Optional[typer.Typer] = None, **kwargs):
    """Register a command (on `group`, default the top level) whose PatchopsError becomes
    `error: <message>` and its exit code."""

    def register(function):
        @functools.wraps(function)
        def run(*a, **kw):
            _printable_streams()
            try:
                return function(*a, **kw)
            except BrokenPipeError:  # `patchops status --json | head`: the reader left, nothing to say
                _silence_stdout()
                raise typer.Exit(OK)
            except (KeyboardInterrupt, typer.Abort):  # Ctrl-C, also at a prompt
                _error("interrupted")
                raise typer.Exit(INTERRUPTED)
            except PatchopsError as error:
                _error(error.message)
                raise typer.Exit(error.exit_code)
            except OSError as error:
                name = f"{error.filename}: " if error.filename else ""
                _error(f"{name}{error.strerror or error}")
                raise typer.Exit(IO_ERROR)
            except Exception as error:  # a bug: one paragraph, the traceback on request
                if os.environ.get("PATCHOPS_DEBUG") or _is_cli_flow(error):
                    raise
                _error(f"internal error ({type(error).__name__}: {error}); nothing was left "
                       "half-written. Run again with PATCHOPS_DEBUG=1 for the traceback and report it.")
                raise typer.Exit(INTERNAL_ERROR)

        return (group or app).command(*args, **kwargs)(run)

    return register


def _printable_streams() -> None:
    """Escape what the terminal cannot encode: a lone surrogate ("\\uD800") in a user's YAML
    must print, not crash the output stream."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _error(message: str) -> None:
    """Print `error: <message>` to stderr; the message is text, never rich markup."""
    Output(stderr=True).print(Line.assemble(("error:", "bold red"), " ", message))


def _warn_renamed(selectors, settings=None) -> None:
    """Print `warning: rule code OLD is now NEW` once per old code among `selectors`, as ruff does."""
    for old, new in api.renamed_codes(selectors, settings):
        Output(stderr=True).print(Line.assemble(("warning:", "yellow"), " ",
                                                f"rule code {old} is now {new}"))


def _is_cli_flow(error: Exception) -> bool:
    """Say whether `error` is typer's/click's own control flow (Exit, Abort, usage errors)."""
    return type(error).__module__.split(".")[0] in ("typer", "click")


PythonOption = typer.Option(None, "--python", help="Interpreter that will run vLLM (default: the "
                            "settings file's `python`, else the one running patchops).")
RootOption = typer.Option([], "--root", help="Extra vendor root holding a vLLM copy (repeatable).")
SiteOption = typer.Option([], "--site", help="Only these site-packages folders (repeatable).")
PatchsetDirOption = typer.Option([], "--patchsets", help="Extra folder of patchset YAML files.")
JsonOption = typer.Option(False, "--json", help="Machine-readable output.")


def _settings():
    """Return the project's settings file (patchops.toml or [tool.patchops]), read once."""
    from patchops.core import settings

    return settings.load()


def _python(python: Optional[str]) -> Optional[str]:
    return python or _settings().python


def _patchset_dirs(patchsets: List[Path]) -> List[Path]:
    return [*patchsets, *_settings().patchsets]


@command("locate")
def locate_command(python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                   json_out: bool = JsonOption) -> None:
    """List every vLLM copy on the Python path and vendor roots, its version, and which one wins."""
    with _progress("looking for vLLM copies"):
        location = api.locate(python=_python(python), roots=root)
    console = _console()
    if json_out:
        render.print_json(console, render.location_dict(location))
    else:
        render.location_text(console, location)
    raise typer.Exit(OK if location.copies else PROBLEMS_FOUND)


@command("patchsets")
def patchsets_command(name: Optional[str] = typer.Argument(None, help="Show this patchset in full."),
                      patchsets: List[Path] = PatchsetDirOption, json_out: bool = JsonOption) -> None:
    """List the patchsets apply can use (name, vLLM versions, summary), or show one in full."""
    dirs = _patchset_dirs(patchsets)
    found = [api.patchset(name, dirs)] if name else api.patchsets(dirs)
    console = _console()
    if json_out:
        render.print_json(console, render.patchset_dicts(found)[0] if name else render.patchset_dicts(found))
    elif name:
        render.patchset_text(console, found[0])
    else:
        render.patchsets_text(console, found)


@command("apply")
def apply_command(names: List[str] = typer.Argument(..., help="Patchset names, e.g. corex-eager-allreduce."),
                  dry_run: bool = typer.Option(False, "--dry-run", help="Show the diff, write nothing."),
                  stat: bool = typer.Option(False, "--stat", help="With --dry-run: files and line counts, not the diff."),
                  yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
                  force: bool = typer.Option(False, "--force",
                                             help="Take files changed since patchops wrote them (a vLLM upgrade) as the new originals."),
                  python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                  site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption,
                  json_out: bool = JsonOption) -> None:
    """Apply named patchsets to every vLLM copy as one transaction, backing up originals."""
    console = _console()
    with _progress("planning the patch"):
        targets = api.find_targets(python=_python(python), roots=root, sites=site)
        plan = api.plan_apply(names, targets=targets, patchset_dirs=_patchset_dirs(patchsets),
                              force=force, check=not dry_run)
    if dry_run:
        mismatches = api.mismatches(plan) if plan.problems else ()
        if json_out:
            render.print_json(console, render.plan_dict(plan, targets, mismatches))
        else:
            render.plan_text(console, plan, api.diff(plan), targets=targets, stat=stat)
        render.problems_text(plan, mismatches)
        raise typer.Exit(IO_ERROR if plan.unwritable else DRIFTED if plan.problems else OK)
    if not json_out:
        render.plan_text(console, plan, targets=targets)
    if plan.changes and not yes and not _confirm(console, plan):
        console.print("not confirmed: nothing written")
        raise typer.Exit(PROBLEMS_FOUND)
    report = api.commit_apply(plan)
    if json_out:
        render.print_json(console, render.apply_report_dict(report, plan, targets))
    else:
        render.apply_report_text(console, report, shown=plan.notes)


def _interactive() -> bool:
    return sys.stdin.isatty()


def _confirm(console: Output, plan) -> bool:
    """Ask before writing; `d` shows the diff first. Without a terminal, say to pass --yes."""
    count = len(plan.changes)
    if not _interactive():
        raise UsageError(f"apply would write {count} file(s) and stdin is not a terminal, so "
                         "patchops cannot ask; pass --yes to write them, or --dry-run to see the diff")
    while True:
        answer = typer.prompt(f"write {count} file(s)? [y/N, d = show the diff]", default="n",
                              show_default=False).strip().lower()
        if answer in ("d", "diff"):
            from patchops.cli.render.diff import colour_diff

            colour_diff(console, api.diff(plan))
            continue
        return answer in ("y", "yes")


@command("status")
def status_command(names: List[str] = typer.Argument(None, help="Patchsets to report (default: all)."),
                   python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                   site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption,
                   json_out: bool = JsonOption) -> None:
    """Show, per copy and patchset: applied, not applied, satisfied, not applicable or drifted."""
    with _progress("checking vLLM copies"):
        report = api.status_report(names or None, python=_python(python), roots=root, sites=site,
                                   patchset_dirs=_patchset_dirs(patchsets))
    console = _console()
    if json_out:
        render.print_json(console, render.status_dicts(report))
        render.status_notes(Output(stderr=True), report)  # a repair is never silent
    else:
        render.status_text(console, report)
    raise typer.Exit(DRIFTED if api.any_drift(report.rows) else OK)


def _progress(message: str):
    """Show a spinner on stderr once a step takes over half a second, only on a terminal."""
    return Output(stderr=True).progress(message)


@command("rollback")
def rollback_command(names: List[str] = typer.Argument(None, help="Patchsets to roll back."),
                     all_: bool = typer.Option(False, "--all", help="Roll back every patchset."),
                     force: bool = typer.Option(False, "--force",
                                                help="Restore originals even over later edits (kept in the store)."),
                     python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                     site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption,
                     json_out: bool = JsonOption) -> None:
    """Restore byte-identical originals, keeping other patchsets applied to the same files."""
    if bool(names) == all_:
        raise UsageError("name the patchsets to roll back, or pass --all (not both)")
    report = api.rollback(None if all_ else names, force=force, python=_python(python), roots=root,
                          sites=site, patchset_dirs=_patchset_dirs(patchsets))
    if json_out:
        render.print_json(_console(), render.rollback_report_dict(report))
    else:
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
    from patchops.cli.render import diff as render_diff

    render_diff.file_diffs(_console(), api.file_diffs(target, python=python, roots=root, sites=site))


@command("export")
def export_command(name: str = typer.Argument(..., help="The patchset to export."),
                   output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the patch here."),
                   python: Optional[str] = PythonOption, root: List[Path] = RootOption,
                   site: List[Path] = SiteOption, patchsets: List[Path] = PatchsetDirOption) -> None:
    """Write what a patchset does to a copy as a patch file for `git apply` or `patch -p1`."""
    text = api.export(name, python=python, roots=root, sites=site, patchset_dirs=patchsets)
    if output is None:
        from patchops.cli.render.diff import raw

        raw(text)
    else:
        api.write_text(output, text)
        _console().print(f"wrote {output}")


class Format(str, Enum):
    text = "text"
    concise = "concise"
    json = "json"
    sarif = "sarif"
    github = "github"


# `--help` groups options as ruff's does; each group is its own table, so one long option
# name cannot squeeze the help of every other option at 80 columns.
INPUT, RULES, FIXES, OUTPUT, VLLM = "Input", "Rule selection", "Fixes", "Output", "vLLM and hardware"

HardwareOption = typer.Option(
    None, "--hardware", metavar="GPUS", rich_help_panel=VLLM,
    help="GPUs the config runs on, e.g. 4xBI-V100:32GiB:cc7.5:corex or "
    "'{gpus: 4, memory_gib: 32}'; fills what the config leaves unstated.")
NoDetectHardwareOption = typer.Option(
    False, "--no-detect-hardware", rich_help_panel=VLLM,
    help="Without --hardware, do not read this box's GPUs (nvidia-smi, ixsmi, rocm-smi, "
    "amd-smi, npu-smi).")
LaunchOption = typer.Option(
    None, "--launch", rich_help_panel=INPUT, help="Which launch of a file that holds several, "
    "as lint names it (e.g. 'Deployment/qwen-chat container vllm').")
CmdOption = typer.Option(None, "--cmd", metavar="COMMAND", rich_help_panel=INPUT,
                         help="A launch command line instead of FILE.")
VllmOption = typer.Option(None, "--vllm", metavar="DIR", rich_help_panel=VLLM,
                          help="site-packages (or vllm/) of the copy that will run.")


def _hardware(text: Optional[str], detect: bool):
    """Return the stated hardware, this box's (when asked and found), or None."""
    from patchops.host import hardware

    if text is not None:
        return hardware.parse_hardware(text)
    return hardware.detect() if detect else None


@command("lint")
def lint_command(files: List[Path] = typer.Argument(None, metavar="[FILES]...",
                                                    help="serve.yaml specs, vLLM --config files, launch .sh "
                                                    "files, folders of them, or - for stdin."),
                 cmd: Optional[str] = typer.Option(None, "--cmd", metavar="COMMAND", rich_help_panel=INPUT,
                                                   help="A launch command line to lint."),
                 model_config: List[str] = typer.Option([], "--model-config", metavar="MODEL=FILE", rich_help_panel=INPUT,
                                                        help="That model's config.json (repeatable); FILE alone for "
                                                        "one input; DIR: a folder of snapshots."),
                 fetch: Optional[bool] = typer.Option(None, "--fetch/--no-fetch", rich_help_panel=INPUT,
                                                      help="Fetch a hub model's config.json (never weights) into "
                                                      "the HF cache, as vLLM will; default on (PATCHOPS_FETCH, "
                                                      "settings `fetch`)."),
                 select: List[str] = typer.Option([], "--select", metavar="RULES", rich_help_panel=RULES,
                                                  help="Only these rules: codes, prefixes or names, comma lists ok."),
                 ignore: List[str] = typer.Option([], "--ignore", metavar="RULES", rich_help_panel=RULES,
                                                  help="Skip these rules: codes, prefixes or names, comma lists ok."),
                 strict: bool = typer.Option(False, "--strict", rich_help_panel=RULES, help="Warnings fail too."),
                 fix: bool = typer.Option(False, "--fix", rich_help_panel=FIXES,
                                          help="Apply the exact fixes in place, then report what is left."),
                 unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", rich_help_panel=FIXES,
                                                   help="Also apply fixes that change what vLLM does."),
                 diff: bool = typer.Option(False, "--diff", rich_help_panel=FIXES,
                                           help="Print the fixes as a unified diff; write nothing."),
                 output_format: Format = typer.Option(Format.text, "--format", "--output-format", metavar="FORMAT",
                                                      rich_help_panel=OUTPUT,
                                                      help="text, concise, json, sarif or github."),
                 json_out: bool = typer.Option(False, "--json", rich_help_panel=OUTPUT, help="Same as --format json."),
                 exit_zero: bool = typer.Option(False, "--exit-zero", rich_help_panel=OUTPUT,
                                                help="Exit 0 even with findings."),
                 quiet: bool = typer.Option(False, "--quiet", "-q", rich_help_panel=OUTPUT,
                                            help="Hide the notes: checks that did not run, values left unknown."),
                 verbose: bool = typer.Option(False, "--verbose", "-v", rich_help_panel=OUTPUT,
                                              help="List the checks that did not run, per input."),
                 no_cache: bool = typer.Option(False, "--no-cache", rich_help_panel=OUTPUT,
                                               help="Lint again even when nothing the last results were "
                                               "computed from changed."),
                 vllm: Optional[Path] = VllmOption,
                 python: Optional[str] = typer.Option(None, "--python", rich_help_panel=VLLM,
                                                      help="Lint against the copy this interpreter imports."),
                 vllm_version: Optional[str] = typer.Option(None, "--vllm-version", metavar="VERSION", rich_help_panel=VLLM,
                                                            help="Shipped facts of this release, for inputs that "
                                                            "state no version and no installed copy."),
                 hardware: Optional[str] = HardwareOption,
                 no_detect_hardware: bool = NoDetectHardwareOption,
                 engine: bool = typer.Option(False, "--engine", rich_help_panel=VLLM,
                                             help="Also ask the installed vLLM itself (a subprocess, up to "
                                             "its engine config: no weights, no GPU memory).")) -> None:
    """Predict what vLLM would reject or silently degrade at launch, before loading a model."""
    from patchops.cli.render import formats as render_formats
    from patchops.cli.render import lint as render_lint

    if not files and cmd is None:
        raise UsageError("give a serve spec, vLLM config or launch script to lint, or --cmd COMMAND")
    output_format = Format.json if json_out else output_format
    _warn_renamed([*select, *ignore], _settings())
    # The settings file's `hardware` comes before detection: it names the box that will serve.
    assumed = _hardware(hardware, not no_detect_hardware and not _settings().hardware)
    with _progress("linting" if fix or diff else "linting (the first lint of a vLLM copy reads its facts)"):
        run = api.lint_run(files or (), command=cmd, fix=fix, diff=diff, unsafe=unsafe_fixes,
                           cache=not no_cache, vllm_path=vllm, python=python, vllm_version=vllm_version,
                           select=select, ignore=ignore, hardware=assumed, model_config=model_config,
                           fetch=fetch)
    if run.diff_only:
        sys.stdout.write("".join(f.diff for f in run.fixes))
        Output(stderr=True).print(render_lint.fix_diff_summary(run.fixes))
        raise typer.Exit(api.lint_exit_code(run))
    render_formats.print_lint(_console(), run.results, output_format.value, unsafe=unsafe_fixes,
                              fixed=run.fixed, verbosity=-1 if quiet else int(verbose))
    if output_format not in (Format.text, Format.concise):
        for result in run.unlinted:  # stdout holds the machine output; say it where people look
            _error(result.error)
    engines = []
    if engine and not run.unlinted:
        for found in api.engine_checks(files or (), command=cmd, python=python,
                                       hardware=_hardware(hardware, detect=False), results=run.results):
            render_lint.engine_text(_console(), found)
            engines.append(found)
    raise typer.Exit(api.lint_exit_code(run, strict=strict, exit_zero=exit_zero, engines=engines))


@command("explain")
def explain_command(files: List[Path] = typer.Argument(None, metavar="[FILES]...",
                                                       help="Serve specs, vLLM --config files, launch .sh files, "
                                                       "folders of them, or - for stdin."),
                    cmd: Optional[str] = CmdOption,
                    launch: Optional[str] = LaunchOption,
                    json_out: bool = typer.Option(False, "--json", rich_help_panel=OUTPUT, help="Machine-readable output."),
                    output_format: Optional[Format] = typer.Option(None, "--format", metavar="FORMAT", rich_help_panel=OUTPUT,
                                                                   help="json: same as --json."),
                    vllm: Optional[Path] = VllmOption,
                    vllm_version: Optional[str] = typer.Option(None, "--vllm-version", metavar="VERSION", rich_help_panel=VLLM,
                                                               help="Use shipped facts of this release."),
                    hardware: Optional[str] = HardwareOption,
                    no_detect_hardware: bool = NoDetectHardwareOption) -> None:
    """Show the settings vLLM will really run with, and where each value comes from."""
    from patchops.cli.render import explain as render_explain

    if bool(files) == (cmd is not None):
        raise UsageError("give the serve specs, vLLM configs or launch scripts to explain, or --cmd COMMAND")
    given = [dict(command=cmd)] if cmd is not None else [
        dict(path=Path("<stdin>"), text=sys.stdin.read()) if str(path) == api.STDIN else dict(path=path)
        for path in api.expand_inputs(files)]
    assumed = _hardware(hardware, not no_detect_hardware)
    with _progress("reading the config and the vLLM copy"):
        results = [api.explain(**one, vllm_path=vllm, vllm_version=vllm_version, hardware=assumed,
                               launch=launch) for one in given]
    if json_out or output_format is Format.json:
        print(render_explain.explain_json(results[0]) if len(results) == 1 else
              "[" + ",\n".join(render_explain.explain_json(r) for r in results) + "]")
    else:
        for i, result in enumerate(results):
            if i:
                _console().print()
            render_explain.explain_table(_console(), result)
    raise typer.Exit(PROBLEMS_FOUND if any(r.errors for r in results) else OK)


@command("launch")
def launch_command(args: List[str] = typer.Argument(None, metavar="[FILE] [-- ARGS]...",
                                                    help="FILE, then `--` and extra vLLM arguments."),
                   cmd: Optional[str] = CmdOption,
                   launch: Optional[str] = LaunchOption,
                   print_only: bool = typer.Option(False, "--print", rich_help_panel=OUTPUT,
                                                   help="Print the command instead of running it."),
                   strict: bool = typer.Option(False, "--strict", rich_help_panel=OUTPUT,
                                               help="Warnings stop the launch too."),
                   python: Optional[str] = typer.Option(None, "--python", rich_help_panel=VLLM,
                                                        help="Interpreter that will run vLLM (default: the "
                                                        "settings file's `python`, else the one running patchops)."),
                   hardware: Optional[str] = HardwareOption,
                   no_detect_hardware: bool = NoDetectHardwareOption) -> None:
    """Lint against the copy that will run, stop on errors, else run exactly that vLLM command."""
    from patchops.run.launch import exec_launch

    given = list(args or ())
    if cmd is None and not given:
        raise UsageError("give the serve spec, vLLM config or launch script to launch, or --cmd COMMAND")
    source = dict(command=cmd) if cmd is not None else dict(path=Path(given.pop(0)))
    with _progress("linting against the copy that will run"):
        result, launch = api.plan_launch(**source, python=python, extra=given,
                                         hardware=_hardware(hardware, not no_detect_hardware), launch=launch)
    if result.diagnostics:  # on stderr: stdout is vLLM's, or with --print the one command line
        from patchops.cli.render.lint import lint_text

        lint_text(Output(stderr=True), [result])
    if result.errors or (strict and result.warnings):
        raise typer.Exit(PROBLEMS_FOUND)
    if print_only:
        print(launch.shell())
        raise typer.Exit(OK)
    exec_launch(launch)


@command("rules")
def rules_command(code: Optional[str] = typer.Argument(None, help="A rule code or name, a code prefix (PO3) or a comma list."),
                  json_out: bool = JsonOption) -> None:
    """List every lint rule, or print one rule's documentation."""
    from patchops.cli.render import rules as render_rules

    _warn_renamed([code] if code is not None else [])
    found = api.rules(code)
    console = _console()
    if json_out:
        print(render_rules.rule_json(found))
    elif len(found) == 1 and code is not None:
        render_rules.rule_docs(console, found[0])
    else:
        render_rules.rules_table(console, found)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main() -> None:
    """Run the CLI (console script and `python -m patchops`)."""
    try:
        _app_for(sys.argv[1:])()
    except SystemExit:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
        raise


def _app_for(args: List[str]) -> typer.Typer:
    """Return `app` holding only the command `args` names, or all of it (help, a typo, none).

    Typer turns every registered command into a click command, reading its signature and
    type hints, before it parses anything: for all of patchops's commands that costs as much
    as the rest of a `status` run. A command built alone parses, helps and fails
    the same way.
    """
    name = args[0] if args else None
    commands = [info for info in app.registered_commands if info.name == name]
    groups = [info for info in app.registered_groups if info.name == name]
    if not commands and not groups:
        return app
    alone = copy.copy(app)
    alone.registered_commands, alone.registered_groups = commands, groups
    return alone


# The fleet group (`patchops fleet ...`) lives in cli/fleet.py; importing it registers it on app.
from patchops.cli import fleet as fleet_cli  # noqa: E402,F401
