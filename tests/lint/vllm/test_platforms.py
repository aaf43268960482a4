"""lint/vllm/platforms.py: the vendor build that runs a config, and whether custom all-reduce runs."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import platforms

from handmade import as_read


def config(tp=None, hardware="platform: cuda", args=""):
    lines = [f"  tensor-parallel-size: {tp}" if tp is not None else "  seed: 0"] + ([f"  {args}"] if args else [])
    return as_read(load_text("model: /models/m\nargs:\n" + "\n".join(lines) + f"\nhardware: {{{hardware}}}\n"))


def test_a_stated_corex_platform_names_the_vendor():
    found = platforms.vendor(config(hardware="platform: CoreX"), facts_for_version("0.8.5"))
    assert (found.value, found.fields) == ("corex", ("hardware.platform",))
    assert platforms.vendor(config(), facts_for_version("0.8.5")).value is None


def test_a_corex_copy_says_how_it_is_known():
    facts = dataclasses.replace(facts_for_version("0.8.5"), vendor="corex")
    by_version = platforms.vendor(config(), dataclasses.replace(facts, version="0.8.5+corex.4.3.0"))
    assert by_version.value == "corex" and by_version.reason.endswith("version 0.8.5+corex.4.3.0")
    assert platforms.vendor(config(), facts).reason.endswith(f"installed in {facts.origin}")


def test_no_all_reduce_at_tensor_parallel_1():
    found = platforms.custom_allreduce(config(tp=1), facts_for_version("0.8.5"))
    assert (found.value, found.fields, found.reason) == \
        (False, (), "tensor_parallel_size is 1: there is no all-reduce")
    assert platforms.custom_allreduce(config(), facts_for_version("0.8.5")).value is False


@pytest.mark.parametrize("version, tp, runs", [("0.8.5", 2, True), ("0.8.5", 3, False), ("0.8.5", 8, True),
                                               ("0.8.5", 16, False), ("0.33.0", 16, True)])
def test_the_release_lists_the_world_sizes_it_supports(version, tp, runs):
    found = platforms.custom_allreduce(config(tp=tp), facts_for_version(version))
    assert found.value is runs and found.fields == ("tensor_parallel_size",)


def test_disabled_by_the_flag_or_by_the_build():
    facts = facts_for_version("0.8.5")
    assert platforms.custom_allreduce(config(tp=2, args="disable-custom-all-reduce: true"), facts).value is False
    assert platforms.custom_allreduce(config(tp=2, args="disable-custom-all-reduce: false"), facts).value is True
    hard = dataclasses.replace(facts, hardcoded={"disable_custom_all_reduce": "True"})
    found = platforms.custom_allreduce(config(tp=2), hard)
    assert found.value is False and "hardcodes" in found.reason
    soft = dataclasses.replace(facts, hardcoded={"disable_custom_all_reduce": "False"})
    assert platforms.custom_allreduce(config(tp=2), soft).value is True


@pytest.mark.parametrize("hardware, runs", [("platform: tpu", False), ("platform: cpu", False),
                                            ("platform: rocm, name: AMD Instinct MI250X", False),
                                            ("platform: rocm, name: AMD Instinct MI300X", True),
                                            ("platform: rocm", True), ("gpus: 2", True)])
def test_the_platform_decides_use_custom_allreduce(hardware, runs):
    found = platforms.custom_allreduce(config(tp=2, hardware=hardware), facts_for_version("0.8.5"))
    assert found.value is runs
    assert ("hardware.platform" in found.fields) is (not runs)
