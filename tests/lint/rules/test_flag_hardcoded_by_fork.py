"""PO611 flag-hardcoded-by-fork beyond its examples."""

from __future__ import annotations


from patchops.lint.rules.flag_hardcoded_by_fork import FlagHardcodedByFork

from lintkit import findings, said

BOTH = {"enforce_eager": "True", "disable_custom_all_reduce": "True"}


def lint(text, vllm="0.9.2", kind="spec", hardcoded=BOTH):
    return findings(FlagHardcodedByFork.code, text, vllm, kind, hardcoded=dict(hardcoded))


def test_no_form_on_the_command_line_is_false():
    [found] = lint("vllm serve m --no-enforce-eager\n", kind="command")
    assert found.severity == "error"
    assert found.message.startswith("setting --no-enforce-eager is ignored: this copy hardcodes enforce_eager=True")
    assert found.fix == "patchops apply corex-eager-allreduce (restores enforce_eager=self.enforce_eager)"


def test_both_flags_reported():
    found = lint("model: m\nargs:\n  enforce-eager: false\n  disable-custom-all-reduce: false\n")
    assert [(d.line, d.fields, d.severity) for d in found] == [
        (3, ("enforce_eager",), "error"), (4, ("disable_custom_all_reduce",), "error")]
    assert "custom kernel" in said(found[1])


def test_0_6_3_rejected_yaml_is_left_to_yaml_true_breaks_store_true():
    # `enforce-eager: false` on 0.6.3 stops vLLM before the fork's value matters
    [unset] = lint("model: m\nargs:\n  enforce-eager: false\n", vllm="0.6.3.post1")
    assert unset.severity == "warning" and "no flag can change it" in unset.message
    [found] = lint("vllm serve m --enforce-eager\n", vllm="0.6.3.post1", kind="command")
    assert found.severity == "warning" and "has no effect" in found.message


def test_expression_is_a_warning():
    [found] = lint("model: m\nargs:\n  enforce-eager: false\n",
                   hardcoded={"enforce_eager": "envs.VLLM_FORCE_EAGER"})
    assert found.severity == "warning"
    assert "passes enforce_eager=envs.VLLM_FORCE_EAGER" in found.message


def test_quiet_on_an_unmodified_copy():
    assert lint("model: m\nargs:\n  enforce-eager: false\n", hardcoded={}) == []


def test_unset_hardcoded_true_warns_where_it_costs():
    [eager] = lint("model: m\nargs:\n  max-model-len: 4096\n", hardcoded={"enforce_eager": "True"})
    assert eager.severity == "warning" and "no flag can change it" in eager.message
    single_gpu = "model: m\nargs:\n  max-model-len: 4096\n"
    assert lint(single_gpu, hardcoded={"disable_custom_all_reduce": "True"}) == []
    [tp] = lint("model: m\nargs:\n  tensor-parallel-size: 2\n", hardcoded={"disable_custom_all_reduce": "True"})
    assert tp.fields == ("disable_custom_all_reduce",) and (tp.line, tp.column) == (3, 3)
