"""Every command's `--help` reads at 80 columns: nothing cut, every option's help whole.

At 80 columns rich's help table used to give the help text 16 characters and cut option
names and examples with an ellipsis (`--format,--outpu…`, `4xBI-V100:32GiB…`, unreadable).
"""

from __future__ import annotations

import re

import click
import pytest
import typer
from typer.testing import CliRunner

from patchops.cli.app import app

BORDERS = re.compile(r"[│╭╮╰╯─]")


def _commands(group: click.Group, prefix=()):
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _words(text: str) -> str:
    """Return `text` without the table's borders, its whitespace collapsed."""
    return " ".join(BORDERS.sub(" ", text).split())


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_at_80_columns_cuts_nothing(path, command):
    done = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert "\u2026" not in done.output, done.output
    assert max(len(line) for line in lines) <= 80
    text = _words(done.output)
    for param in command.params:
        for name in param.opts + param.secondary_opts:
            if name.startswith("--"):
                assert name in text, f"{name} is missing or cut in `{' '.join(path)} --help`"
        help_text = getattr(param, "help", None)
        if help_text:  # wrapped at word breaks only: never folded mid-word by a narrow column
            assert _words(help_text) in text, f"help of {param.name} is cut:\n{done.output}"


def test_lint_help_groups_its_options():
    done = CliRunner().invoke(app, ["lint", "--help"], env={"COLUMNS": "80"})
    panels = re.findall(r"╭─ (.+?) ─", done.output)
    assert panels == ["Arguments", "Options", "Input", "Rule selection", "Fixes", "Output",
                      "vLLM and hardware"]
    # Each group is its own table: the help column keeps most of the width.
    assert "│ --select        RULES  Only these rules: codes, prefixes or names" in done.output
