"""lint/vllm/vision_heads.py: which vision towers vLLM splits by tensor parallelism, and when not."""

from __future__ import annotations

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.vllm import vision_heads

from handmade import as_read

QWEN2_VL = {"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
            "num_attention_heads": 12, "vision_config": {"num_heads": 16}}
LLAVA = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
         "text_config": {"model_type": "llama", "num_attention_heads": 32},
         "vision_config": {"model_type": "clip_vision_model", "num_attention_heads": 16}}


def config(model, args=""):
    cfg = load_text("model: /models/m\nargs:\n  seed: 0\n" + args, path="serve.yaml")
    return as_read(cfg, model_facts_from_dict(model))


def test_a_tp_size_that_divides_the_heads_passes_and_one_that_does_not_is_caught():
    facts = facts_for_version("0.8.5")
    assert vision_heads.breach(config(QWEN2_VL), facts, 4) is None
    found = vision_heads.breach(config(QWEN2_VL), facts, 3)
    assert (found.heads, found.key, found.stated) == (16, "num_heads", True)
    assert found.message(3) == "16 is not divisible by 3"
    assert vision_heads.breach(config(QWEN2_VL), facts, 1) is None


def test_unstated_qwen_heads_take_transformers_default_and_unstated_clip_heads_are_not_judged():
    facts = facts_for_version("0.8.5")
    found = vision_heads.breach(config(dict(QWEN2_VL, vision_config={})), facts, 3)
    assert (found.heads, found.stated) == (16, False)
    bare = dict(LLAVA, vision_config={"model_type": "clip_vision_model"})
    assert vision_heads.breach(config(bare), facts, 3) is None
    assert vision_heads.breach(config(LLAVA), facts, 3).key == "num_attention_heads"


def test_an_architecture_without_a_sharded_tower_or_unregistered_is_not_judged():
    facts = facts_for_version("0.8.5")
    other = dict(QWEN2_VL, architectures=["InternVLChatModel"])
    assert vision_heads.breach(config(other), facts, 3) is None
    unknown = dict(QWEN2_VL, architectures=["MyQwen2VL"])
    assert vision_heads.breach(config(unknown), facts, 3) is None


def test_a_tower_kept_off_tensor_parallelism_is_not_judged():
    facts = facts_for_version("0.11.0")
    assert vision_heads.breach(config(QWEN2_VL, "  mm-encoder-tp-mode: data\n"), facts, 3) is None
    assert vision_heads.breach(config(QWEN2_VL, "  mm-encoder-tp-mode: weights\n"), facts, 3) is not None
    assert vision_heads.breach(config(QWEN2_VL, "  model-impl: transformers\n"), facts, 3) is None


def test_only_a_limit_of_zero_for_every_modality_skips_the_tower():
    facts = facts_for_version("0.11.0")
    none = "  limit-mm-per-prompt: '{\"image\": 0, \"video\": 0}'\n"
    some = "  limit-mm-per-prompt: '{\"image\": 0, \"video\": 1}'\n"
    assert vision_heads.breach(config(QWEN2_VL, none), facts, 3) is None
    assert vision_heads.breach(config(QWEN2_VL, some), facts, 3) is not None
    assert vision_heads.breach(config(QWEN2_VL, "  limit-mm-per-prompt: '{}'\n"), facts, 3) is not None
