"""lint/vllm/config_checks.py: a copy's config-class checks run on one config, three-valued."""

from __future__ import annotations

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import config_checks

from handmade import as_read


def config(*args, hardware="platform: cuda, gpus: 2"):
    body = "".join(f"  {a}\n" for a in args) or "  seed: 0\n"
    return as_read(load_text(f"model: /models/m\nargs:\n{body}hardware: {{{hardware}}}\n"))


def refused(version, *args):
    return [(r.config_class, r.exception, r.message) for r in config_checks.refusals(config(*args),
                                                                                     facts_for_version(version))]


@pytest.mark.parametrize("version", ["0.10.1.1", "0.33.0"])
def test_eplb_needs_expert_parallelism(version):
    assert refused(version, "enable-eplb: true") == \
        [("ParallelConfig", "ValueError", "enable_expert_parallel must be True to use EPLB.")]
    [(_, _, alone)] = refused(version, "enable-eplb: true", "enable-expert-parallel: true")
    assert alone.startswith("EPLB requires ")                      # ... and more than one GPU
    assert refused(version, "enable-eplb: true", "enable-expert-parallel: true", "tensor-parallel-size: 2") == []


def test_a_release_without_the_check_refuses_nothing():
    assert refused("0.8.5", "enable-eplb: true") == []


@pytest.mark.parametrize("rank, message", [(1, None), (2, "data_parallel_rank (2) must be in the range [0, 2)")])
def test_the_data_parallel_rank_must_be_below_the_size(rank, message):
    found = config_checks.refusals(config("data-parallel-size: 2", f"data-parallel-rank: {rank}"),
                                   facts_for_version("0.33.0"))
    assert [r.message for r in found] == ([message] if message else [])
    if message:
        assert [s.name for s in found[0].settings] == ["data_parallel_rank", "data_parallel_size"]
        assert found[0].settings[0].line == 4


def test_vllms_own_defaults_are_never_refused():
    assert refused("0.33.0") == []


def test_the_host_answers_the_stated_platform_and_that_ray_is_not_running():
    cuda = config_checks.host_answers(config())
    assert cuda["ray_initialized"] is False and cuda["device_count"] == 2
    assert (cuda["is_cuda"], cuda["is_rocm"], cuda["is_cpu"], cuda["is_cuda_alike"]) == (True, False, False, True)
    rocm = config_checks.host_answers(config(hardware="platform: rocm, gpus: 8"))
    assert (rocm["is_rocm"], rocm["is_cuda"], rocm["is_cuda_alike"], rocm["device_count"]) == (True, False, True, 8)
    cpu = config_checks.host_answers(config(hardware="platform: cpu, gpus: 2"))
    assert cpu["is_cpu"] and not cpu["is_cuda_alike"] and "device_count" not in cpu
    assert config_checks.host_answers(config(hardware="platform: corex")) == {"ray_initialized": False}
