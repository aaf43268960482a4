"""PO625 mamba-blocks-below-max-seqs beyond its examples."""

from __future__ import annotations

from patchops.lint.rule import Example
from patchops.lint.rules.mamba_blocks_below_max_seqs import QWEN35_27B, SPEC_80G, MambaBlocksBelowMaxSeqs
from patchops.lint.runner import lint_example

SEQS = SPEC_80G + "  max-num-seqs: 1024\n"


def _found(text: str, vllm: str = "0.20.0"):
    return [d for d in lint_example(Example(text, vllm=vllm, model=QWEN35_27B))
            if d.code == MambaBlocksBelowMaxSeqs.code]


def test_first_refused_in_0_20():
    assert _found(SEQS, "0.19.1") == []
    [d] = _found(SEQS, "0.20.0")
    assert d.severity == "error" and (d.line, d.column) == (5, 3)
    assert d.vllm_message.startswith("max_num_seqs (1024) exceeds available Mamba cache blocks (478).")


def test_no_full_decode_graphs_no_finding():
    assert _found(SEQS + "  compilation-config: '{\"cudagraph_mode\": \"PIECEWISE\"}'\n") == []
    assert len(_found(SEQS + "  compilation-config: '{\"cudagraph_mode\": \"FULL_DECODE_ONLY\"}'\n")) == 1


def test_default_that_depends_on_the_gpu_is_a_warning():
    # 80 GiB without a name may be an A100, whose default is 256 sequences: fits 478 blocks
    [d] = _found(SPEC_80G.replace(", name: H100", ""))
    assert d.severity == "warning" and "1024" in d.message


def test_more_memory_for_the_cache_fits():
    assert _found(SEQS.replace("memory_gib: 80", "memory_gib: 141")) == []
