"""lint/vllm/wording.py: settings and lists written the way lint messages show them."""

from __future__ import annotations

from patchops.lint.input.loaders import load_text
from patchops.lint.input.serve_config import Setting
from patchops.lint.vllm import cuda_graphs, wording

from handmade import hand_facts


def setting(text, name, kind=None):
    return load_text(text, kind=kind).args[name]


def test_yaml_shows_the_text_as_written():
    assert wording.shown(setting("args:\n  enable-prefix-caching: yes\n", "enable_prefix_caching")) == "yes"
    assert wording.shown(setting("args:\n  gpu-memory-utilization: '0.85'\n", "gpu_memory_utilization")) == "'0.85'"


def test_a_command_or_a_flow_list_shows_the_value_read():
    assert wording.shown(setting("vllm serve m --enforce-eager\n", "enforce_eager", "command")) == "true"
    assert wording.shown(setting("args:\n  cuda-graph-sizes: [1, 2, 4]\n", "cuda_graph_sizes")) == "[1, 2, 4]"
    assert wording.shown(setting("vllm serve m --max-model-len 4096\n", "max_model_len", "command")) == "4096"


def test_as_token_is_the_argv_text_the_parser_sees():
    flag = setting("vllm serve m --enforce-eager\n", "enforce_eager", "command")
    assert wording.as_token(flag, "--enforce-eager") == "--enforce-eager"
    sizes = setting("args:\n  cuda-graph-sizes: [1, 2, 4]\n", "cuda_graph_sizes")
    assert wording.as_token(sizes, "--cuda-graph-sizes") == "--cuda-graph-sizes 1 2 4"
    length = setting("args:\n  max-model-len: 4096\n", "max_model_len")
    assert wording.as_token(length, "--max-model-len") == "--max-model-len 4096"


def test_and_list():
    assert [wording.and_list(x) for x in ([], [4], [4, 8], [4, 8, 16])] == ["", "4", "4 and 8", "4, 8 and 16"]


def test_sizes_text_shortens_past_eight():
    assert wording.sizes_text(range(1, 9)) == "[1, 2, 3, 4, 5, 6, 7, 8]"
    assert wording.sizes_text([1, 2, 4, 8, 16, 24, 32, 40, 512]) == "[1, 2, 4, 8, ..., 512]"


def test_parser_errors_are_prefixed_as_vllm_serve_prints_them():
    serve = load_text("vllm serve m --seed 0\n", kind="command")
    assert wording.parser_error(serve, "unrecognized arguments: --x") == "vllm: error: unrecognized arguments: --x"
    assert wording.parser_error(serve, "argument --seed: invalid int value: 'a'") == \
        "vllm serve: error: argument --seed: invalid int value: 'a'"
    server = load_text("python -m vllm.entrypoints.openai.api_server --model m\n", kind="command")
    assert server.entrypoint != "serve"
    assert wording.parser_error(server, "unrecognized arguments: --x") == "unrecognized arguments: --x"


# Message helpers.


def test_message_helpers():
    assert wording.and_list([4]) == "4" and wording.and_list([4, 8, 16]) == "4, 8 and 16"
    assert wording.sizes_text([1, 2]) == "[1, 2]"
    assert wording.sizes_text(list(range(1, 20))) == "[1, 2, 3, 4, ..., 19]"
    assert cuda_graphs.suggested_sizes(8) == [1, 2, 4, 8] and cuda_graphs.suggested_sizes(3) == [1, 2, 4]
    assert "cudagraph_capture_sizes" in cuda_graphs.capture_fix(hand_facts("0.8.5"), 8)
    assert cuda_graphs.capture_fix(hand_facts("0.12.0"), 8).startswith("set cudagraph-capture-sizes: [1, 2, 4, 8]")
    cli = Setting(key="--x", name="x", value=[1, 2], line=1, column=1, raw="--x", source="cli")
    assert wording.shown(cli) == "[1, 2]" and wording.as_token(cli, "--x") == "--x 1 2"
