"""Whether a quantized checkpoint's per-GPU shards fit the kernels vLLM gives its layers.

vLLM splits each linear layer across tensor-parallel ranks (model_executor/layers/linear.py):
column-parallel layers (qkv_proj, gate_up_proj) split their outputs, row-parallel ones
(o_proj, down_proj) their inputs, and fused MoE experts their intermediate size (not with
expert parallelism). When the weights are created, each quantized kernel checks its shard
against its tile with the constants and messages the copy holds (extract/kernel_tiles.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from patchops.lint.facts.groups import Fp8BlockTiles, KernelTiles, MarlinTiles, PlainTiles
from patchops.lint.vllm.prediction import Prediction

MARLIN_GROUPS = (-1, 32, 64, 128)       # MARLIN_SUPPORTED_GROUP_SIZES, every release
MARLIN_MIN_CAPABILITY = 80              # check_marlin_supported's minimum compute capability


@dataclass(frozen=True)
class Shard:
    """One linear layer's weight on one GPU: `parts` are a merged layer's output pieces."""

    layer: str
    parallel: str          # "column", "row" or "experts"
    full_in: int
    part_in: int
    full_out: int
    parts: Tuple[int, ...]


@dataclass(frozen=True)
class Breach:
    """A shard a kernel refuses: what, by how much, the tile it misses, vLLM's message."""

    shard: Shard
    side: str              # "inputs" or "outputs"
    size: int
    tile: int
    kernel: str            # "FP8 block_k", "Marlin k tile" (min_thread_k), "AWQ group size", ...
    message: str


def quant_config(text_config: Dict[str, Any], config_path: str) -> Dict[str, Any]:
    """Return the quantization_config of the text config or of config.json itself (a multimodal
    model's sits beside its text_config), else quantize_config.json beside it, else {}."""
    inline = text_config.get("quantization_config")
    if isinstance(inline, dict):
        return inline
    path = Path(config_path)
    for name, key in (("config.json", "quantization_config"), ("quantize_config.json", None)):
        try:
            found = json.loads((path.parent / name).read_text(encoding="utf-8")) if path.is_file() else {}
        except (OSError, ValueError):
            continue
        found = found.get(key) if key and isinstance(found, dict) else found
        if isinstance(found, dict) and found:
            return found
    return {}


