"""The vLLM messages rules quote are vLLM's own words: each is found in the source it names."""

from __future__ import annotations

import pytest


def _string_runs(path) -> str:
    """Return a file's string literals in source order, joined, f-string fields as {x}."""
    import ast
    import re

    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts_of_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    pieces = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{x}" for v in node.values)
            pieces.append((node.lineno, node.col_offset, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in parts_of_fstrings:
            pieces.append((node.lineno, node.col_offset, node.value))
    return re.sub(r"\s+", " ", "".join(text for _, _, text in sorted(pieces)))


def _template(text: str) -> str:
    import re
    return re.sub(r"\s+", " ", re.sub(r"\{[a-z_]+\}", "{x}", text))


def _rule_messages():
    from patchops.lint.vllm import messages
    from patchops.lint.rules import multistep_chunked_prefill_with_pp as po305
    from patchops.lint.rules import multistep_needs_flash_backend as po303
    from patchops.lint.rules import multistep_with_spec_decode as po304

    scheduler = ("vllm/config.py", "vllm/config/scheduler.py")
    old = ("0.6.3.post1", "0.7.3", "0.8.5", "0.9.2", "0.10.0")
    v1_oracle = ("0.8.5", "0.9.2", "0.10.0")
    fallback = "{x} is not supported by the V1 Engine. Falling back to V0. We recommend to remove {x} " \
               "from your config in favor of the V1 Engine."
    table = [
        (messages.BATCHED_TOKENS_BELOW_MODEL_LEN, scheduler, old + ("0.10.2", "0.11.0", "0.12.0", "0.33.0")),
        (messages.BATCHED_TOKENS_BELOW_MAX_SEQS, scheduler, old + ("0.10.2", "0.11.0", "0.12.0", "0.33.0")),
        (messages.CHUNKED_PREFILL_OFF_UNSUPPORTED, ("vllm/engine/arg_utils.py",), ("0.12.0", "0.33.0")),
        (fallback, ("vllm/engine/arg_utils.py",), v1_oracle + ("0.10.2", "0.11.0")),
        ("VLLM_USE_V1=1 is not supported with {x}.", ("vllm/engine/arg_utils.py",), v1_oracle),
        (po303.MultistepNeedsFlashBackend.vllm_message, ("vllm/worker/multi_step_model_runner.py",), old),
        (po304.MultistepWithSpecDecode.vllm_message, ("vllm/engine/arg_utils.py",), old),
        (po305.MultistepChunkedPrefillWithPp.vllm_message, ("vllm/engine/arg_utils.py",), old),
        (messages.CUDA_GRAPH_SIZES_DEPRECATED, ("vllm/engine/arg_utils.py",), ("0.12.0",)),
        (messages.CAPTURE_SIZES_EXCLUSIVE.replace("{flag}", "cuda_graph_sizes"), ("vllm/engine/arg_utils.py",), ("0.12.0",)),
        (messages.CAPTURE_SIZES_EXCLUSIVE.replace("{flag}", "cudagraph_capture_sizes"), ("vllm/engine/arg_utils.py",),
         ("0.12.0", "0.33.0")),
        (messages.CAPTURE_MAX_EXCLUSIVE, ("vllm/engine/arg_utils.py",), ("0.12.0", "0.33.0")),
        (messages.CAPTURE_MAX_INCONSISTENT, ("vllm/config/vllm.py",), ("0.12.0", "0.33.0")),
        (messages.CAPTURE_SIZES_EMPTY, ("vllm/config/vllm.py",), ("0.12.0", "0.33.0")),
    ]
    table.append((messages.MULTISTEP_FORCED_V1_073, ("vllm/platforms/cuda.py",), ("0.7.3",)))
    return [(text, files, version) for text, files, versions in table for version in versions]


@pytest.mark.vllm
@pytest.mark.parametrize("text,files,version", _rule_messages(),
                         ids=lambda x: x if isinstance(x, str) and len(x) < 16 else None)
def test_quoted_vllm_messages_are_in_the_source(vllm_site, text, files, version):
    site = vllm_site(version)
    wanted = _template(text)
    found = [f for f in files if (site / f).exists() and wanted in _string_runs(site / f)]
    assert found, f"{wanted!r} not in {files} of vLLM {version}"
