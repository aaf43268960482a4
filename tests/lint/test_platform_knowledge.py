"""The V1 oracle, custom all-reduce and vendor facts read from real vLLM trees, and the rules
that use them (PO306, PO307, PO612, PO507) on copies shaped like a fork."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchops import api, patching
from patchops.lint.facts.model import facts_for_version
from patchops.lint.facts.cache import facts_for_copy
from patchops.lint.extract.vendor import vendor_of
from patchops.host.locate import locate_site
from patchops.patchset.model import get_patchset
from tests.support import wheelcache

from lintkit import findings

ARG_UTILS = "vllm/engine/arg_utils.py"
COREX_SPEC = ("model: m\nhardware: {platform: corex, gpus: 4, memory_gib: 32}\n"
              "args:\n  tensor-parallel-size: 4\n")


def oracle(version):
    return facts_for_copy(wheelcache.site_packages(version)).v1_oracle


def test_oracle_features_read_from_real_trees():
    v085 = oracle("0.8.5")
    assert ("--preemption-mode", "unsupported") in v085 and ("ngram", "experimental") in v085
    # the f-string's field as {}; the name assigned just before its call, by its value
    assert ("--load_format {}", "unsupported") in v085
    assert ("VLLM_ATTENTION_BACKEND={}", "unsupported") in v085
    assert [t for t, _ in v085].index("--kv-cache-dtype") < [t for t, _ in v085].index("--enable-prompt-adapter")
    v011 = [t for t, _ in oracle("0.11.0")]
    assert "--preemption-mode" not in v011 and "Concurrent Partial Prefill" in v011
    assert oracle("0.33.0") == (("Pipeline Parallelism without Ray distributed executor or multiprocessing "
                                 "executor or external launcher", "refused"),)
    assert oracle("0.7.3") == ()


def test_custom_allreduce_world_sizes_from_real_trees():
    assert facts_for_copy(wheelcache.site_packages("0.25.0")).custom_allreduce.world_sizes == (2, 4, 6, 8)
    assert facts_for_copy(wheelcache.site_packages("0.30.0")).custom_allreduce.world_sizes == (2, 4, 6, 8, 16)


def test_vendor_markers():
    assert vendor_of(Path("/opt/venv/lib/python3.10/site-packages"), "0.8.5-corex.4.2") == "corex"
    assert vendor_of(Path("/usr/local/corex/lib64/python3/dist-packages"), "0.8.5") == "corex"
    assert vendor_of(Path("/opt/venv/lib/python3.10/site-packages"), "0.8.5+cu121") is None


def test_a_fork_without_the_check_is_linted_as_it_is(tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site")
    path = site / ARG_UTILS
    path.write_text(path.read_text().replace('feature_name="--preemption-mode"', 'feature_name="--fork-kept"'))
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nargs:\n  preemption-mode: swap\n")
    assert [d.code for d in api.lint(spec, vllm_path=site).diagnostics if d.code == "PO306"] == []
    upstream = api.lint(spec, vllm_path=wheelcache.site_packages("0.8.5")).diagnostics
    assert [d.severity for d in upstream if d.code == "PO306"] == ["warning"]


@pytest.mark.parametrize("version,env,expected", [
    ("0.8.5", "", "warning"),          # ngram is experimental: V1 unset falls back
    ("0.8.5", "env:\n  VLLM_USE_V1: \"1\"\n", None),   # ... and VLLM_USE_V1=1 keeps V1
    ("0.9.2", "", None),               # 0.9: ngram is a V1 method
])
def test_experimental_speculative_method(version, env, expected):
    text = ("model: m\n" + env + "args:\n  speculative-config: '{\"method\": \"ngram\", "
            "\"num_speculative_tokens\": 2, \"prompt_lookup_max\": 3}'\n")
    assert [d.severity for d in findings("PO306", text, version)] == ([expected] if expected else [])


def test_fallback_names_the_setting_and_the_cost():
    [found] = findings("PO306", "model: m\nargs:\n  scheduler-delay-factor: 0.5\n", "0.10.1.1")
    assert found.message == ("no V1 support for scheduler-delay-factor: 0.5: vLLM 0.10.1.1 silently "
                             "falls back to V0")
    assert found.explanation.startswith("the V1 engine does not support --scheduler-delay-factor "
                                        "(scheduler-delay-factor: 0.5), so the older, slower V0 engine runs")
    assert found.vllm_message == ("--scheduler-delay-factor is not supported by the V1 Engine. Falling back to "
                                  "V0. We recommend to remove --scheduler-delay-factor from your config in "
                                  "favor of the V1 Engine.")


def test_pipeline_parallel_executor_by_version():
    uni = "model: m\nenv:\n  VLLM_USE_V1: \"1\"\nargs:\n  pipeline-parallel-size: 2\n  distributed-executor-backend: {}\n"
    assert findings("PO306", uni.format("mp"), "0.8.5")[0].vllm_message == (
        "VLLM_USE_V1=1 is not supported with Pipeline Parallelism without Ray distributed executor.")
    assert findings("PO306", uni.format("mp"), "0.10.1.1") == []
    [kept] = findings("PO306", uni.format("uni"), "0.10.1.1")
    assert kept.severity == "error" and "multiprocessing executor" in kept.vllm_message
    [refused] = findings("PO307", uni.format("uni"), "0.33.0")
    assert refused.vllm_message.startswith("Pipeline Parallelism without Ray distributed executor or "
                                           "multiprocessing executor or external launcher is not supported.")


def test_0_11_removed_flags_are_parse_errors_not_fallbacks():
    found = findings(None, "model: m\nargs:\n  preemption-mode: swap\n", "0.11.0")
    assert [d.code for d in found if d.severity == "error"] == ["PO101"]


def _corex_site(tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site")
    wheelcache.hardcode_like_corex(site)
    return site


def test_corex_graph_hang_returns_after_the_patchset(tmp_path):
    site = _corex_site(tmp_path)
    spec = tmp_path / "serve.yaml"
    spec.write_text(COREX_SPEC)
    stock = [d.code for d in api.lint(spec, vllm_path=site).diagnostics]
    assert "PO612" not in stock and "PO611" in stock  # the fork never captures
    patching.commit_apply(patching.plan_apply([locate_site(site)], [get_patchset("corex-eager-allreduce")]))
    [hang] = [d for d in api.lint(spec, vllm_path=site).diagnostics if d.code == "PO612"]
    assert (hang.line, hang.severity) == (4, "error") and "honours --enforce-eager" in hang.explanation
    spec.write_text(COREX_SPEC + "  enforce-eager: true\n")
    assert "PO612" not in [d.code for d in api.lint(spec, vllm_path=site).diagnostics]


def test_corex_detected_from_the_copy_version(tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site")
    version_file = site / "vllm" / "_version.py"
    version_file.write_text(version_file.read_text().replace("0.8.5", "0.8.5-corex.4.2"))
    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nargs:\n  tensor-parallel-size: 2\n")
    [hang] = [d for d in api.lint(spec, vllm_path=site).diagnostics if d.code == "PO612"]
    assert "version 0.8.5-corex.4.2" in hang.explanation


@pytest.mark.parametrize("tp,version,expected", [
    (2, "0.8.5", None), (8, "0.8.5", None), (3, "0.8.5", "warning"), (12, "0.33.0", "warning"),
    (16, "0.25.0", "warning"), (16, "0.30.0", None), (1, "0.8.5", None),
])
def test_custom_allreduce_world_sizes(tp, version, expected):
    found = findings("PO507", f"model: m\nargs:\n  tensor-parallel-size: {tp}\n", version)
    assert [d.severity for d in found] == ([expected] if expected else [])


def test_custom_allreduce_platform_guard():
    cpu = findings("PO507", "model: m\nhardware: {platform: cpu}\nargs:\n  tensor-parallel-size: 2\n", "0.10.1.1")
    assert [d.severity for d in cpu] == ["info"] and "use_custom_allreduce() is False" in cpu[0].explanation
    mi300 = "model: m\nhardware: {platform: rocm, name: AMD Instinct MI300X}\nargs:\n  tensor-parallel-size: 2\n"
    assert findings("PO507", mi300, "0.10.1.1") == []


def test_shipped_facts_carry_the_oracle():
    assert facts_for_version("0.10.1.1").v1_oracle[0] == ("--load_format {}", "unsupported")
