"""`patchops explain` against the values real vLLM resolved (the recorded verdicts).

Every certain value explain shows for a case vLLM accepted is compared with the field the
harness recorded. Known disagreements are listed in explain_baseline.json (knowledge explain
does not have yet); the test fails on a new one and when a listed one starts to agree, so the
list only shrinks. Run with PATCHOPS_REBASELINE=1 to rewrite the list after checking a change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conformance import harness
from conformance.cases import all_cases
from patchops.core.errors import PatchopsError
from patchops.lint.input.serve_config import Setting
from patchops.lint.explain import explain
from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_command
from patchops.lint.input.model_source import GivenConfigs, choose

BASELINE = Path(__file__).with_name("explain_baseline.json")
# explain's row -> the harness's resolved field.
FIELDS = {"engine": "engine", "enable_chunked_prefill": "chunked_prefill",
          "max_num_batched_tokens": "max_num_batched_tokens", "max_num_seqs": "max_num_seqs",
          "max_model_len": "max_model_len", "cudagraph_capture_sizes": "cudagraph_capture_sizes",
          "block_size": "block_size", "enable_prefix_caching": "enable_prefix_caching",
          "enforce_eager": "enforce_eager", "tensor_parallel_size": "tensor_parallel_size",
          "pipeline_parallel_size": "pipeline_parallel_size",
          "gpu_memory_utilization": "gpu_memory_utilization"}


def same(field: str, shown, resolved: dict) -> bool:
    """Compare one value; two readings vLLM leaves in a form explain states plainly."""
    recorded = resolved[FIELDS[field]]
    if field == "enable_prefix_caching" and resolved.get("engine") == "V0" and recorded is None:
        return shown is False       # V0 leaves the field unset, which its cache reads as off
    if field == "cudagraph_capture_sizes" and (resolved.get("enforce_eager") or (
            resolved.get("engine") == "V1" and resolved.get("cudagraph_mode") == "NONE")):
        return shown == []          # vLLM keeps the list, but eager (or V1 with mode NONE) captures none of it
    if isinstance(recorded, list):
        return sorted(shown) == sorted(recorded)
    if isinstance(recorded, float) or isinstance(shown, float):
        return recorded is not None and abs(float(shown) - float(recorded)) < 1e-9
    return shown == recorded


def mismatches(version: str, workdir: Path) -> dict:
    facts = facts_for_version(version)
    verdicts = harness.load_verdicts(version)["cases"]
    found = {}
    for case in all_cases():
        verdict = verdicts.get(case.id)
        if not verdict or verdict.get("verdict") != "ok" or "resolved" not in verdict:
            continue
        folder = case.materialize(workdir)
        try:
            cfg = load_command(case.command(), path=f"{case.id}.sh", base_dir=str(folder))
        except PatchopsError:
            continue
        model = choose(cfg, GivenConfigs(), fetch=False)  # the model folder, as lint reads it
        gpu = case.profile()
        major, minor = gpu["capability"]
        for key, value in {"gpus": case.gpus, "memory_gib": gpu["memory_gib"], "platform": "cuda",
                           "compute_capability": f"{major}.{minor}", "name": gpu["name"]}.items():
            cfg.context[f"hardware.{key}"] = Setting(key=key, name=f"hardware.{key}", value=value,
                                                     line=1, column=1)
        for row in explain(cfg, facts, model=model):
            if row.field in FIELDS and FIELDS[row.field] in verdict["resolved"] and row.certain \
                    and row.value is not None and not same(row.field, row.value, verdict["resolved"]):
                found[f"{case.id} {row.field}"] = [row.value, verdict["resolved"][FIELDS[row.field]]]
    return found


@pytest.mark.vllm  # explains the corpus against real vLLM's resolved values
@pytest.mark.parametrize("version", harness.VERSIONS)
def test_explain_matches_what_vllm_resolved(version, tmp_path):
    found = mismatches(version, tmp_path)
    known = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    if os.environ.get("PATCHOPS_REBASELINE"):
        known[version] = sorted(found)
        BASELINE.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    listed = set(known.get(version, ()))
    new = {k: v for k, v in found.items() if k not in listed}
    assert not new, f"explain now disagrees with vLLM {version} (shown, resolved): {new}"
    fixed = sorted(listed - set(found))
    assert not fixed, f"these now agree with vLLM {version}; drop them from {BASELINE.name}: {fixed}"


def test_the_comparison_sees_a_wrong_value():
    resolved = {"engine": "V1", "max_num_seqs": 256, "enforce_eager": False,
                "cudagraph_capture_sizes": [1, 2], "enable_prefix_caching": None}
    assert same("max_num_seqs", 256, resolved) and not same("max_num_seqs", 1024, resolved)
    assert not same("enable_prefix_caching", False, resolved)          # V1: None is not "off"
    assert same("enable_prefix_caching", False, dict(resolved, engine="V0"))
    assert not same("cudagraph_capture_sizes", [], resolved)
    assert same("cudagraph_capture_sizes", [], dict(resolved, enforce_eager=True))
    assert same("cudagraph_capture_sizes", [], dict(resolved, cudagraph_mode="NONE"))
    assert not same("cudagraph_capture_sizes", [], dict(resolved, cudagraph_mode="NONE", engine="V0"))
    assert not same("cudagraph_capture_sizes", [1, 2], dict(resolved, cudagraph_mode="NONE"))
    assert not same("cudagraph_capture_sizes", [], dict(resolved, cudagraph_mode="PIECEWISE"))