def shards(config: Dict[str, Any], tp: int, expert_parallel: bool = False) -> List[Shard]:
    """Return each distinct linear layer's shard at tensor-parallel size `tp` ([] if unsplittable)."""
    ints = {k: v for k, v in config.items() if isinstance(v, int) and not isinstance(v, bool)}
    hidden, heads = ints.get("hidden_size"), ints.get("num_attention_heads")
    if not hidden or not heads or tp < 1 or heads % tp:
        return []   # heads-not-divisible-by-tp (PO701) refuses it first
    out: List[Shard] = []
    if config.get("kv_lora_rank") is None:   # MLA (DeepSeek) splits attention otherwise
        dim = ints.get("head_dim") or hidden // heads
        kv = ints.get("num_key_value_heads") or heads
        kv_part = kv // tp if kv >= tp else 1   # fewer KV heads than ranks: each rank holds one
        out.append(Shard("qkv_proj", "column", hidden, hidden, (heads + 2 * kv) * dim,
                         (heads // tp * dim, kv_part * dim, kv_part * dim)))
        out.append(Shard("o_proj", "row", heads * dim, heads * dim // tp, hidden, (hidden,)))
    experts = next((ints[k] for k in ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")
                    if ints.get(k)), 0)
    dense = [("", ints.get("intermediate_size"))] if not experts or ints.get("first_k_dense_replace") else []
    if experts:
        shared = ints.get("shared_expert_intermediate_size") or \
            (ints.get("moe_intermediate_size") or 0) * (ints.get("n_shared_experts") or 0)
        dense.append(("shared_experts.", shared))
    for prefix, inter in dense:
        if inter and inter % tp == 0:
            out.append(Shard(prefix + "gate_up_proj", "column", hidden, hidden, 2 * inter,
                             (inter // tp, inter // tp)))
            out.append(Shard(prefix + "down_proj", "row", inter, inter // tp, hidden, (hidden,)))
    moe = ints.get("moe_intermediate_size") or (ints.get("intermediate_size") if experts else None)
    if experts and moe and moe % tp == 0:
        part = moe if expert_parallel else moe // tp
        out.append(Shard("experts", "experts", moe, part, 2 * moe, (part, part)))
    return out


def breach(config: Dict[str, Any], quant: Dict[str, Any], tp: int, tiles: KernelTiles, *,
           stated: Optional[str] = None, capability: Optional[int] = None,
           expert_parallel: bool = False) -> Prediction:
    """Predict the first shard a kernel refuses at TP `tp`: value a Breach, or None (fits or unjudged).

    `stated` is `--quantization`, `capability` the GPU's (86 for 8.6) when known.
    """
    method = str(quant.get("quant_method") or "").lower()
    for shard in shards(config, tp, expert_parallel):
        for found in _checks(method, quant, shard, tp, tiles, stated, capability):
            return Prediction(found, f"{shard.layer}'s {found.side} per GPU: {found.size}", error=found.message)
    return Prediction(None, "every shard fits its kernel, or none is judged")


def _checks(method: str, quant: Dict[str, Any], shard: Shard, tp: int, tiles: KernelTiles,
            stated: Optional[str], capability: Optional[int]) -> Iterator[Breach]:
    if stated not in (None, method, method + "_marlin", "marlin"):
        return   # another method than the checkpoint's: refused at config time (PO813)
    if method == "fp8" and isinstance(quant.get("weight_block_size"), list) and tiles.fp8_block is not None:
        yield from _fp8_block(shard, tp, quant["weight_block_size"], tiles.fp8_block)
    elif method == "awq" and tiles.awq is not None and shard.parallel != "experts":
        bits, group = quant.get("bits", quant.get("w_bit")), quant.get("group_size", quant.get("q_group_size"))
        if not isinstance(bits, int) or not isinstance(group, int):
            return
        marlin = tiles.marlin
        takes_marlin = stated != "awq" and bits == 4 and group in MARLIN_GROUPS \
            and quant.get("zero_point", True) and (capability is None or capability >= MARLIN_MIN_CAPABILITY)
        if takes_marlin and marlin and not tiles.awq.marlin_falls_back:
            yield from _marlin(shard, group, marlin)
        else:   # the plain kernels: Marlin refuses whatever they refuse, so a fallback ends here
            yield from _plain(shard, bits, group, tiles.awq, "AWQ")
    elif method == "gptq" and stated == "gptq" and tiles.gptq is not None and shard.parallel != "experts":
        bits, group = quant.get("bits"), quant.get("group_size")
        if isinstance(bits, int) and isinstance(group, int) and group > 0:
            yield from _plain(shard, bits, group, tiles.gptq, "GPTQ")


def _fp8_block(shard: Shard, tp: int, block: List[int], facts: Fp8BlockTiles) -> Iterator[Breach]:
    block_n, block_k = block[0], block[1]
    if shard.parallel == "experts":
        if facts.moe_refined or facts.moe_n_message is None:
            return   # 0.30+: resolve_fp8_moe_weight_block_shape may fit the grid to the shard
        if shard.part_in % block_n:
            yield _breach(shard, "outputs", shard.part_in, block_n, "FP8 block_n", facts.moe_n_message)
        elif tp > 1 and shard.part_in % block_k:
            yield _breach(shard, "inputs", shard.part_in, block_k, "FP8 block_k", facts.moe_k_message)
        return
    if tp > 1 and shard.full_in // shard.part_in == tp and shard.part_in % block_k:
        yield _breach(shard, "inputs", shard.part_in, block_k, "FP8 block_k", facts.linear_k_message)
    merged = len(shard.parts) > 1
    if merged and facts.merged_mismatch_allowed and any(p % block_n for p in shard.parts):
        return   # 0.15+: ColumnParallelLinear allows the mismatch and skips the check
    split = tp > 1 and shard.full_out // sum(shard.parts) == tp
    if split or merged:
        sizes = shard.parts[:-1] if merged and not split and facts.merged_last_exempt else shard.parts
        for size in sizes:
            if size % block_n:
                yield _breach(shard, "outputs", size, block_n, "FP8 block_n", facts.linear_n_message)
                return


def _marlin(shard: Shard, group: int, facts: MarlinTiles) -> Iterator[Breach]:
    out = sum(shard.parts)
    if out % facts.min_thread_n:
        yield _breach(shard, "outputs", out, facts.min_thread_n, "Marlin n tile",
                      facts.n_message)
    elif shard.part_in % facts.min_thread_k:
        yield _breach(shard, "inputs", shard.part_in, facts.min_thread_k, "Marlin k tile",
                      facts.k_message)
    elif group < shard.full_in and shard.part_in % group and facts.group_message is not None:
        yield _breach(shard, "inputs", shard.part_in, group, "Marlin group size", facts.group_message)


def _plain(shard: Shard, bits: int, group: int, facts: PlainTiles, name: str) -> Iterator[Breach]:
    pack = 32 // bits
    if shard.part_in % group and facts.input_message is not None:
        yield _breach(shard, "inputs", shard.part_in, group, f"{name} group size", facts.input_message)
    elif sum(shard.parts) % pack and facts.output_message is not None:
        yield _breach(shard, "outputs", sum(shard.parts), pack, f"{name} pack factor", facts.output_message)


def _breach(shard: Shard, side: str, size: int, tile: int, kernel: str, message: str) -> Breach:
    return Breach(shard, side, size, tile, kernel,
                  message.format(size, tile) if message.count("{}") == 2 else message)


def working_sizes(config: Dict[str, Any], quant: Dict[str, Any], tiles: KernelTiles, upto: int,
                  **kwargs: Any) -> List[int]:
    """Return the tensor-parallel sizes up to `upto` whose every shard fits (and splits at all)."""
    return [tp for tp in range(1, upto + 1) if shards(config, tp, kwargs.get("expert_parallel", False))
            and breach(config, quant, tp, tiles, **kwargs).value is None]
