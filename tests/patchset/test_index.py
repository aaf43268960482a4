"""The patchset index answers as the loaded patchset would, and never for other bytes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from patchops.patchset import index as patchset_index
from patchops.core.errors import PatchsetError
from patchops.patchset.model import SHIPPED_DIR, load_patchset

# decode-step-timing's ops carry their own ranges: the files differ on each side of 0.7.3 and 0.11.
VERSIONS = ["0.6.3.post1", "0.7.3", "0.10.2", "0.11.0", "0.12.0", "0.5.0", None, "dev"]


@pytest.fixture
def yaml_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCHOPS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "decode-step-timing.yaml"
    shutil.copy(SHIPPED_DIR / "decode-step-timing.yaml", path)
    return path


def no_loading(monkeypatch):
    def refuse(text, path):
        raise AssertionError("loaded the YAML although the index knew the answer")
    monkeypatch.setattr(patchset_index, "load_patchset_text", refuse)


def test_indexed_answers_equal_the_loaded_patchset(yaml_file, monkeypatch):
    real = load_patchset(yaml_file)
    first = patchset_index.load(yaml_file)
    assert [first.files_for(v) for v in VERSIONS] == [real.files_for(v) for v in VERSIONS]
    no_loading(monkeypatch)
    again = patchset_index.load(yaml_file)
    assert isinstance(again, patchset_index.IndexedPatchset)
    assert (again.name, again.summary, again.description, again.notes, again.path, again.text) == \
        (real.name, real.summary, real.description, real.notes, real.path, real.text)
    assert (str(again.versions), again.files) == (str(real.versions), real.files)
    assert [again.applies_to(v) for v in VERSIONS] == [real.applies_to(v) for v in VERSIONS]
    assert [again.files_for(v) for v in VERSIONS] == [real.files_for(v) for v in VERSIONS]
    assert len({again.files_for(v) for v in VERSIONS}) > 2 and not again.applies_to("0.5.0")


def test_a_version_not_asked_before_loads_the_ops_once_then_answers_from_the_index(yaml_file, monkeypatch):
    patchset_index.load(yaml_file).files_for("0.8.5")
    loads = []
    real_load = patchset_index.load_patchset_text
    monkeypatch.setattr(patchset_index, "load_patchset_text",
                        lambda text, path: loads.append(path) or real_load(text, path))
    assert patchset_index.load(yaml_file).files_for("0.12.0") == load_patchset(yaml_file).files_for("0.12.0")
    assert len(loads) == 1
    assert patchset_index.load(yaml_file).files_for("0.12.0") and len(loads) == 1


def test_changed_bytes_are_never_answered_from_the_old_entry(yaml_file):
    assert patchset_index.load(yaml_file).applies_to("0.8.5")
    yaml_file.write_text(yaml_file.read_text().replace('vllm: ">=0.6.3"', 'vllm: ">=0.9"', 1))
    changed = patchset_index.load(yaml_file)
    assert not changed.applies_to("0.8.5") and str(changed.versions) == ">=0.9"


def test_a_broken_patchset_is_never_indexed(yaml_file):
    yaml_file.write_text(yaml_file.read_text().replace("ops:", "ops: [", 1))
    for _ in range(2):
        with pytest.raises(PatchsetError, match=r"decode-step-timing.yaml:\d+:\d+: invalid YAML"):
            patchset_index.load(yaml_file)
    assert not list(Path(patchset_index.cache_root(), "patchsets").glob("*.json"))


def test_a_corrupt_entry_is_only_slower(yaml_file):
    patchset_index.load(yaml_file).files_for("0.8.5")
    [entry] = Path(patchset_index.cache_root(), "patchsets").glob("*.json")
    data = json.loads(entry.read_text())
    data["by_version"]["0.8.5"] = "nonsense"
    entry.write_text(json.dumps(data))
    assert patchset_index.load(yaml_file).files_for("0.8.5") == load_patchset(yaml_file).files_for("0.8.5")


def test_ops_load_on_first_use(yaml_file):
    patchset_index.load(yaml_file)
    again = patchset_index.load(yaml_file)
    assert again.ops == load_patchset(yaml_file).ops
    assert again.ops_for("0.12.0") == load_patchset(yaml_file).ops_for("0.12.0")
