"""PO301 multistep-removed beyond its examples."""

from __future__ import annotations

from patchops.lint.facts.model import Flag

from lintkit import linter

CMD = "vllm serve /models/Qwen2.5-7B-Instruct --num-scheduler-steps 8\n"


lint = linter(None, kind="command")


def test_replaces_the_generic_unknown_flag_finding():
    found = lint(CMD, "0.10.2")
    assert [d.code for d in found if (d.line, d.column) == (1, 40)] == ["PO301"]
    [mine] = [d for d in found if d.code == "PO301"]
    assert mine.fields == ("num_scheduler_steps",)
    assert mine.vllm_message == "unrecognized arguments: --num-scheduler-steps 8"
    assert "V1" in mine.fix and "remove --num-scheduler-steps" in mine.fix


def test_not_on_versions_that_have_multistep():
    assert [d for d in lint(CMD, "0.10.0") if d.code == "PO301"] == []


def test_quiet_on_a_fork_that_kept_the_flag():
    kept = Flag("num-scheduler-steps", "num_scheduler_steps", type="int")
    from patchops.lint.facts.model import facts_for_version
    flags = dict(facts_for_version("0.10.2").flags, num_scheduler_steps=kept)
    assert [d for d in lint(CMD, "0.10.2", flags=flags) if d.code == "PO301"] == []
