"""read_config.py: one Outcome per setting read, looked up by where it is written."""

from __future__ import annotations

import copy

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_command, load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.input.model_source import ModelSource
from patchops.lint.reading import read_as_vllm
from patchops.lint.reading.read_config import Fate

SPEC = """\
model: m
args:
  max-model-len: 4096
  enable-prefix-caching: false
  max-num-seqs: eight
  frobnicate: 1
"""


def test_every_written_setting_has_one_outcome_with_its_dest_and_why():
    cfg = load_text(SPEC)
    seen = read_as_vllm(cfg, facts_for_version("0.8.5"))
    found = {s.key: seen.outcome_of(s) for s in cfg.config_settings}
    assert {key: (o.fate, o.dest) for key, o in found.items()} == {
        "max-model-len": (Fate.ACCEPTED, "max_model_len"),
        "enable-prefix-caching": (Fate.IGNORED, "enable_prefix_caching"),
        "max-num-seqs": (Fate.REJECTED, "max_num_seqs"),
        "frobnicate": (Fate.UNKNOWN, None)}
    assert found["max-num-seqs"].detail == "argument --max-num-seqs: invalid int value: 'eight'"
    assert "drops `false`" in found["enable-prefix-caching"].detail
    assert found["max-model-len"].setting.value == 4096 and seen.args["max_model_len"].value == 4096


def test_by_dest_the_dropped_and_the_refused():
    seen = read_as_vllm(load_text(SPEC), facts_for_version("0.8.5"))
    assert seen.dropped("enable_prefix_caching").setting.line == 4
    assert seen.refusal("max_num_seqs").setting.line == 5
    assert seen.dropped("max_num_seqs") is None and seen.refusal("enable_prefix_caching") is None
    assert [o.setting.key for o in seen.outcomes_of(Fate.UNKNOWN)] == ["frobnicate"]


def test_keys_of_a_config_file_sharing_the_config_token_are_told_apart_by_key(tmp_path):
    (tmp_path / "c.yaml").write_text("max-model-len: 4096\nmax-num-seqs: eight\n")
    cfg = load_command(f"vllm serve m --config {tmp_path / 'c.yaml'}")
    seen = read_as_vllm(cfg, facts_for_version("0.8.5"))
    fates = [seen.outcome_of(s).fate for s in cfg.config_settings]
    assert fates == [Fate.ACCEPTED, Fate.REJECTED]


def test_a_setting_reading_never_saw_has_no_outcome():
    cfg = load_text(SPEC)
    seen = read_as_vllm(cfg, facts_for_version("0.8.5"))
    assert seen.outcome_of(cfg.model) is None      # the spec's model: is no flag


def test_reading_leaves_the_written_config_as_written_and_reads_through_to_it():
    cfg = load_text(SPEC + "env:\n  VLLM_USE_V1: '1'\n")
    before = copy.deepcopy(cfg)
    seen = read_as_vllm(cfg, facts_for_version("0.8.5"))
    assert cfg == before and seen.written is cfg and seen.version == "0.8.5"
    assert (seen.path, seen.env, seen.suppressions, seen.lines) == (cfg.path, cfg.env, cfg.suppressions, cfg.lines)


def test_the_model_config_joins_the_read_config_not_the_written_one():
    cfg = load_text(SPEC)
    seen = read_as_vllm(cfg, facts_for_version("0.8.5"))
    facts = model_facts_from_dict({"model_type": "llama"})
    judged = seen.with_model(ModelSource("m", facts, "given"))
    assert judged.model_facts is facts and seen.model_facts is None
    assert judged.outcome_of(cfg.config_settings[0]).fate is Fate.ACCEPTED
