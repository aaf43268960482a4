"""lint/vllm/packages.py: whether flashinfer or bitblas is importable beside a copy, and how sure."""

from __future__ import annotations

import dataclasses

from patchops.lint.facts.model import facts_for_version
from patchops.lint.vllm import packages


def test_an_inspected_copy_answers_for_itself():
    facts = facts_for_version("0.12.0")             # its wheel requires flashinfer-python
    found = packages.present(dataclasses.replace(facts, has_flashinfer=False), "flashinfer")
    assert (found.value, found.certain) == (False, True)
    assert found.reason == "flashinfer is not installed beside this vLLM 0.12.0"
    found = packages.present(dataclasses.replace(facts_for_version("0.8.5"), has_bitblas=True), "bitblas")
    assert (found.value, found.certain) == (True, True)


def test_flashinfer_is_a_wheel_dependency_from_0_12_only():
    new = packages.present(facts_for_version("0.12.0"), "flashinfer")
    old = packages.present(facts_for_version("0.11.0"), "flashinfer")
    assert (new.value, new.certain) == (True, False) and "brings it" in new.reason
    assert (old.value, old.certain) == (False, False) and "lacks it" in old.reason


def test_either_distribution_name_installs_flashinfer():
    facts = dataclasses.replace(facts_for_version("0.11.0"), required_dists=("flashinfer",))
    assert packages.present(facts, "flashinfer").value is True


def test_bitblas_is_no_wheel_dependency():
    assert packages.present(facts_for_version("0.33.0"), "bitblas").value is False


def test_facts_without_dependencies_cannot_tell():
    found = packages.present(dataclasses.replace(facts_for_version("0.8.5"), required_dists=()), "flashinfer")
    assert (found.value, found.certain) == (None, False)
