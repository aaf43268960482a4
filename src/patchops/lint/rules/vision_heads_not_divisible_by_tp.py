"""PO713 vision-heads-not-divisible-by-tp."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, vision_heads

# Qwen2-VL-2B-Instruct: 12 text heads (2 KV heads), a vision tower of 16 heads.
QWEN2_VL_2B = {"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
               "hidden_size": 1536, "num_attention_heads": 12, "num_key_value_heads": 2,
               "num_hidden_layers": 28, "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
               "vision_config": {"depth": 32, "embed_dim": 1280, "hidden_size": 1536, "num_heads": 16,
                                 "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2}}
# Llama-3.2-11B-Vision: 32 text heads, a vision tower of 16 `attention_heads`.
MLLAMA_11B = {"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama",
              "text_config": {"model_type": "mllama_text_model", "hidden_size": 4096, "num_attention_heads": 32,
                              "num_key_value_heads": 8, "num_hidden_layers": 40,
                              "max_position_embeddings": 131072},
              "vision_config": {"model_type": "mllama_vision_model", "hidden_size": 1280, "attention_heads": 16,
                                "num_hidden_layers": 32, "image_size": 560, "patch_size": 14}}
TP = "model: {m}\nargs:\n  tensor-parallel-size: {tp}\n"


class VisionHeadsNotDivisibleByTp(Rule):
    """
    ## What it does
    Flags a `tensor_parallel_size` that does not divide the attention heads of a multimodal
    model's vision tower, for the architectures whose tower vLLM splits across GPUs: Qwen2-VL
    and Qwen2.5-VL (`vision_config.num_heads`, 16 when unstated), the LLaVA family's CLIP,
    SigLIP and Pixtral towers (`num_attention_heads`), Mllama (`attention_heads`) and Llama 4
    (`num_attention_heads`). Not judged: a tower kept whole by `--mm-encoder-tp-mode data`,
    `--enable-multimodal-encoder-data-parallel` or the Transformers backend, a text-only launch
    (`--language-model-only`, every `--limit-mm-per-prompt` at 0), and other towers (InternViT
    pads its heads with dummy ones).

    ## Why is this bad?
    The engine config is built (the language model's heads divide), then each worker fails
    while it builds the vision encoder: `AssertionError: 16 is not divisible by 3`.

    ## Fix
    Use a tensor-parallel size that divides both head counts, spread the rest with pipeline
    parallelism, or run the vision encoder data-parallel (`--mm-encoder-tp-mode data`, where
    the release and model have it).
    """

    code = "PO713"
    name = "vision-heads-not-divisible-by-tp"
    severity = "error"
    versions = ">=0"
    stage = "later"
    vllm_message = vision_heads.MESSAGE
    needs = Needs(model=True)
    VALID = [
        Example(TP.format(m="Qwen/Qwen2-VL-2B-Instruct", tp=4), model=QWEN2_VL_2B),
        Example(TP.format(m="Qwen/Qwen2-VL-2B-Instruct", tp=4), vllm="0.11.0", model=QWEN2_VL_2B),
        Example(TP.format(m="Qwen/Qwen2-VL-2B-Instruct", tp=3) + "  mm-encoder-tp-mode: data\n",
                vllm="0.11.0", model=QWEN2_VL_2B),
    ]
    INVALID = [
        Example(TP.format(m="Qwen/Qwen2-VL-2B-Instruct", tp=3), model=QWEN2_VL_2B, at=(3, 3)),
        Example(TP.format(m="Qwen/Qwen2-VL-2B-Instruct", tp=6), vllm="0.11.0", model=QWEN2_VL_2B, at=(3, 3)),
        Example("vllm serve meta-llama/Llama-3.2-11B-Vision-Instruct --tensor-parallel-size 32\n",
                kind="command", model=MLLAMA_11B, at=(1, 53)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, "tensor_parallel_size")
        tp = inputs.to_int(found.value) if found is not None else None
        if tp is None:
            return
        split = vision_heads.breach(cfg, facts, tp)
        if split is None:
            return
        fits = [n for n in range(tp - 1, 0, -1) if split.heads % n == 0]
        text_heads = cfg.model_facts.num_attention_heads if cfg.model_facts is not None else None
        both = [n for n in fits if not text_heads or text_heads % n == 0]
        source = f"vision_config.{split.key}" + ("" if split.stated else " (unstated: transformers' default)")
        yield self.diagnostic(
            cfg, found,
            f"tensor_parallel_size {tp} does not divide the vision tower's {split.heads} attention heads",
            explanation=f"{split.architecture} splits its vision encoder's heads ({source}) across "
                        f"tensor-parallel ranks; vLLM {facts.version}'s workers fail while they build it",
            fields=("tensor_parallel_size",),
            fix=f"use a tensor-parallel size that divides {split.heads}" +
                (f", such as {(both or fits)[0]}" if both or fits else "") +
                ", or run the vision encoder data-parallel",
            vllm_message=split.message(tp))
