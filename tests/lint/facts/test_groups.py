"""lint/facts/groups.py: the fact groups' records read and write exactly the JSON the packs hold."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from patchops.lint.extract.guards import MESSAGES
from patchops.lint.facts import packs
from patchops.lint.facts.groups import (Architectures, ExtraPolicy, GuardScope, Guards, MaxLen, NestedConfig,
                                        OracleReport, OverGpus)
from patchops.lint.facts.model import Facts


def _pack_json(data) -> str:
    """The JSON a pack writes of a release (packs.pack_bytes' dumps)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize("version", packs.shipped_releases())
def test_every_shipped_release_reads_and_writes_back_to_its_own_json(version):
    raw = packs.release_dict(version)
    facts = Facts.from_dict(raw)
    # the JSON the generator writes (a pack is a function of these strings: True and 1 differ
    # here, not in ==), and the facts cache's entry read back
    assert _pack_json(facts.to_dict()) == _pack_json(raw)
    assert Facts.from_json(facts.to_json()) == facts


def test_a_pack_rebuilt_from_the_records_is_the_shipped_file():
    versions = packs.index()["0.9"]   # four releases: a base and deltas
    rebuilt = {v: Facts.from_dict(packs.release_dict(v)).to_dict() for v in versions}
    assert packs.pack_bytes(rebuilt) == (packs.PACK_DIR / "0.9.json.xz").read_bytes()


def facts_of(version: str) -> Facts:
    return Facts.from_dict(packs.release_dict(version))


def test_records_type_what_a_release_says():
    facts = facts_of("0.10.1.1")
    assert facts.guards.pooling_without_chunked_prefill is GuardScope.V0
    assert facts.parallel.over_gpus is OverGpus.RAY and facts.parallel.ray_required is True
    assert isinstance(facts.nested_configs["speculative_config"], NestedConfig)
    assert facts.nested_configs["speculative_config"].class_name == "SpeculativeConfig"
    assert facts.nested_configs["compilation_config"].fields["level"].kinds
    assert facts.max_len.keys and isinstance(facts.max_len.keys, tuple)
    assert facts.nested_configs["speculative_config"].extra is ExtraPolicy.IGNORE
    assert facts.v1_oracle[0] == ("--load_format {}", OracleReport.UNSUPPORTED)
    assert facts.v1_oracle[0][1] is OracleReport.UNSUPPORTED
    assert facts_of("0.33.0").nested_configs["speculative_config"].extra is ExtraPolicy.REJECT


def test_a_key_no_field_names_is_refused():
    assert MaxLen.from_dict({"keys": ["max_position_embeddings"]}).keys == ("max_position_embeddings",)
    with pytest.raises(ValueError, match="MaxLen: no field for"):
        MaxLen.from_dict({"keys": [], "yarn_bsae": True})


def test_a_group_read_as_nothing_is_false_and_writes_no_keys():
    facts = Facts.from_dict({"version": "0.0.1"})
    assert not facts.max_len and not facts.guards and not facts.architectures and not facts.kernel_tiles
    assert facts.to_dict()["max_len"] == {} and "kernel_tiles" not in facts.to_dict()
    assert Architectures(registered=("LlamaForCausalLM",))
    assert Architectures().names("no_pp") == ()


def test_a_value_none_is_kept_where_the_field_has_no_default():
    raw = {"cpu": {"device_type": "cpu", "supports_v1": None}}
    facts = Facts.from_dict({"version": "0.9.2", "v1_platforms": raw})
    assert facts.to_dict()["v1_platforms"] == raw


def test_every_guard_the_reader_finds_has_a_field():
    assert {f.name for f in fields(Guards)} == set(MESSAGES) | {"model_option_refused"}

