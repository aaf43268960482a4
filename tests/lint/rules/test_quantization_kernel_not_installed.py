"""PO818: a GPTQ checkpoint vLLM moves to the BitBLAS kernel by itself, without bitblas installed.

The facts come from the real trees: 0.8.5 (gptq_bitblas's claim path never imports bitblas),
0.10.1.1 (it tries `import bitblas` first and says no), 0.6.3.post1 (no override list, no
BitBLAS). The rule is judged on both sides of each boundary the facts draw.
"""

from __future__ import annotations

import json

import pytest

from patchops.lint.facts import cache as facts_mod
from patchops.lint.facts.cache import facts_for_copy
from patchops.lint.extract.registries import quantization_limits
from patchops.lint.extract.source_tree import Source
from patchops.lint.facts.model import facts_for_version
from patchops.lint.rule import Example
from patchops.lint.runner import lint_config, lint_example
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from tests.support import wheelcache

from handmade import model_of

GPTQ = {"model_type": "qwen2", "num_attention_heads": 28, "num_key_value_heads": 4,
        "max_position_embeddings": 32768, "torch_dtype": "float16",
        "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True,
                                "desc_act": False}}
MESSAGE = ("Trying to use the bitblas backend, but could not importwith the following error: No module named "
           "'bitblas'. Please install bitblas through the following command: `pip install bitblas>=0.1.0`")


def spec(cc: str, args: str = "") -> str:
    return f"model: org/qwen-gptq\nhardware: {{gpus: 1, compute_capability: {cc}}}\n" + \
        (f"args:\n{args}" if args else "")


def po818(text: str, vllm: str = "0.8.5", model: dict = GPTQ, **facts):
    return [d for d in lint_example(Example(text, vllm=vllm, model=model, facts=facts)) if d.code == "PO818"]


def with_quant(**changes) -> dict:
    return {**GPTQ, "quantization_config": {**GPTQ["quantization_config"], **changes}}


# --- the facts, read from the real trees ---------------------------------------------------


def limits(version: str) -> dict:
    return quantization_limits(Source(wheelcache.site_packages(version, with_flash_attn=False)))


def test_085_gptq_bitblas_imports_bitblas_only_in_init():
    found = limits("0.8.5")
    assert found["gptq_bitblas"]["needs_package"] == {"name": "bitblas", "min_version": "0.1.0",
                                                      "checked_first": False}
    assert found["gptq_bitblas"]["converts"] == {"keys": ["bits", "group_size", "sym", "desc_act"],
                                                 "bits_sym": [[4, True], [8, True]],
                                                 "group_sizes": [-1, 32, 64, 128]}
    assert found["gptq_bitblas"]["min_capability"] == 70
    # _verify_quantization's order: the Marlin conversion is asked before the BitBLAS one
    ranks = {m: e["override_rank"] for m, e in found.items() if "override_rank" in e}
    assert [m for m, _ in sorted(ranks.items(), key=lambda i: i[1])][:5] == [
        "marlin", "bitblas", "gptq_marlin_24", "gptq_marlin", "gptq_bitblas"]
    assert found["gptq_marlin"]["converts"]["quant_method"] == "gptq"
    assert "needs_package" not in found["gptq_marlin"]
    assert found["bitblas"]["claims_format"] == {"checkpoint_format": "bitblas", "is_bitblas_format": True}
    assert "claims_format" not in found["ipex"]   # reads quant_method, but asks the platform


def test_010_gptq_bitblas_tries_the_import_before_it_claims():
    found = limits("0.10.1.1")
    assert found["gptq_bitblas"]["needs_package"]["checked_first"] is True
    assert found["bitblas"]["needs_package"]["checked_first"] is False   # a format claim checks nothing


def test_063_has_no_overrides_list_and_no_bitblas():
    found = limits("0.6.3.post1")
    assert not any("needs_package" in e or "override_rank" in e for e in found.values())
    assert "gptq_bitblas" not in found


def test_shipped_facts_leave_bitblas_presence_unknown():
    assert facts_for_version("0.8.5").has_bitblas is None


# --- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cc, fires", [("6.0", False), ("7.0", True), ("7.5", True), ("8.0", False)])
def test_the_capability_boundaries(cc, fires):
    # below 70 gptq_bitblas does not claim; from 80 gptq_marlin claims first
    assert bool(po818(spec(cc))) is fires


def test_error_names_vllms_message_and_the_fix():
    [found] = po818(spec("7.0"))
    assert found.severity == "error" and (found.line, found.column) == (1, 1)
    assert found.vllm_message == MESSAGE
    assert "gptq_bitblas" in found.message and "0.8.5" in found.explanation
    assert "--quantization gptq" in found.fix and "pip install bitblas" in found.fix


def test_the_same_launch_on_0_10_1_1_is_fine():
    assert po818(spec("7.0"), vllm="0.10.1.1") == []
    assert po818(spec("7.5"), vllm="0.10.1.1", has_bitblas=False) == []


@pytest.mark.parametrize("changes", [{"sym": False}, {"group_size": 256}, {"bits": 3}, {"desc_act": None}])
def test_a_checkpoint_the_conversion_refuses_is_not_flagged(changes):
    assert po818(spec("7.0"), model=with_quant(**changes)) == []


def test_explicit_quantization_gptq_keeps_the_plain_kernel():
    assert po818(spec("7.0", "  quantization: gptq\n")) == []
    [found] = po818(spec("7.0", "  quantization: gptq_bitblas\n"))
    assert (found.line, found.column) == (4, 3)


def test_bitblas_installed_or_unknown():
    assert po818(spec("7.0"), has_bitblas=True) == []
    [certain] = po818(spec("7.0"), has_bitblas=False)
    assert certain.severity == "error" and "not installed beside this vLLM 0.8.5" in certain.explanation
    [unsure] = po818(spec("7.0"), required_dists=())
    assert unsure.severity == "info"


def test_a_bitblas_format_checkpoint_needs_bitblas_on_any_gpu_until_0_15():
    model = with_quant(checkpoint_format="bitblas")
    for version in ("0.8.5", "0.10.1.1", "0.15.0"):
        [found] = po818(spec("8.0"), vllm=version, model=model)
        assert found.vllm_message == MESSAGE and "--quantization" not in found.fix
    assert po818(spec("8.0"), vllm="0.20.0", model=model) == []    # BitBLAS is gone
    assert po818(spec("8.0"), model=with_quant(checkpoint_format="marlin")) == []   # marlin claims it


def test_an_inspected_copy_answers_for_itself(tmp_path, monkeypatch):
    monkeypatch.setattr(facts_mod, "facts_cache_dir", lambda: tmp_path / "facts-cache")
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(GPTQ))

    def codes():
        cfg = load_text(spec("7.0").replace("org/qwen-gptq", str(model)), path="serve.yaml")
        source = model_of(cfg, model_facts_from_dict(GPTQ))
        return [d.code for d in lint_config(cfg, facts_for_copy(site), model=source) if d.severity == "error"]

    assert facts_for_copy(site).has_bitblas is False and "PO818" in codes()
    (site / "bitblas").mkdir()
    (site / "bitblas" / "__init__.py").write_text("")
    assert facts_for_copy(site).has_bitblas is True and "PO818" not in codes()


def test_a_claim_path_that_checks_the_package_first_is_not_flagged():
    facts = facts_for_version("0.8.5")
    limits = {method: entry.to_dict() for method, entry in facts.quantization_limits.items()}
    limits["gptq_bitblas"]["needs_package"]["checked_first"] = True
    assert po818(spec("7.0"), quantization_limits=limits) == []
