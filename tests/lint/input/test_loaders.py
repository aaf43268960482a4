"""Reading serve specs, plain vLLM configs and launch commands into a positioned ServeConfig."""

from __future__ import annotations

import textwrap

import pytest

from patchops.core.errors import LintInputError
from patchops.lint.input import yaml_nodes as yamlread
from patchops.lint.input.serve_config import ServeConfig, parse_compute_capability
from patchops.lint.input.loaders import load_command, load_file, load_text


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


SPEC = dedent("""
    # a serve spec
    model: Qwen/Qwen2.5-7B-Instruct
    args:
      max-model-len: 4096
      enable_prefix_caching: yes
      gpu-memory-utilization: '0.85'
      cuda-graph-sizes: [1, 2, 4]
      compilation_config: {level: 3}
    env:
      VLLM_ATTENTION_BACKEND: FLASHINFER
      VLLM_USE_V1: 1
    vllm:
      version: 0.10
    hardware:
      gpus: 2
      compute_capability: "8.0"
      platform: cuda
    workload:
      concurrency: [1, 2, 4, 8]
      max_tokens: 512
""")


# --- serve specs -----------------------------------------------------------------------------


def test_spec_values_positions_and_raw():
    cfg = load_text(SPEC, path="serve.yaml")
    assert cfg.kind == "spec" and cfg.path == "serve.yaml" and cfg.entrypoint == "serve"
    assert cfg.model.value == "Qwen/Qwen2.5-7B-Instruct" and (cfg.model.line, cfg.model.column) == (2, 1)
    mml = cfg.args["max_model_len"]
    assert (mml.key, mml.value, mml.raw, mml.line, mml.column, mml.source) == \
        ("max-model-len", 4096, "4096", 4, 3, "yaml")
    # YAML 1.1: `yes` is True for yaml.safe_load (and so for vLLM); raw keeps what was written
    epc = cfg.args["enable_prefix_caching"]
    assert epc.value is True and epc.raw == "yes" and epc.key == "enable_prefix_caching"
    gmu = cfg.args["gpu_memory_utilization"]
    assert gmu.value == "0.85" and gmu.raw == "'0.85'"
    assert cfg.args["cuda_graph_sizes"].value == [1, 2, 4] and cfg.args["cuda_graph_sizes"].raw is None
    assert cfg.args["compilation_config"].value == {"level": 3}
    assert "model" not in cfg.args


def test_spec_env_and_context():
    cfg = load_text(SPEC, path="serve.yaml")
    backend = cfg.env["VLLM_ATTENTION_BACKEND"]
    assert (backend.value, backend.line, backend.column, backend.source) == ("FLASHINFER", 10, 3, "env")
    assert cfg.env["VLLM_USE_V1"].value == "1"          # env values are text as written
    assert "NOPE" not in cfg.env
    assert cfg.context["vllm.version"].value == "0.10"  # not the float 0.1
    assert cfg.context["hardware.gpus"].value == 2
    assert cfg.context["hardware.gpus"].line == 15
    assert cfg.context["workload.concurrency"].value == [1, 2, 4, 8]
    assert "workload.prompt_tokens" not in cfg.context
    assert parse_compute_capability(cfg.context["hardware.compute_capability"].value) == 8.0
    assert cfg.context["hardware.platform"].value == "cuda"


def test_spec_config_settings_are_the_args_in_order():
    cfg = load_text(SPEC)
    assert [s.key for s in cfg.config_settings] == [
        "max-model-len", "enable_prefix_caching", "gpu-memory-utilization", "cuda-graph-sizes",
        "compilation_config"]
    assert cfg.argv == [] and cfg.config_file is None


@pytest.mark.parametrize("written,expected", [
    ("7.5", 7.5), ('"8.0"', 8.0), ('"8.9"', 8.9), ("sm_90", 9.0), ("90", 9.0), ('"12.0"', 12.0), ("8", 8.0),
])
def test_compute_capability_spellings(written, expected):
    cfg = load_text(f"args: {{}}\nhardware:\n  compute_capability: {written}\n")
    assert parse_compute_capability(cfg.context["hardware.compute_capability"].value) == expected


