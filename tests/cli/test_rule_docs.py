"""`patchops rules CODE`: a rule's docs end with its first failing and passing example."""

from __future__ import annotations

from typer.testing import CliRunner

from patchops.cli.app import OK, app
from patchops.cli.render.rules import rule_markdown
from patchops.lint.rules import ALL_RULES
from patchops.lint.rules.batched_tokens_below_model_len import BatchedTokensBelowModelLen
from patchops.lint.rules.speculative_config_invalid import SpeculativeConfigInvalid
from patchops.lint.rules.unknown_flag import UnknownFlag


def rules_docs(code: str, tmp_path) -> str:
    result = CliRunner().invoke(app, ["rules", code], env={"PATCHOPS_CACHE": str(tmp_path), "NO_COLOR": "1"})
    assert result.exit_code == OK, result.output
    return result.stdout


def test_a_rules_docs_show_its_first_failing_then_first_passing_example(tmp_path):
    shown = rules_docs("PO201", tmp_path)
    failing, passing = BatchedTokensBelowModelLen.INVALID[0], BatchedTokensBelowModelLen.VALID[0]
    assert "## Failing example" in shown and "## Passing example" in shown
    assert shown.index("## Failing example") < shown.index("## Passing example")
    after_failing = shown.split("## Failing example", 1)[1].split("## Passing example", 1)[0]
    assert failing.text.rstrip() in after_failing
    assert f"linted against vLLM {failing.vllm}; flagged at line {failing.at[0]}, column {failing.at[1]}" \
        in after_failing
    assert passing.text.rstrip() in shown.split("## Passing example", 1)[1]
    assert BatchedTokensBelowModelLen.INVALID[1].text.rstrip() not in shown   # the first one only


def test_a_commands_example_is_fenced_as_shell_and_a_files_as_yaml():
    assert UnknownFlag.INVALID[0].kind == "spec"
    assert "```yaml\n" + UnknownFlag.INVALID[0].text.rstrip() + "\n```" in rule_markdown(UnknownFlag)
    assert SpeculativeConfigInvalid.INVALID[0].kind == "command"
    assert "a launch command, linted against vLLM" in rule_markdown(SpeculativeConfigInvalid)
    assert "```sh\n" + SpeculativeConfigInvalid.INVALID[0].text.rstrip() + "\n```" \
        in rule_markdown(SpeculativeConfigInvalid)


def test_every_rule_shows_an_example():
    for rule in ALL_RULES:
        text = rule_markdown(rule)
        assert "## Failing example" in text or "## Passing example" in text, rule.code
