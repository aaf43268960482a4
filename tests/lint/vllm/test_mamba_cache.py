"""Mamba cache blocks of hybrid models: layouts, groups, pages and the blocks against max_num_seqs."""

from __future__ import annotations

from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.rules.mamba_blocks_below_max_seqs import QWEN35_27B
from patchops.lint.vllm import mamba_cache

NEMOTRON_H = {"model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "hidden_size": 4096,
              "num_hidden_layers": 12, "hybrid_override_pattern": "M-M*-M-M*-M-", "mamba_num_heads": 128,
              "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4,
              "intermediate_size": 21504, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
              "vocab_size": 131072, "torch_dtype": "bfloat16"}


def _layout(data, tp=1):
    return mamba_cache.layout(model_facts_from_dict(data), tp)


def test_gated_delta_net_layers_follow_the_interval_or_layer_types():
    found = _layout(QWEN35_27B)
    assert (found.family, found.recurrent_layers, found.attention_layers) == ("gated delta net", 48, 16)
    assert found.ssm_elements == 48 * 128 * 128 and found.conv_elements == (2 * 16 * 128 + 48 * 128) * 3
    text = dict(QWEN35_27B["text_config"], layer_types=["linear_attention", "full_attention"] * 32)
    assert _layout(dict(QWEN35_27B, text_config=text)).recurrent_layers == 32


def test_page_takes_the_ssm_dtype_of_the_config():
    found = _layout(QWEN35_27B)
    assert found.page_bytes(2) == 48 * 128 * 128 * 4 + (2 * 16 * 128 + 48 * 128) * 3 * 2
    plain = _layout(dict(QWEN35_27B, text_config=dict(QWEN35_27B["text_config"], mamba_ssm_dtype=None)))
    assert plain.page_bytes(2) == (48 * 128 * 128 + (2 * 16 * 128 + 48 * 128) * 3) * 2


def test_group_size_is_the_fewest_layers_unless_the_counts_are_close():
    found = _layout(QWEN35_27B)
    close = mamba_cache.Layout("x", 14, 10, 1, 1, None, found.params)   # 14 < 15: the most
    far = mamba_cache.Layout("x", 15, 10, 1, 1, None, found.params)     # 15 = 1.5 x 10: the fewest
    assert (close.group_size, far.group_size, found.group_size) == (14, 10, 16)


def test_nemotron_h_counts_the_pattern_and_keeps_float32_state():
    found = _layout(NEMOTRON_H, tp=2)
    assert (found.family, found.recurrent_layers, found.attention_layers) == ("mamba2", 5, 2)
    assert found.ssm_dtype == "float32" and found.ssm_elements == 64 * 64 * 128
    assert found.conv_elements == (8192 + 2 * 8 * 128) // 2 * 3
    # one group does not divide between 2 GPUs: vLLM gives each GPU a copy (extra_groups_for_head_shards)
    assert _layout(dict(NEMOTRON_H, n_groups=1), tp=2).conv_elements == (8192 + 2 * 2 * 128) // 2 * 3


def test_plain_attention_model_has_no_layout():
    assert _layout({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                    "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}) is None


def _blocks(memory_gib, tp=1, ssm=None):
    model = model_facts_from_dict(QWEN35_27B)
    found = mamba_cache.layout(model, tp)
    return mamba_cache.estimate(model, found, memory_gib=memory_gib, utilization=0.9, tp=tp, dtype=None,
                                quantization=None, ssm_cache_dtype=ssm).blocks


def test_blocks_grow_with_memory_and_tensor_parallelism_and_shrink_with_float32():
    assert _blocks(80) == 478
    assert _blocks(80, tp=2) > 4 * 478
    assert _blocks(80, ssm="bfloat16") > _blocks(80)
    assert _blocks(40) == 0     # the weights do not fit


def test_full_decode_graphs_by_mode():
    assert mamba_cache.full_decode_graphs(None) is True
    assert mamba_cache.full_decode_graphs("FULL_AND_PIECEWISE") is True
    assert mamba_cache.full_decode_graphs("piecewise") is False
    assert mamba_cache.full_decode_graphs("NONE") is False
    assert mamba_cache.full_decode_graphs(3) is None



def _raised_messages(version):
    """Every f-string a `raise` in compilation.py builds, its values as {}."""
    import ast

    from tests.support import wheelcache

    path = wheelcache.site_packages(version, with_flash_attn=False) / "vllm/config/compilation.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args \
                and isinstance(node.exc.args[0], ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.exc.args[0].values))
    return out


def test_message_is_0_20s_and_0_19_only_caps():
    quoted = mamba_cache.MESSAGE.replace("{seqs}", "{}").replace("{blocks}", "{}")
    assert quoted in _raised_messages("0.20.0")
    assert not [m for m in _raised_messages("0.19.1") if "Mamba cache" in m]