def test_spec_entrypoint_and_empty_sections():
    cfg = load_text("model: m\nentrypoint: api_server\nargs:\nenv:\nhardware:\n")
    assert cfg.entrypoint == "api_server" and cfg.args == {} and cfg.env == {}
    assert cfg.context["entrypoint"].value == "api_server"


def test_spec_model_inside_args():
    cfg = load_text("args:\n  model: m\n  max-model-len: 10\n")
    assert cfg.kind == "spec" and cfg.model.value == "m" and (cfg.model.line, cfg.model.column) == (2, 3)
    assert "model" not in cfg.args


# --- plain vLLM --config files ---------------------------------------------------------------


def test_plain_config_detected_and_model_taken():
    text = "model: meta-llama/Llama-3.1-8B\nmax_model_len: 8192\ntensor-parallel-size: 2\n"
    cfg = load_text(text, path="config.yaml")
    assert cfg.kind == "config"
    assert cfg.model.value == "meta-llama/Llama-3.1-8B" and cfg.model.source == "yaml"
    assert set(cfg.args) == {"max_model_len", "tensor_parallel_size"}
    assert cfg.args["tensor_parallel_size"].key == "tensor-parallel-size"
    assert [s.key for s in cfg.config_settings] == ["model", "max_model_len", "tensor-parallel-size"]


def test_kind_can_be_forced():
    assert load_text("max_model_len: 1\n", kind="config").kind == "config"
    with pytest.raises(LintInputError, match=r"serve.yaml:1:1: unknown top-level key `max_model_len`"):
        load_text("max_model_len: 1\n", kind="spec")
    with pytest.raises(ValueError):
        load_text("a: 1\n", kind="yaml")


# --- duplicates ------------------------------------------------------------------------------


def test_duplicates_keep_the_last_and_are_recorded():
    text = dedent("""
        model: m
        args:
          max-model-len: 4096
          tensor-parallel-size: 2
          max-model-len: 8192
          max_model_len: 16384
        hardware:
          gpus: 1
          gpus: 2
    """)
    cfg = load_text(text)
    assert cfg.args["max_model_len"].value == 16384 and cfg.args["max_model_len"].line == 6
    pairs = [((a.line, a.key), (b.line, b.key)) for a, b in cfg.duplicates]
    assert ((3, "max-model-len"), (5, "max-model-len")) in pairs
    assert ((5, "max-model-len"), (6, "max_model_len")) in pairs
    assert ((8, "gpus"), (9, "gpus")) in pairs
    assert cfg.context["hardware.gpus"].value == 2
    # what vLLM's dict holds: one entry per exact key, first position order, last value
    assert [(s.key, s.value) for s in cfg.config_settings] == [
        ("max-model-len", 8192), ("tensor-parallel-size", 2), ("max_model_len", 16384)]


def test_nested_and_top_level_duplicates():
    text = "model: a\nmodel: b\nargs:\n  compilation_config:\n    level: 1\n    level: 3\n"
    cfg = load_text(text)
    assert cfg.model.value == "b"
    names = {(a.name, a.line, b.line) for a, b in cfg.duplicates}
    assert ("model", 1, 2) in names
    assert ("args.compilation_config.level", 5, 6) in names
    assert cfg.args["compilation_config"].value == {"level": 3}


def test_merge_keys_are_not_duplicates():
    text = "base: &b {max_model_len: 1, max_num_seqs: 2}\n"
    cfg = load_text(text + "<<: *b\nmax_model_len: 9\n", kind="config")
    assert cfg.args["max_model_len"].value == 9 and cfg.args["max_num_seqs"].value == 2
    assert not [p for p in cfg.duplicates if p[0].name == "max_model_len"]


# --- suppressions ----------------------------------------------------------------------------


def test_suppression_comments():
    text = dedent("""
        model: m
        args:
          tp: 4  # patchops: ignore[PO101]
          max-model-len: 1  #patchops:ignore[PO101, PO203]
          foo: 1  # patchops: ignore
    """)
    cfg = load_text(text)
    assert cfg.suppressions == {3: {"PO101"}, 4: {"PO101", "PO203"}, 5: {"*"}}
    assert cfg.lines[2] == "  tp: 4  # patchops: ignore[PO101]"


def test_suppression_in_scripts():
    cfg = load_command("vllm serve m --foo 1  # patchops: ignore[PO101]\n", path="run.sh")
    assert cfg.suppressions == {1: {"PO101"}}


