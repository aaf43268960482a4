"""The `patchops fleet ...` commands: parse arguments, call patchops.fleet, render, exit.

Kept beside cli/app.py (whose `command` wrapper, options and exit codes it uses) and registered
on its app at the end of this module; patchops.fleet and Ray are imported only when a fleet
command runs, so other commands start as fast as before.
"""

# No `from __future__ import annotations`: typer reads every command's annotations on each
# run, and string annotations cost an eval each (a tenth of a cached lint).

from pathlib import Path
from typing import List, Optional

import typer

from patchops.cli.render import copies as render
from patchops.cli.app import (DRIFTED, NODE_FAILED, NODES_DISAGREE, OK, PROBLEMS_FOUND,
                          USAGE_OR_INPUT_ERROR, JsonOption, PatchsetDirOption, _console, _error,
                          app, command)
from patchops.core.errors import DriftError, UsageError

fleet_app = typer.Typer(no_args_is_help=True,
                        help="Run status, apply, rollback, verify and lint on every node of a Ray cluster.")
AddressOption = typer.Option("auto", "--address", help="Ray cluster address (auto: the one running here).")
TimeoutOption = typer.Option(300.0, "--timeout", help="Seconds to wait for every node to answer.")
NodePythonOption = typer.Option(None, "--python", help="Interpreter that runs vLLM on each node (default: Ray's).")
NodeRootOption = typer.Option([], "--root", help="Extra vendor root on each node (repeatable).")
NodeSiteOption = typer.Option([], "--site", help="Only these site-packages folders on each node (repeatable).")


def _where(python, root, site, patchsets):
    from patchops.fleet import Where, driver_patchsets

    return Where(python, tuple(map(str, root)), tuple(map(str, site)), driver_patchsets(patchsets))


@command("status", group=fleet_app)
def fleet_status_command(names: List[str] = typer.Argument(None, help="Patchsets to report (default: all)."),
                         address: str = AddressOption, python: Optional[str] = NodePythonOption,
                         root: List[Path] = NodeRootOption, site: List[Path] = NodeSiteOption,
                         patchsets: List[Path] = PatchsetDirOption, json_out: bool = JsonOption,
                         timeout: float = TimeoutOption) -> None:
    """Show every node x copy x patchset state, vLLM version and file hashes; name nodes that differ."""
    from patchops import fleet
    from patchops.cli.render import fleet as fleet_render

    found = fleet.status(names or (), address=address, where=_where(python, root, site, patchsets),
                         timeout=timeout)
    if json_out:
        render.print_json(_console(), fleet_render.status_dict(found))
    else:
        fleet_render.status_text(_console(), found)
    raise typer.Exit(NODE_FAILED if found.failures else NODES_DISAGREE if found.disagreements
                     else DRIFTED if found.drifted else OK)


@command("apply", group=fleet_app)
def fleet_apply_command(names: List[str] = typer.Argument(..., help="Patchset names."),
                        dry_run: bool = typer.Option(False, "--dry-run", help="Plan on every node, write nothing."),
                        yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
                        force: bool = typer.Option(False, "--force", help="As `patchops apply --force`, on every node."),
                        address: str = AddressOption, python: Optional[str] = NodePythonOption,
                        root: List[Path] = NodeRootOption, site: List[Path] = NodeSiteOption,
                        patchsets: List[Path] = PatchsetDirOption, timeout: float = TimeoutOption) -> None:
    """Apply patchsets on every node or none: plan everywhere, then commit everywhere."""
    from patchops import fleet
    from patchops.cli.render import fleet as fleet_render

    console = _console()
    plan = fleet.plan_apply(names, address=address, where=_where(python, root, site, patchsets),
                            force=force, timeout=timeout)
    fleet_render.plan_text(console, plan)
    if plan.problems:
        if dry_run:
            console.print(plan.problem_message(), style="bold red")
            raise typer.Exit(DRIFTED)
        raise DriftError(plan.problem_message())
    if dry_run:
        raise typer.Exit(OK)
    if plan.changes and not yes and not typer.confirm(
            f"write {plan.changes} file(s) on {len(plan.nodes)} node(s)?", default=False):
        console.print("not confirmed: nothing written")
        raise typer.Exit(PROBLEMS_FOUND)
    report = fleet.commit_apply(plan, timeout=timeout)
    fleet_render.apply_text(console, report)
    if not report.ok:
        _error(report.failure_message())
        raise typer.Exit(NODE_FAILED)


