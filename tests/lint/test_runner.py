"""The runner over whole configs: vendor version spellings, select/ignore, suppressions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_file, load_text
from patchops.lint.runner import lint_config

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("version", ["0.8.5-corex.4.2", "0.6.3+corex", "dev", "unknown"])
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_vendor_version_spellings_do_not_crash(example, version):
    facts = dataclasses.replace(facts_for_version("0.8.5"), version=version)
    found = lint_config(load_file(example), facts)
    assert all(d.code.startswith("PO") for d in found)


def test_vendor_suffix_reads_as_its_release():
    text = "model: m\nargs:\n  num-scheduler-steps: 8\n"
    plain = lint_config(load_text(text), facts_for_version("0.8.5"))
    vendor = lint_config(load_text(text), dataclasses.replace(facts_for_version("0.8.5"),
                                                              version="0.8.5-corex.4.2"))
    assert [d.code for d in plain] == [d.code for d in vendor] and "PO302" in [d.code for d in plain]


def test_select_and_ignore_by_prefix():
    text = "model: m\nargs:\n  num-scheduler-steps: 8\n  tp: 2\n"
    facts = facts_for_version("0.8.5")
    everything = {d.code for d in lint_config(load_text(text), facts)}
    assert {"PO101", "PO302"} <= everything
    assert {d.code for d in lint_config(load_text(text), facts, select=["PO3"])} == {"PO302"}
    assert "PO302" not in {d.code for d in lint_config(load_text(text), facts, ignore=["PO302"])}


def test_selector_matching_no_rule_is_a_usage_error():
    from patchops.core.errors import UsageError

    with pytest.raises(UsageError, match="--select ZZZ matches no rule code"):
        lint_config(load_text("model: m\n"), facts_for_version("0.8.5"), select=["ZZZ"])


def test_config_file_keys_share_a_position_but_not_their_explanations(tmp_path):
    """Every key of `--config FILE` sits at the `--config` token: a bad value of one key must
    not hide the removed flag of another (PO101 steps aside only for the same setting)."""
    from patchops.lint.input.loaders import load_command

    (tmp_path / "case.yaml").write_text("max-seq-len-to-capture: 16384\ngpu-memory-utilization: 1.2\n")
    cfg = load_command("vllm serve /m --config case.yaml", base_dir=str(tmp_path))
    found = {d.code for d in lint_config(cfg, facts_for_version("0.33.0"))}
    assert {"PO101", "PO111"} <= found


def test_a_finding_on_one_config_key_names_it_so_a_removed_flag_beside_it_stays(tmp_path):
    """PO909 names otlp_traces_endpoint: without that field it explained away every generic
    finding at the `--config` token, the removed --tokenizer-pool-size beside it included."""
    from patchops.lint.input.loaders import load_command

    (tmp_path / "case.yaml").write_text("tokenizer-pool-size: 0\notlp-traces-endpoint: http://h:4317\n")
    cfg = load_command("vllm serve /m --config case.yaml", base_dir=str(tmp_path))
    found = {d.code: d for d in lint_config(cfg, facts_for_version("0.10.1.1"))}
    assert {"PO101", "PO909"} <= set(found)
    assert found["PO909"].fields == ("otlp_traces_endpoint",) and found["PO101"].severity == "error"


def _not_run(model: dict, version: str = "0.20.0"):
    from patchops.lint.input import model_source
    from patchops.lint.input.model_config import model_facts_from_dict
    from patchops.lint.runner import run_rules

    cfg = load_text("model: org/m\nargs:\n  tensor-parallel-size: 1\n")
    given = model_source.GivenConfigs(read=model_facts_from_dict(model))
    return {n.rule: n.reason for n in run_rules(cfg, facts_for_version(version), given=given).not_run}


def test_a_rule_about_other_models_is_not_listed_as_not_run_for_this_one():
    from patchops.lint.rules.attention_sinks_unsupported import GPT_OSS_20B
    from patchops.lint.rules.heads_not_divisible_by_tp import LLAMA_8B
    from patchops.lint.rules.mamba_blocks_below_max_seqs import QWEN35_27B
    from patchops.lint.rules.mla_unsupported_on_gpu import MOONLIGHT

    gpu, memory = "hardware.compute_capability not known", "hardware.memory_gib not known"
    llama = _not_run(LLAMA_8B)
    assert {"mla-unsupported-on-gpu", "attention-sinks-unsupported", "mamba-blocks-below-max-seqs"} \
        .isdisjoint(llama)
    assert llama["kv-cache-too-small"] == memory         # a rule about every model still says so
    assert _not_run(MOONLIGHT)["mla-unsupported-on-gpu"] == gpu
    assert _not_run(GPT_OSS_20B)["attention-sinks-unsupported"] == gpu
    assert _not_run(QWEN35_27B)["mamba-blocks-below-max-seqs"] == memory
