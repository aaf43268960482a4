"""Facts vouched for by a copy's files (lint/facts/vouch.py), checked against full extraction on real trees."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from conftest import vendor_hardcode
from patchops import api
from patchops.lint.extract import extract
from patchops.lint.extract.readers import GROUPS
from patchops.lint.facts import vouch
from patchops.lint.facts.cache import facts_for_copy
from patchops.lint.facts.model import HowRead, ReadKind, facts_for_version, shipped_versions
from tests.support import wheelcache

pytestmark = pytest.mark.vllm


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """Return a function that points PATCHOPS_CACHE at a fresh folder; call it once the trees are built
    (wheelcache unpacks under the same root)."""
    def empty():
        monkeypatch.setenv("PATCHOPS_CACHE", str(tmp_path / "cache"))
    return empty


def installed(version, tmp_path):
    """Return a writable copy of `version`'s tree, as pip leaves it (a RECORD beside it is not read)."""
    site = tmp_path / f"site-{version}"
    return wheelcache.copy_site_packages(version, site)


@pytest.mark.parametrize("version", ["0.8.5", "0.33.0"])
def test_an_unmodified_release_is_vouched_and_equals_extraction(version, tmp_path, empty_cache):
    site = installed(version, tmp_path)
    (site / "flashinfer").mkdir()   # an install's own: read, never taken from the release
    (site / "flashinfer" / "__init__.py").write_text("")
    empty_cache()
    facts, inputs, hashed = vouch.read_facts(site)
    full, consulted = extract(site)
    assert facts.read == HowRead(ReadKind.VOUCHED) and facts.to_dict()["read"] == "vouched"
    assert facts == full and facts.has_flashinfer is True and facts.origin == str(site)
    assert set(consulted) <= set(inputs)  # the facts cache still hashes everything they rest on
    assert hashed["vllm/engine/arg_utils.py"] == vouch.sha256((site / "vllm/engine/arg_utils.py").read_bytes())


def test_the_corex_fork_rereads_only_what_its_edit_touches(corex_tree, empty_cache):
    _, (lib, _) = corex_tree("0.8.5")
    vendor_hardcode(lib)
    empty_cache()
    facts, _, _ = vouch.read_facts(lib)
    full, _ = extract(lib)
    assert facts == full
    assert facts.hardcoded == {"enforce_eager": "True", "disable_custom_all_reduce": "True"}
    reads = vouch.release_reads("0.8.5")
    changed = vouch.changed_groups(reads, vouch.current(lib, reads))
    assert {"hardcoded", "flags"} <= set(changed) and "architectures" not in changed
    assert facts.read == HowRead(ReadKind.PARTIAL, len(changed), len(GROUPS))
    assert facts.to_dict()["read"] == f"partial: {len(changed)} of {len(GROUPS)} groups re-read"


def test_a_file_added_to_a_listed_folder_is_read(tmp_path, empty_cache):
    # oracle.py reads every module of vllm/platforms/: a vendor's new platform is a change
    site = installed("0.8.5", tmp_path)
    (site / "vllm/platforms/vendor_npu.py").write_text(
        "class NpuPlatform:\n    device_type = 'npu'\n    def supports_v1(self, model_config):\n"
        "        return True\n")
    empty_cache()
    facts, _, _ = vouch.read_facts(site)
    assert facts.read.kind is ReadKind.PARTIAL and facts.v1_platforms["vendor_npu"].device_type == "npu"
    assert facts == extract(site)[0]


def test_a_file_the_release_lacks_is_looked_for(tmp_path, empty_cache):
    # attention_facts tries the newest enum's home first; 0.8.5 has none there
    site = installed("0.8.5", tmp_path)
    (site / "vllm/v1/attention/backends/registry.py").write_text(
        "import enum\nclass AttentionBackendEnum(enum.Enum):\n    NPU_ATTN = 1\n")
    empty_cache()
    facts, _, _ = vouch.read_facts(site)
    assert facts.attention_backends == ("NPU_ATTN",) and (facts.read.kind, facts.read.changed) == (ReadKind.PARTIAL, 1)
    assert facts == extract(site)[0]


def test_a_copy_of_no_recorded_release_is_extracted(tmp_path, empty_cache):
    site = installed("0.8.5", tmp_path)
    (site / "vllm/_version.py").write_text("__version__ = version = '0.5.0'\n")  # older than any shipped
    empty_cache()
    facts, _, _ = vouch.read_facts(site)
    assert facts.read == HowRead(ReadKind.EXTRACTED) and facts.version == "0.5.0" and facts == extract(site)[0]


def test_lint_says_how_the_facts_were_read(tmp_path, empty_cache):
    site = installed("0.8.5", tmp_path)
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: facebook/opt-125m\n")
    empty_cache()
    assert api.lint(spec, vllm_path=site).facts_origin == f"{site} (vouched)"
    (site / "vllm/engine/arg_utils.py").write_text(
        (site / "vllm/engine/arg_utils.py").read_text() + "\n# a local edit\n")
    again = facts_for_copy(site)   # the cache sees the edit, the vouch sees which groups it touches
    assert again.read.kind is ReadKind.PARTIAL and again == extract(site)[0]


def test_every_shipped_release_has_reads_whose_notes_are_its_notes():
    for version in shipped_versions():
        reads = vouch.release_reads(version)
        assert reads is not None and set(reads["groups"]) == {g.name for g in GROUPS}, version
        notes = [n for g in GROUPS for n in reads["groups"][g.name]["notes"]]
        parsed = sorted({n for g in reads["groups"].values() for n in g["parsed"]})
        # 0.6.2's wheel names itself 0.6.1.dev238: the generator's note on that is no group's
        own = tuple(n for n in facts_for_version(version).notes if not n.startswith("vllm/_version.py of this"))
        assert tuple(notes + parsed) == own, version


def test_the_reads_of_0_8_5_are_what_its_groups_read_now():
    # fails when a reader changed without `python scripts/generate_facts.py --reads --all`
    recorded = json.loads(gzip.decompress((vouch.READS_DIR / "0.8.5.json.gz").read_bytes()))
    assert vouch.group_reads(wheelcache.site_packages("0.8.5")) == recorded


def test_a_damaged_record_costs_only_time(tmp_path, monkeypatch, empty_cache):
    site = installed("0.8.5", tmp_path)
    reads = tmp_path / "reads"
    reads.mkdir()
    (reads / "0.8.5.json.gz").write_bytes(b"not gzip")
    monkeypatch.setattr(vouch, "READS_DIR", reads)
    vouch.release_reads.cache_clear()
    empty_cache()
    try:
        facts, _, _ = vouch.read_facts(site)
    finally:
        vouch.release_reads.cache_clear()
    assert facts.read == HowRead(ReadKind.EXTRACTED) and facts == extract(site)[0]
    shutil.rmtree(reads)