@command("rollback", group=fleet_app)
def fleet_rollback_command(names: List[str] = typer.Argument(None, help="Patchsets to roll back."),
                           all_: bool = typer.Option(False, "--all", help="Roll back every patchset."),
                           force: bool = typer.Option(False, "--force", help="As `patchops rollback --force`, on every node."),
                           address: str = AddressOption, python: Optional[str] = NodePythonOption,
                           root: List[Path] = NodeRootOption, site: List[Path] = NodeSiteOption,
                           patchsets: List[Path] = PatchsetDirOption, timeout: float = TimeoutOption) -> None:
    """Restore byte-identical originals on every node; nodes that refuse are named."""
    from patchops import fleet
    from patchops.cli.render import fleet as fleet_render

    if bool(names) == all_:
        raise UsageError("name the patchsets to roll back, or pass --all (not both)")
    report = fleet.rollback(None if all_ else names, address=address, force=force,
                            where=_where(python, root, site, patchsets), timeout=timeout)
    fleet_render.rollback_text(_console(), report)
    raise typer.Exit(NODE_FAILED if report.failures else OK)


@command("verify", group=fleet_app)
def fleet_verify_command(address: str = AddressOption, python: Optional[str] = NodePythonOption,
                         root: List[Path] = NodeRootOption, site: List[Path] = NodeSiteOption,
                         json_out: bool = JsonOption, timeout: float = TimeoutOption) -> None:
    """Check every node's copies against pip's RECORD; name the nodes whose files differ."""
    from patchops import fleet
    from patchops.cli.render import fleet as fleet_render

    found = fleet.verify(address=address, where=_where(python, root, site, ()), timeout=timeout)
    if json_out:
        render.print_json(_console(), fleet_render.verify_dict(found))
    else:
        fleet_render.verify_text(_console(), found)
    raise typer.Exit(NODE_FAILED if found.failures else NODES_DISAGREE if found.disagreements
                     else DRIFTED if found.differs else USAGE_OR_INPUT_ERROR if found.unverified
                     else OK)


@command("lint", group=fleet_app)
def fleet_lint_command(file: Path = typer.Argument(..., help="A serve spec, vLLM config or launch script."),
                       address: str = AddressOption, python: Optional[str] = NodePythonOption,
                       root: List[Path] = NodeRootOption, site: List[Path] = NodeSiteOption,
                       select: List[str] = typer.Option([], "--select", help="Only these codes (prefixes ok)."),
                       ignore: List[str] = typer.Option([], "--ignore", help="Skip these codes (prefixes ok)."),
                       json_out: bool = JsonOption, timeout: float = TimeoutOption) -> None:
    """Lint one config against the vLLM copy of every node; name the nodes where verdicts differ."""
    from patchops import fleet
    from patchops.cli.render import fleet as fleet_render

    found = fleet.lint(file, address=address, where=_where(python, root, site, ()), select=select,
                       ignore=ignore, timeout=timeout)
    if json_out:
        render.print_json(_console(), fleet_render.lint_dict(found))
    else:
        fleet_render.lint_text(_console(), found)
    raise typer.Exit(NODE_FAILED if found.failures else NODES_DISAGREE if found.disagreements
                     else PROBLEMS_FOUND if found.errors else OK)


app.add_typer(fleet_app, name="fleet")