# --- launch commands -------------------------------------------------------------------------


def test_one_line_vllm_serve_command():
    cmd = ("VLLM_ATTENTION_BACKEND=FLASHINFER CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen2.5-7B "
           "-tp 4 --max-model-len=4096 --enforce-eager --cuda-graph-sizes 1 2 4 -O3 "
           "--gpu-memory-utilization 0.9")
    cfg = load_command(cmd)
    assert cfg.kind == "command" and cfg.entrypoint == "serve" and cfg.path == "<command>"
    assert cfg.env["VLLM_ATTENTION_BACKEND"].value == "FLASHINFER"
    assert cfg.env["CUDA_VISIBLE_DEVICES"].value == "0,1"
    assert (cfg.env["CUDA_VISIBLE_DEVICES"].line, cfg.env["CUDA_VISIBLE_DEVICES"].column) == (1, 35)
    assert cfg.model.value == "Qwen/Qwen2.5-7B" and cfg.model.column == cmd.index("Qwen") + 1
    tp = cfg.args["tp"]
    assert (tp.key, tp.value, tp.source, tp.column) == ("-tp", "4", "cli", cmd.index("-tp") + 1)
    mml = cfg.args["max_model_len"]
    assert (mml.key, mml.value, mml.raw) == ("--max-model-len", "4096", "--max-model-len=4096")
    assert cfg.args["enforce_eager"].value is True
    assert cfg.args["cuda_graph_sizes"].value == ["1", "2", "4"]
    assert cfg.args["O"].value == "3" and cfg.args["O"].key == "-O"
    assert cfg.args["gpu_memory_utilization"].value == "0.9"
    assert [t.value for t in cfg.argv][:3] == ["Qwen/Qwen2.5-7B", "-tp", "4"]


def test_api_server_command_takes_model_flag():
    cmd = ("python3 -m vllm.entrypoints.openai.api_server --model /m/llama --port 8000 "
           "-tp 2 --compilation-config '{\"level\": 3}'")
    cfg = load_command(cmd)
    assert cfg.entrypoint == "api_server"
    assert cfg.model.value == "/m/llama" and cfg.model.key == "--model"
    assert cfg.args["compilation_config"].value == '{"level": 3}'
    assert cfg.args["port"].value == "8000"


def test_python_m_vllm_cli_serve():
    cfg = load_command("python -m vllm.entrypoints.cli.main serve m --max-model-len 10")
    assert cfg.entrypoint == "serve" and cfg.model.value == "m"


SCRIPT = dedent("""
    #!/usr/bin/env bash
    set -euo pipefail
    # launch the server
    export VLLM_USE_V1=1
    export HF_HOME=/data/hf
    MODEL=/models/Qwen2.5-7B
    TP=2
    pip install -q flashinfer
    echo "starting vllm serve $MODEL"
    VLLM_ATTENTION_BACKEND=FLASH_ATTN exec vllm serve "$MODEL" \\
        --tensor-parallel-size ${TP} \\
        --max-model-len 32k \\
        --served-model-name qwen \\
        --enforce-eager > /tmp/vllm.log 2>&1 &
    sleep 5
""")


def test_shell_script_with_continuations_exports_and_variables(tmp_path):
    path = tmp_path / "launch.sh"
    path.write_text(SCRIPT)
    cfg = load_file(path)
    assert cfg.kind == "command" and cfg.path == str(path)
    assert set(cfg.env) == {"VLLM_USE_V1", "HF_HOME", "VLLM_ATTENTION_BACKEND"}   # MODEL/TP not exported
    assert (cfg.env["VLLM_USE_V1"].line, cfg.env["VLLM_USE_V1"].column) == (4, 8)
    assert (cfg.env["VLLM_ATTENTION_BACKEND"].line, cfg.env["VLLM_ATTENTION_BACKEND"].column) == (10, 1)
    assert cfg.model.value == "/models/Qwen2.5-7B" and cfg.model.raw == '"$MODEL"'
    assert (cfg.model.line, cfg.model.column) == (10, 51)
    tp = cfg.args["tensor_parallel_size"]
    assert (tp.value, tp.line, tp.column) == ("2", 11, 5)
    assert (cfg.args["max_model_len"].value, cfg.args["max_model_len"].line) == ("32k", 12)
    assert cfg.args["served_model_name"].value == "qwen"
    assert cfg.args["enforce_eager"].value is True and cfg.args["enforce_eager"].line == 14
    assert "tmp" not in str([t.value for t in cfg.argv])       # redirections dropped
    assert cfg.lines[0] == "#!/usr/bin/env bash"


