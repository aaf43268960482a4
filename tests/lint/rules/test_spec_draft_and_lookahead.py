"""Checks read from the copy that real vLLM showed missing (conformance): both sides of each.

PO321: 0.10-0.12 name the method by the draft model (a medusa method with a Qwen2 draft is a
plain draft model, refused); 0.12+ refuse LoRA with a speculative config whose steps do not fit
the token budget. PO111: `num_lookahead_slots` meets SchedulerConfig's guard from 0.10.1 on.
"""

from __future__ import annotations

import json

import pytest

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.runner import lint_config


def run(text, vllm, code):
    cfg = load_text(text, path="serve.yaml", kind="command" if text.startswith(("vllm", "VLLM")) else "spec")
    return [(d.code, d.severity, d.line, d.column) for d in lint_config(cfg, facts_for_version(vllm))
            if d.code == code]


def draft(tmp_path, name, **config):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


def spec(method, model, tokens=2):
    body = {"model": model, "num_speculative_tokens": tokens}
    if method:
        body["method"] = method
    return f"vllm serve m --speculative-config '{json.dumps(body)}'\n"


# --- PO321: the method detected from the draft model (0.10-0.12) ------------------------------

QWEN2 = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}


@pytest.mark.parametrize("vllm", ["0.10.0", "0.10.1.1", "0.11.0", "0.12.0"])
def test_medusa_with_a_plain_draft_is_refused(tmp_path, vllm):
    assert run(spec("medusa", draft(tmp_path, "qwen", **QWEN2)), vllm, "PO321") == [("PO321", "error", 1, 14)]


@pytest.mark.parametrize("vllm", ["0.8.5", "0.9.2", "0.15.0", "0.33.0"])
def test_no_detection_chain_no_refusal(tmp_path, vllm):
    # 0.8.5-0.9.2 run it as a draft model; 0.15+ have no chain (0.33: the method literal, PO112)
    assert run(spec("medusa", draft(tmp_path, "qwen", **QWEN2)), vllm, "PO321") == []


@pytest.mark.parametrize("method, name, config", [
    ("medusa", "head", {"model_type": "medusa"}),                     # detected by model_type
    ("mlp_speculator", "spec", {"model_type": "mlp_speculator"}),
    ("eagle", "qwen", QWEN2),                                         # a method the chain keeps
    (None, "EAGLE-Qwen", QWEN2),                                      # detected by name
    ("medusa", "v3", {"model_type": "deepseek_v3"}),                  # hf_config_override rewrites it
])
def test_detected_drafts_pass(tmp_path, method, name, config):
    assert run(spec(method, draft(tmp_path, name, **config)), "0.10.1.1", "PO321") == []


def test_without_a_method_the_draft_config_decides_not_its_name(tmp_path):
    # the name guess (no "medusa" in "my-head") gives way to the model_type vLLM reads
    assert run(spec(None, draft(tmp_path, "my-head", model_type="medusa")), "0.10.1.1", "PO321") == []
    assert run(spec(None, draft(tmp_path, "my-draft", **QWEN2)), "0.10.1.1", "PO321") == [("PO321", "error", 1, 14)]
    assert run(spec(None, "org/my-head"), "0.10.1.1", "PO321") == [("PO321", "error", 1, 14)]   # a guess by name


def test_draft_not_on_this_machine_is_not_judged():
    assert run(spec("medusa", "org/not-downloaded-medusa"), "0.10.1.1", "PO321") == []


def test_the_served_model_as_its_own_draft(tmp_path):
    model = draft(tmp_path, "served", **QWEN2)
    text = f"vllm serve {model} --speculative-config '{json.dumps({'method': 'medusa', 'model': model, 'num_speculative_tokens': 2})}'\n"
    assert run(text, "0.10.1.1", "PO321") == [("PO321", "error", 1, text.index("--speculative") + 1)]


def test_detection_chain_read_from_the_copy():
    chain = facts_for_version("0.10.1.1").nested_configs["speculative_config"].draft_detection
    assert list(chain.branches[:3]) == [["keep", ["eagle", "eagle3"], None], ["name", ["eagle-", "eagle3-"], "eagle"],
                                     ["model_type", ["medusa"], "medusa"]]
    assert "deepseek_v3" in chain.rewritten
    assert facts_for_version("0.9.2").nested_configs["speculative_config"].draft_detection is None


# --- PO321: LoRA + speculative decoding token budget (0.12+) ----------------------------------

def lora(budget, seqs="--max-num-seqs 128 ", tokens=4, lora_flag="--enable-lora "):
    body = json.dumps({"method": "ngram", "num_speculative_tokens": tokens, "prompt_lookup_max": 4})
    return f"vllm serve m {lora_flag}--max-num-batched-tokens {budget} {seqs}--speculative-config '{body}'\n"


@pytest.mark.parametrize("vllm", ["0.12.0", "0.32.0", "0.33.0"])
@pytest.mark.parametrize("budget, bad", [(640, False), (639, True), (256, True)])
def test_lora_budget_boundary(vllm, budget, bad):
    found = run(lora(budget), vllm, "PO321")
    assert found == ([("PO321", "error", 1, len(lora(budget).split("--speculative-config")[0]) + 1)] if bad else [])


def test_lora_budget_needs_lora_and_the_guard():
    assert run(lora(256, lora_flag=""), "0.33.0", "PO321") == []
    assert run(lora(256), "0.11.0", "PO321") == []


def test_lora_budget_by_default_max_num_seqs():
    # 2 speculative tokens: 3 per sequence; max_num_seqs defaults to 256 (A100, < 70 GiB) or 1024
    text = lora(1024, seqs="", tokens=2)
    assert [f[1] for f in run(text, "0.33.0", "PO321")] == ["warning"]
    h100 = "hardware: {gpus: 1, memory_gib: 80, compute_capability: 9.0}\n"
    body = '{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 2}'
    text = f"model: m\n{h100}args:\n  enable-lora: true\n  max-num-batched-tokens: 1024\n  speculative-config: '{body}'\n"
    assert run(text, "0.33.0", "PO321") == [("PO321", "error", 6, 3)]
    l40s = "hardware: {gpus: 1, memory_gib: 48, compute_capability: 8.9}\n"
    assert run(text.replace(h100, l40s), "0.33.0", "PO321") == []


# --- PO111: num_lookahead_slots reaches its guard from 0.10.1 ---------------------------------

@pytest.mark.parametrize("vllm, value, bad", [
    ("0.8.5", -1, False), ("0.10.0", -1, False),        # EngineArgs passes max(value, steps - 1)
    ("0.10.1.1", -1, True), ("0.10.1.1", 0, False), ("0.11.0", -1, True), ("0.11.0", 0, False),
])
def test_lookahead_slots(vllm, value, bad):
    found = run(f"model: m\nargs:\n  num-lookahead-slots: {value}\n", vllm, "PO111")
    assert found == ([("PO111", "error", 3, 3)] if bad else [])


def test_lookahead_slots_replaced_by_the_speculative_config():
    body = '{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 3}'
    assert run(f"vllm serve m --num-lookahead-slots -1 --speculative-config '{body}'\n", "0.10.1.1", "PO111") == []
    assert facts_for_version("0.10.1.1").value_ranges["num_lookahead_slots"]["unless_set"] == "speculative_config"
