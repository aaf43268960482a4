"""Small wording: `--stat` counts as git words them, a status line says its state once."""

from __future__ import annotations

from patchops.cli.render import copies
from patchops.cli.render.diff import diff_stat

DIFF = """\
--- a/vllm/engine/arg_utils.py
+++ b/vllm/engine/arg_utils.py
@@ -1,2 +1,2 @@
-enforce_eager=False
+enforce_eager=True
"""


def test_stat_total_uses_singular_and_plural_as_git_does():
    assert diff_stat(DIFF)[-1] == " 1 file changed, 1 insertion(+), 1 deletion(-)"
    assert diff_stat(DIFF + DIFF.replace("arg_utils", "config"))[-1] == \
        " 2 files changed, 2 insertions(+), 2 deletions(-)"


class _Console:
    def __init__(self):
        self.lines = []

    def print(self, line):
        self.lines.append(line.plain)


def test_a_state_line_does_not_repeat_its_state():
    console = _Console()
    copies._state_line(console, "corex-eager-allreduce", "not-applied", "not applied in /site")
    copies._state_line(console, "corex-eager-allreduce", "drifted", "vllm/config.py changed")
    assert console.lines == ["  corex-eager-allreduce: not-applied in /site",
                             "  corex-eager-allreduce: drifted - vllm/config.py changed"]


def test_a_mistyped_rule_name_gets_the_closest_one():
    from typer.testing import CliRunner

    from patchops.cli.app import USAGE_OR_INPUT_ERROR, app

    shown = CliRunner().invoke(app, ["rules", "multistep-remove"])
    assert shown.exit_code == USAGE_OR_INPUT_ERROR
    assert "no rule 'multistep-remove' (did you mean multistep-removed?)" in shown.stderr
    selected = CliRunner().invoke(app, ["lint", "--select", "PO2O1", "--cmd", "vllm serve m"])
    assert "--select PO2O1 matches no rule code or name (did you mean PO201?)" in selected.stderr