def test_script_detected_by_content_and_shebang(tmp_path):
    path = tmp_path / "launch.txt"
    path.write_text("export A=1\nvllm serve m --max-model-len 10\n")
    assert load_file(path).kind == "command"
    path = tmp_path / "run"
    path.write_text("#!/bin/sh\nvllm serve m\n")
    assert load_file(path).kind == "command"
    assert load_text("vllm serve m -tp 2\n").kind == "command"
    assert load_text("  uv run vllm serve m -tp 2\n").kind == "command"


def test_script_with_crlf_line_endings():
    cfg = load_command("vllm serve m \\\r\n  --max-model-len 10\r\n", path="win.sh")
    assert cfg.model.value == "m" and cfg.args["max_model_len"].value == "10"
    assert cfg.args["max_model_len"].line == 2


def test_script_export_of_earlier_assignment_and_set_a():
    cfg = load_command("A=1\nB=2\nexport A\nset -a\nC=3\nvllm serve m\n", path="x.sh")
    assert set(cfg.env) == {"A", "C"} and cfg.env["A"].line == 1


def test_first_vllm_launch_is_used():
    cfg = load_command("vllm serve first --port 1 &\nvllm serve second --port 2\n")
    assert cfg.model.value == "first"


def test_model_not_first_is_found_without_facts():
    cfg = load_command("vllm serve --enforce-eager")
    assert cfg.model is None and cfg.args["enforce_eager"].value is True


def test_config_file_next_to_the_script(tmp_path):
    (tmp_path / "conf.yaml").write_text("max_model_len: 4096\nenforce_eager: true\nport: 1\n")
    script = tmp_path / "run.sh"
    script.write_text("vllm serve m \\\n  --config conf.yaml --port 8000\n")
    cfg = load_file(script)
    assert cfg.config_loaded and cfg.config_file.value == "conf.yaml"
    assert (cfg.config_file.line, cfg.config_file.column) == (2, 12)
    assert [s.key for s in cfg.config_settings] == ["max_model_len", "enforce_eager", "port"]
    # positioned where conf.yaml holds each key, in that file
    assert [(s.file, s.line, s.column) for s in cfg.config_settings] == [
        (str(tmp_path / "conf.yaml"), line, 1) for line in (1, 2, 3)]
    assert cfg.sources[str(tmp_path / "conf.yaml")].lines[1] == "enforce_eager: true"
    assert cfg.args["max_model_len"].value == 4096 and cfg.args["max_model_len"].source == "yaml"
    assert cfg.args["port"].value == "8000" and cfg.args["port"].source == "cli"   # CLI wins
    assert [t.value for t in cfg.argv] == ["m", "--port", "8000"]


def test_config_file_missing_or_not_yaml(tmp_path):
    cfg = load_command("vllm serve m --config nowhere.yaml", base_dir=str(tmp_path))
    assert cfg.config_file.value == "nowhere.yaml" and not cfg.config_loaded
    cfg = load_command("vllm serve m --config conf.json", base_dir=str(tmp_path))
    assert not cfg.config_loaded


def test_bad_included_config_names_that_file(tmp_path):
    (tmp_path / "conf.yaml").write_text("a: [1\n")
    with pytest.raises(LintInputError, match="conf.yaml:2:1: invalid YAML"):
        load_command("vllm serve m --config conf.yaml", base_dir=str(tmp_path))


@pytest.mark.parametrize("cmd,message", [
    ("echo hello\nls -l\n", "no vLLM launch found"),
    ("vllm serve 'model", r"<command>:1:12: unterminated single quote"),
    ('vllm serve "model', r"<command>:1:12: unterminated double quote"),
    ("vllm serve m --config a.yaml --config b.yaml", "more than one `--config`"),
    ("vllm serve m --config", "`--config` needs a file name"),
])
def test_bad_commands(cmd, message):
    with pytest.raises(LintInputError, match=message):
        load_command(cmd)


# --- bad input: one clear LintInputError naming the file, never a traceback -------------------

BILLION_LAUGHS = "".join(
    [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}" if i else "lol"] * 10) + "]\n" for i in range(9)])

BAD_YAML = {
    "syntax": ("args:\n  a: b\n c: d\n", r"bad.yaml:3:\d+: invalid YAML"),
    "tabs": ("args:\n\tx: 1\n", r"bad.yaml:2:1: invalid YAML: .*tabs"),
    "unclosed": ("args: [1, 2\n", r"bad.yaml:2:1: invalid YAML"),
    "top-list": ("- a\n- b\n", r"bad.yaml:1:1: expected a mapping .* found a list"),
    "top-scalar": ("just words\n", r"bad.yaml:1:1: expected a mapping .* found the string"),
    "empty": ("", r"bad.yaml: is empty"),
    "only-comments": ("# nothing\n", r"bad.yaml: is empty"),
    "two-documents": ("a: 1\n---\nb: 2\n", r"bad.yaml:2:1: invalid YAML: expected a single document"),
    "nul": ("args: {}\nx: \x00\n", r"bad.yaml:2: contains a NUL"),
    "control-char": ("a: \x07\n", r"bad.yaml:1: contains the non-printable character #x0007"),
    "deep-flow": ("a: " + "[" * 200 + "]" * 200 + "\n", r"bad.yaml:1:\d+: YAML is nested more than 50"),
    "deep-block": ("".join("  " * i + f"k{i}:\n" for i in range(80)) + "  " * 80 + "v: 1\n",
                   r"bad.yaml:\d+:\d+: YAML is nested more than 50"),
    "billion-laughs": (BILLION_LAUGHS, r"bad.yaml:\d+:\d+: YAML expands to more than 20000 values"),
    "recursive-alias": ("a: &a [1, *a]\n", r"bad.yaml:1:4: an alias refers to the collection"),
    "undefined-alias": ("a: *nope\n", r"bad.yaml:1:4: invalid YAML: found undefined alias"),
    "python-tag": ("args:\n  x: !!python/object/apply:os.system [ls]\n",
                   r"bad.yaml:2:6: the tag `!!python/object/apply:os.system` is not supported"),
    "local-tag": ("args:\n  x: !shell rm -rf\n", r"bad.yaml:2:6: could not determine a constructor"),
    "int-key": ("args:\n  1: 2\n", r"bad.yaml:2:3: the key `1` in args is the integer 1"),
    "bool-key": ("args:\n  on: 2\n", r"bad.yaml:2:3: the key `on` in args is read by YAML as the boolean True"),
    "null-key": ("args:\n  ~: 2\n", r"bad.yaml:2:3: the key `~` in args is null"),
    "list-key": ("? [a, b]\n: c\n", r"bad.yaml:1:3: a mapping key must be a plain value"),
    "unknown-top": ("args: {}\nhardwre: {gpus: 1}\n",
                    r"bad.yaml:2:1: unknown top-level key `hardwre` in a serve spec; did you mean `hardware`\?"),
    "args-not-mapping": ("args: [max-model-len, 4096]\n", r"bad.yaml:1:1: `args` must be a mapping"),
    "env-not-mapping": ("args: {}\nenv: [A=1]\n", r"bad.yaml:2:1: `env` must be a mapping"),
    "env-nested": ("args: {}\nenv:\n  A: [1]\n", r"bad.yaml:3:3: the environment variable `A` must have a plain value"),
    "model-not-string": ("args: {}\nmodel: 7\n", r"bad.yaml:2:1: `model` must be a model name"),
    "entrypoint": ("args: {}\nentrypoint: docker\n", r"bad.yaml:2:1: `entrypoint` must be `serve`"),
    "hardware-not-mapping": ("args: {}\nhardware: 2\n", r"bad.yaml:2:1: `hardware` must be a mapping"),
    "hardware-typo": ("args: {}\nhardware:\n  gpu: 2\n",
                      r"bad.yaml:3:3: unknown key `gpu` in `hardware`; did you mean `gpus`\?"),
    "gpus-not-int": ("args: {}\nhardware:\n  gpus: two\n", r"bad.yaml:3:3: `hardware.gpus` must be a positive integer"),
    "gpus-bool": ("args: {}\nhardware:\n  gpus: yes\n", r"bad.yaml:3:3: `hardware.gpus` must be a positive integer"),
    "cc-bad": ("args: {}\nhardware:\n  compute_capability: ampere\n",
               r"bad.yaml:3:3: `hardware.compute_capability` must be a CUDA compute capability"),
    "concurrency-zero": ("args: {}\nworkload:\n  concurrency: 0\n",
                         r"bad.yaml:3:3: `workload.concurrency` must be a positive integer or a list of them"),
    "concurrency-item": ("args: {}\nworkload:\n  concurrency: [1, two]\n",
                         r"bad.yaml:3:20: `workload.concurrency` must be a list of positive integers .* 'two'"),
    "set-tag": ("args:\n  x: !!set {a: null}\n", r"bad.yaml:2:6: the tag `!!set` is not supported"),
    "bad-merge": ("a: 1\n<<: [1]\n", r"bad.yaml:2:6: a `<<` merge key needs a mapping"),
}


@pytest.mark.timeout(60)  # the billion-laughs case must fail, not hang, if the guard regresses
@pytest.mark.parametrize("case", sorted(BAD_YAML))
def test_bad_yaml_is_one_clear_error(case):
    text, pattern = BAD_YAML[case]
    with pytest.raises(LintInputError) as info:
        load_text(text, path="bad.yaml")
    message = str(info.value)
    assert message.startswith("bad.yaml")
    assert "\n" not in message and "Traceback" not in message
    assert __import__("re").match(pattern, message), message
    assert info.value.exit_code == 2


def test_huge_input_is_refused_before_parsing(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: " + b"x" * (yamlread.MAX_BYTES + 10) + b"\n")
    with pytest.raises(LintInputError, match=r"big.yaml: file is \d+ bytes, over the"):
        load_file(big)
    with pytest.raises(LintInputError, match=r"serve.yaml: input is \d+ characters"):
        load_text("a: " + "x" * (yamlread.MAX_BYTES + 10))


def test_binary_and_undecodable_files(tmp_path):
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00garbage")
    with pytest.raises(LintInputError, match=r"model.bin:1: contains a NUL byte"):
        load_file(binary)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"model: m\nargs:\n  served-model-name: caf\xe9\n")
    with pytest.raises(LintInputError, match=r"latin.yaml:3: is not UTF-8 text"):
        load_file(latin)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(LintInputError, match=r"nope.yaml: no such file"):
        load_file(tmp_path / "nope.yaml")
    with pytest.raises(LintInputError, match=r"is a directory"):
        load_file(tmp_path)


def test_bom_is_accepted(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_bytes("\ufeffmodel: m\nmax_model_len: 1\n".encode("utf-8"))
    cfg = load_file(path)
    assert cfg.model.value == "m" and cfg.args["max_model_len"].line == 2


def test_aliases_within_budget_are_expanded():
    text = "common: &c {max_model_len: 1}\nargs:\n  compilation_config: &cc {level: 3}\n"
    with pytest.raises(LintInputError):       # `common` is not a spec key
        load_text(text)
    cfg = load_text("x: &v 4096\nmax_model_len: *v\n", kind="config")
    assert cfg.args["max_model_len"].value == 4096


def test_yamlread_positions_and_quoting():
    node = yamlread.read_yaml("a: 'x'\nb:\n  - 1\n  - \"2\"\n", "t.yaml")
    entries = {e.key.value: e for e in node.entries}
    assert entries["a"].value.quoted and entries["a"].value.raw == "'x'"
    seq = entries["b"].value
    assert (seq.items[1].line, seq.items[1].column, seq.items[1].value) == (4, 5, "2")
    assert yamlread.to_python(node) == {"a": "x", "b": [1, "2"]}


def test_serveconfig_position_of():
    cfg = ServeConfig(path="p", kind="spec")
    assert cfg.position_of(None) == (1, 1) and cfg.position_of((3, 4)) == (3, 4)


def test_workload_tools_is_a_boolean():
    cfg = load_text("model: m\nworkload:\n  tools: true\n")
    assert cfg.context["workload.tools"].value is True and cfg.context["workload.tools"].line == 3
    with pytest.raises(LintInputError, match=r"`workload.tools` must be true or false, found"):
        load_text("model: m\nworkload:\n  tools: 3\n", path="serve.yaml")
