"""read_as_vllm: what a given vLLM version makes of a ServeConfig: the YAML layer, the parser's rewrites, argparse."""

from __future__ import annotations

import copy

import pytest

from patchops.lint.facts.model import Facts, Flag, facts_for_version
from patchops.lint.input.loaders import load_command, load_text
from patchops.lint.input.serve_config import human_readable_int
from patchops.lint.reading import read_as_vllm
from patchops.lint.reading.read_config import Fate
from patchops.lint.vllm.releases import release


def ignored(seen):
    """Return {dest: (setting, why)} of what `seen` reads as dropped."""
    return {o.dest: (o.setting, o.detail) for o in seen.outcomes_of(Fate.IGNORED)}


def rejected(seen):
    """Return {dest: (setting, vLLM's message)} of what vLLM's parser refuses in `seen`."""
    return {o.dest: (o.setting, o.detail) for o in seen.outcomes_of(Fate.REJECTED)}


def unknown(seen):
    """Return the settings of `seen` no flag matches, in order."""
    return [o.setting for o in seen.outcomes_of(Fate.UNKNOWN)]


def version_tuple(version: str):
    """Return (major, minor, micro) of `version` by the one parser, to compare with tuples here."""
    return (tuple(release(version).release) + (0, 0, 0))[:3]


def make_facts(version: str, *flags: Flag) -> Facts:
    """Return hand-made facts: a small flag table shaped like `version`'s parser."""
    v = version_tuple(version)
    base = [
        Flag("model", "model", type="str"),
        Flag("max-model-len", "max_model_len", type="human_int" if v >= (0, 8, 5) else "int",
             optional=True),
        Flag("max-num-seqs", "max_num_seqs", type="int"),
        Flag("max-num-batched-tokens", "max_num_batched_tokens", type="int", optional=True),
        Flag("tensor-parallel-size", "tensor_parallel_size", type="int", aliases=("-tp",)),
        Flag("enforce-eager", "enforce_eager", action="store_true"),
        Flag("trust-remote-code", "trust_remote_code", action="store_true"),
        Flag("gpu-memory-utilization", "gpu_memory_utilization", type="float"),
        Flag("kv-cache-dtype", "kv_cache_dtype", type="str", choices=("auto", "fp8")),
        Flag("served-model-name", "served_model_name", type="str", nargs="+"),
        Flag("port", "port", type="int"),
    ]
    if v < (0, 8, 0):
        base.append(Flag("enable-chunked-prefill", "enable_chunked_prefill",
                         action="store_boolean", nargs="?"))
    else:
        base.append(Flag("enable-chunked-prefill", "enable_chunked_prefill", action="boolean_optional"))
    if v < (0, 7, 0):
        base.append(Flag("enable-prefix-caching", "enable_prefix_caching", action="store_true"))
    else:
        base.append(Flag("enable-prefix-caching", "enable_prefix_caching", action="boolean_optional"))
    if (0, 7, 0) <= v < (0, 12, 0):
        base.append(Flag("compilation-config", "compilation_config", type="json", aliases=("-O",)))
    elif v >= (0, 12, 0):
        base.append(Flag("compilation-config", "compilation_config", type="json", aliases=("-cc",)))
        base.append(Flag("optimization-level", "optimization_level", type="str"))
    if (0, 9, 0) <= v:
        base.append(Flag("cuda-graph-sizes", "cuda_graph_sizes", type="int", nargs="+"))
    base.extend(flags)
    return Facts(version=version, origin="test", flags={f.dest: f for f in base})


def spec(args: str, **kw) -> str:
    body = "".join(f"  {line}\n" for line in args.strip("\n").splitlines())
    head = "".join(f"{k}: {v}\n" for k, v in kw.items())
    return f"model: m\n{head}args:\n{body}"


def read(text: str, version: str, *, kind=None, facts: Facts = None):
    cfg = load_command(text) if kind == "command" else load_text(text, kind=kind)
    return read_as_vllm(cfg, facts or make_facts(version))


# --- booleans ------------------------------------------------------------------------------


def test_false_is_dropped_under_vllm_serve_085():
    seen = read(spec("enable-prefix-caching: false\nenforce-eager: true"), "0.8.5")
    assert "enable_prefix_caching" not in seen.args
    setting, why = ignored(seen)["enable_prefix_caching"]
    assert why == "vllm serve drops `false` values from --config files (0.7.3+)"
    assert (setting.line, setting.column, setting.value) == (3, 3, False)
    assert seen.args["enforce_eager"].value is True
    assert unknown(seen) == [] and rejected(seen) == {}


def test_false_of_a_storeboolean_flag_works_in_063():
    seen = read(spec("enable_chunked_prefill: false\nenable-chunked-prefill: true"), "0.6.3")
    assert seen.args["enable_chunked_prefill"].value is True        # the last one wins
    seen = read(spec("enable_chunked_prefill: false"), "0.6.3")
    assert seen.args["enable_chunked_prefill"].value is False
    assert ignored(seen) == {}


def test_true_breaks_store_true_flags_in_063():
    seen = read(spec("max-model-len: 4096\nenforce-eager: true"), "0.6.3")
    setting, message = rejected(seen)["enforce_eager"]
    assert message == "unrecognized arguments: True" and (setting.line, setting.column) == (4, 3)
    assert "enforce_eager" not in seen.args and seen.args["max_model_len"].value == 4096


def test_false_in_063_is_a_stray_value_for_store_true():
    seen = read(spec("enable_prefix_caching: false"), "0.6.3")
    assert rejected(seen)["enable_prefix_caching"][1] == "unrecognized arguments: False"


def test_false_under_api_server():
    # 0.7.3: the single api_server parser knows its StoreBoolean flags, spelled as dests
    seen = read(spec("enable_chunked_prefill: false", entrypoint="api_server"), "0.7.3")
    assert seen.args["enable_chunked_prefill"].value is False
    seen = read(spec("enable-chunked-prefill: false", entrypoint="api_server"), "0.7.3")
    assert "enable_chunked_prefill" in ignored(seen)
    # 0.30+: `--no-k` when the reading parser registers it (dash spelling only)
    seen = read(spec("enable-prefix-caching: false", entrypoint="api_server"), "0.30.0")
    assert seen.args["enable_prefix_caching"].value is False
    for version in ("0.25.0", "0.30.0"):  # the boundary from both sides, on the shipped tables
        seen = read(spec("enable-prefix-caching: false", entrypoint="api_server"), version,
                    facts=facts_for_version(version))
        if version == "0.25.0":
            assert "enable_prefix_caching" in ignored(seen) and "enable_prefix_caching" not in seen.args
        else:
            assert seen.args["enable_prefix_caching"].value is False and ignored(seen) == {}
    seen = read(spec("enable-prefix-caching: false", entrypoint="api_server"), "0.25.0")
    assert "enable_prefix_caching" in ignored(seen)
    seen = read(spec("enable_prefix_caching: false", entrypoint="api_server"), "0.30.0")
    assert "enable_prefix_caching" in ignored(seen)
    # ... but never under `vllm serve`
    seen = read(spec("enable-prefix-caching: false"), "0.33.0")
    assert "enable_prefix_caching" in ignored(seen)


def test_no_forms():
    seen = read(spec("no_enable_prefix_caching: true"), "0.8.5")
    setting = seen.args["enable_prefix_caching"]
    assert setting.value is False and setting.key == "no_enable_prefix_caching"
    seen = read("vllm serve m --no-enable-prefix-caching --no-enable-chunked-prefill", "0.8.5",
                kind="command")
    assert seen.args["enable_prefix_caching"].value is False
    assert seen.args["enable_chunked_prefill"].value is False
    assert seen.args["enable_prefix_caching"].key == "--no-enable-prefix-caching"
    # a store_true flag has no --no- form
    seen = read(spec("no_enforce_eager: true"), "0.8.5")
    assert [s.key for s in unknown(seen)] == ["no_enforce_eager"]


def test_false_for_an_unknown_key_is_dropped_not_fatal():
    seen = read(spec("enable_foo: false"), "0.8.5")
    assert unknown(seen) == []
    assert "not a flag of this vLLM" in ignored(seen)["enable_foo"][1]


# --- lists and mappings --------------------------------------------------------------------


def test_list_before_0102_is_mangled():
    seen = read(spec("cuda-graph-sizes: [1, 2, 4]\nserved-model-name: [a, b]"), "0.9.2")
    # an int list becomes the one token "[1, 2, 4]": argparse refuses it
    assert rejected(seen)["cuda_graph_sizes"][1] == \
        "argument --cuda-graph-sizes: invalid int value: '[1, 2, 4]'"
    # a text list is accepted as the Python text, brackets and all
    setting, why = ignored(seen)["served_model_name"]
    assert setting.value == ["a", "b"] and "['a', 'b']" in why
    assert "served_model_name" not in seen.args


def test_list_from_0102_is_expanded_and_empty_list_dropped():
    seen = read(spec("cuda-graph-sizes: [1, 2, 4]\nserved-model-name: [a, b]"), "0.10.2")
    assert seen.args["cuda_graph_sizes"].value == [1, 2, 4]
    assert seen.args["served_model_name"].value == ["a", "b"]
    seen = read(spec("cuda-graph-sizes: []"), "0.10.2")
    assert "empty list" in ignored(seen)["cuda_graph_sizes"][1]


def test_dicts_by_version():
    text = spec("compilation_config: {level: 3}")
    assert read(text, "0.8.5").args["compilation_config"].value == {"level": 3}   # literal_eval
    seen = read(text, "0.9.2")
    assert rejected(seen)["compilation_config"][1] == \
        "argument --compilation-config/-O: invalid loads value: \"{'level': 3}\""
    assert read(text, "0.20.0").args["compilation_config"].value == {"level": 3}  # json.dumps
    # a JSON string works everywhere from 0.7.3
    for version in ("0.7.3", "0.9.2", "0.15.0"):
        seen = read(spec("compilation_config: '{\"level\": 3}'"), version)
        assert seen.args["compilation_config"].value == {"level": 3}, version


def test_dotted_keys_from_09():
    text = spec("compilation_config.level: 3\ncompilation_config.cudagraph_capture_sizes: '[1,2]'")
    seen = read(text, "0.9.2")
    setting = seen.args["compilation_config"]
    assert setting.value == {"level": 3, "cudagraph_capture_sizes": [1, 2]}
    assert unknown(seen) == []
    seen = read(text, "0.8.5")
    assert sorted(s.key for s in unknown(seen)) == ["compilation_config.cudagraph_capture_sizes",
                                                   "compilation_config.level"]


def test_null_values():
    seen = read(spec("max-model-len: null\nmax-num-seqs: ~"), "0.8.5")
    assert seen.args["max_model_len"].value is None                  # optional type
    assert rejected(seen)["max_num_seqs"][1] == "argument --max-num-seqs: invalid int value: 'None'"


# --- keys ----------------------------------------------------------------------------------


def test_short_alias_is_unknown_as_a_yaml_key_but_works_on_the_command_line():
    seen = read(spec("tp: 4"), "0.8.5")
    assert [(s.key, s.name, s.value, s.line, s.column) for s in unknown(seen)] == [("tp", "tp", 4, 3, 3)]
    assert "tensor_parallel_size" not in seen.args
    seen = read("vllm serve m -tp 4", "0.8.5", kind="command")
    setting = seen.args["tensor_parallel_size"]
    assert (setting.key, setting.value, setting.column, setting.source) == ("-tp", 4, 14, "cli")
    assert unknown(seen) == []


def test_unique_prefix_is_accepted_and_ambiguous_is_rejected():
    seen = read(spec("max_model: 4096"), "0.8.5")
    setting = seen.args["max_model_len"]
    assert setting.value == 4096 and setting.key == "max_model" and setting.name == "max_model_len"
    seen = read(spec("max: 4096"), "0.8.5")
    assert rejected(seen)["max"][1].startswith("ambiguous option: --max could match --max-model-len,")
    seen = read("vllm serve m --tensor 2", "0.8.5", kind="command")
    assert seen.args["tensor_parallel_size"].value == 2


def test_abbreviation_matching_exactly_two_options_is_ambiguous():
    # the hand-made table has --max-num-seqs and --max-num-batched-tokens: two, not more
    seen = read(spec("max_num: 8"), "0.8.5")
    assert rejected(seen)["max_num"][1] == ("ambiguous option: --max-num could match --max-num-seqs, "
                                           "--max-num-batched-tokens")
    assert "max_num_seqs" not in seen.args and "max_num_batched_tokens" not in seen.args
    seen = read(spec("max_num_s: 8"), "0.8.5")    # one match: accepted
    assert seen.args["max_num_seqs"].value == 8 and rejected(seen) == {}


def test_underscores_and_dashes_both_work():
    seen = read(spec("max_num_seqs: 8\ngpu-memory-utilization: 0.8"), "0.8.5")
    assert seen.args["max_num_seqs"].value == 8 and seen.args["gpu_memory_utilization"].value == 0.8
    seen = read("vllm serve m --max_num_seqs=8 --gpu_memory_utilization 0.8", "0.8.5", kind="command")
    assert seen.args["max_num_seqs"].value == 8 and seen.args["gpu_memory_utilization"].value == 0.8


def test_unknown_keys_and_flags():
    seen = read(spec("max-model-length: 4096\n--max-num-seqs: 8"), "0.8.5")
    assert [s.key for s in unknown(seen)] == ["max-model-length", "--max-num-seqs"]
    seen = read("vllm serve m --max-model-length 4096 --enforce-eager --gpu-memory-utilisation=0.8",
                "0.8.5", kind="command")
    found = {s.key: (s.value, s.column) for s in unknown(seen)}
    assert found == {"--max-model-length": ("4096", 14), "--gpu-memory-utilisation": ("0.8", 54)}
    assert seen.args["enforce_eager"].value is True and seen.model.value == "m"


# --- values --------------------------------------------------------------------------------


@pytest.mark.parametrize("text,value", [
    ("32k", 32000), ("32K", 32768), ("25.6k", 25600), ("1m", 1000000), ("2M", 2097152), ("4096", 4096),
])
def test_human_readable_ints(text, value):
    assert human_readable_int(text) == value
    seen = read(spec(f"max-model-len: {text}"), "0.8.5")
    assert seen.args["max_model_len"].value == value
    seen = read(f"vllm serve m --max-model-len {text}", "0.9.2", kind="command")
    assert seen.args["max_model_len"].value == value


def test_human_ints_are_refused_where_the_type_is_int():
    seen = read(spec("max-model-len: 32k"), "0.7.3")
    assert rejected(seen)["max_model_len"][1] == "argument --max-model-len: invalid int value: '32k'"
    seen = read(spec("max-model-len: 1.5K"), "0.8.5")
    assert "Decimals are not allowed with binary suffixes like K" in rejected(seen)["max_model_len"][1]


def test_command_line_values_are_typed():
    seen = read("vllm serve m --max-num-seqs 8 --gpu-memory-utilization 0.85 --port 8000 "
                "--served-model-name a b --kv-cache-dtype fp8 --compilation-config '{\"level\": 2}'",
                "0.8.5", kind="command")
    values = {k: s.value for k, s in seen.args.items()}
    assert values == {"max_num_seqs": 8, "gpu_memory_utilization": 0.85, "port": 8000,
                      "served_model_name": ["a", "b"], "kv_cache_dtype": "fp8",
                      "compilation_config": {"level": 2}}


def test_bad_values_are_rejected_with_argparse_messages():
    seen = read("vllm serve m --max-num-seqs eight --kv-cache-dtype fp4 --port", "0.8.5",
                kind="command")
    assert rejected(seen)["max_num_seqs"][1] == "argument --max-num-seqs: invalid int value: 'eight'"
    assert rejected(seen)["kv_cache_dtype"][1] == \
        "argument --kv-cache-dtype: invalid choice: 'fp4' (choose from 'auto', 'fp8')"
    assert rejected(seen)["port"][1] == "argument --port: expected one argument"
    assert rejected(seen)["max_num_seqs"][0].column == 14
    seen = read("vllm serve m --enforce-eager=yes", "0.8.5", kind="command")
    assert "ignored explicit argument 'yes'" in rejected(seen)["enforce_eager"][1]


LORA = Flag("lora-modules", "lora_modules", type="str", nargs="+", action="LoRAParserAction", optional=True)


@pytest.mark.parametrize("given,problem", [
    ("sql", "Invalid JSON format for --lora-modules: sql"),
    ("'{\"name\": \"sql\"}'", "Invalid fields for --lora-modules: {\"name\": \"sql\"} - LoRAModulePath"
     ".__init__() missing 1 required positional argument: 'path'"),
    ("'{}'", "Invalid fields for --lora-modules: {} - LoRAModulePath.__init__() missing 2 required "
     "positional arguments: 'name' and 'path'"),
    ("a=/x 'b,c=/y'", "Invalid JSON format for --lora-modules: b,c=/y"),
])
def test_lora_modules_are_refused_as_its_parser_action_refuses_them(given, problem):
    seen = read(f"vllm serve m --lora-modules {given}", "0.8.5", kind="command",
                facts=make_facts("0.8.5", LORA))
    assert rejected(seen)["lora_modules"][1] == problem


@pytest.mark.parametrize("given", ["sql=/adapters/sql", "a=/x b=/y",
                                   "'{\"name\": \"sql\", \"path\": \"/x\", \"base_model_name\": \"m\"}'"])
def test_lora_modules_in_either_form_are_read(given):
    seen = read(f"vllm serve m --lora-modules {given}", "0.8.5", kind="command",
                facts=make_facts("0.8.5", LORA))
    assert "lora_modules" not in rejected(seen) and "lora_modules" in seen.args


@pytest.mark.parametrize("version,expected", [
    ("0.7.3", ("compilation_config", {"level": 3})),
    ("0.8.5", ("compilation_config", {"level": 3})),
    ("0.9.2", ("compilation_config", {"level": 3})),
    ("0.11.0", ("compilation_config", {"level": 3})),
    ("0.12.0", ("optimization_level", "3")),
])
def test_dash_o_by_version(version, expected):
    for cmd in ("vllm serve m -O3", "vllm serve m -O 3"):
        seen = read(cmd, version, kind="command")
        dest, value = expected
        assert seen.args[dest].value == value, (version, cmd)
        assert seen.args[dest].column == 14


# --- layers and the model ------------------------------------------------------------------


def test_command_line_wins_over_its_config_file(tmp_path):
    (tmp_path / "c.yaml").write_text("tensor_parallel_size: 2\nmax_model_len: 1024\n"
                                     "enable_prefix_caching: false\ntp: 8\n")
    cfg = load_command("vllm serve m --config c.yaml -tp 4", base_dir=str(tmp_path))
    seen = read_as_vllm(cfg, make_facts("0.8.5"))
    assert seen.args["tensor_parallel_size"].value == 4 and seen.args["tensor_parallel_size"].source == "cli"
    assert seen.args["max_model_len"].value == 1024 and seen.args["max_model_len"].source == "yaml"
    assert "enable_prefix_caching" in ignored(seen)
    assert [s.key for s in unknown(seen)] == ["tp"]
    assert seen.model.value == "m"


def test_config_equals_form_is_never_loaded(tmp_path):
    (tmp_path / "c.yaml").write_text("max_model_len: 1024\n")
    cfg = load_command("vllm serve m --config=c.yaml", base_dir=str(tmp_path))
    assert not cfg.config_loaded
    seen = read_as_vllm(cfg, make_facts("0.8.5"))
    assert "never read" in ignored(seen)["config"][1] and "max_model_len" not in seen.args


def test_launch_errors_of_the_config_loader(tmp_path):
    (tmp_path / "c.yaml").write_text("model: m\nmax_model_len: 1024\n")
    # 0.6.3-0.7.3: `vllm serve --config FILE` needs the positional model
    cfg = load_command("vllm serve --config c.yaml", base_dir=str(tmp_path))
    assert "No model_tag specified!" in rejected(read_as_vllm(cfg, make_facts("0.7.3")))["model"][1]
    seen = read_as_vllm(cfg, make_facts("0.8.5"))
    assert "model" not in rejected(seen) and seen.model.value == "m"
    (tmp_path / "d.yaml").write_text("max_model_len: 1024\n")
    cfg = load_command("vllm serve --config d.yaml", base_dir=str(tmp_path))
    assert rejected(read_as_vllm(cfg, make_facts("0.8.5")))["model"][1].startswith("No model specified!")
    # api_server before 0.10.2 keeps its first token in front of the file's options
    cfg = load_command("python -m vllm.entrypoints.openai.api_server --config c.yaml",
                       base_dir=str(tmp_path))
    assert rejected(read_as_vllm(cfg, make_facts("0.9.2")))["config"][1] == \
        "argument --config: expected one argument"
    assert rejected(read_as_vllm(cfg, make_facts("0.10.2"))) == {}


def test_ignored_and_rejected_settings_carry_the_dest():
    seen = read(spec("enable_prefix: false\nmax_model: abc"), "0.8.5")
    assert ignored(seen)["enable_prefix_caching"][0].name == "enable_prefix_caching"
    assert rejected(seen)["max_model_len"][0].name == "max_model_len"
    assert rejected(seen)["max_model_len"][0].key == "max_model"


def test_config_file_extension_rejected():
    seen = read("vllm serve m --config c.json", "0.8.5", kind="command")
    assert rejected(seen)["config"][1] == "Config file must be of a yaml/yml type. json supplied"


def test_model_sources():
    # positional model wins over --model from the config
    seen = read("vllm serve --enforce-eager mymodel", "0.8.5", kind="command")
    assert seen.model.value == "mymodel" and seen.args["enforce_eager"].value is True
    seen = read("python -m vllm.entrypoints.openai.api_server --model x -tp 2", "0.8.5", kind="command")
    assert seen.model.value == "x" and seen.model.key == "--model"
    seen = read("model: cfgmodel\nmax_model_len: 10\n", "0.8.5", kind="config")
    assert seen.model.value == "cfgmodel"
    seen = read(spec("max_model_len: 1"), "0.8.5")
    assert seen.model.value == "m" and (seen.model.line, seen.model.column) == (1, 1)
    seen = read("vllm serve --port 8000", "0.8.5", kind="command")
    assert seen.model is None


def test_stray_positionals_are_rejected():
    seen = read("vllm serve m extra --port 1", "0.8.5", kind="command")
    assert rejected(seen)["extra"][1] == "unrecognized arguments: extra"
    seen = read("python -m vllm.entrypoints.openai.api_server stray --model m", "0.8.5", kind="command")
    assert rejected(seen)["stray"][1] == "unrecognized arguments: stray"


def test_duplicates_by_dest_across_spellings():
    seen = read("vllm serve m -tp 2 --tensor-parallel-size 4", "0.8.5", kind="command")
    assert seen.args["tensor_parallel_size"].value == 4
    pairs = [(a.key, b.key) for a, b in seen.duplicates]
    assert ("-tp", "--tensor-parallel-size") in pairs


def test_input_is_not_changed_and_version_recorded():
    cfg = load_text(spec("tp: 4\nmax_model_len: 32k\nenable_prefix_caching: false"))
    before = copy.deepcopy(cfg)
    seen = read_as_vllm(cfg, make_facts("0.8.5"))
    assert cfg == before and seen is not cfg
    assert seen.version == "0.8.5" and seen.written is cfg
    assert seen.path == cfg.path and seen.suppressions == cfg.suppressions


def test_empty_flag_table_keeps_keys_and_judges_nothing():
    cfg = load_text(spec("tp: 4\nmax-model-len: 4096"))
    seen = read_as_vllm(cfg, Facts(version="0.8.5", origin="test"))
    assert set(seen.args) == {"tp", "max_model_len"} and unknown(seen) == [] and rejected(seen) == {}


def test_release_is_tolerant():
    assert version_tuple("0.6.3.post1") == (0, 6, 3)
    assert version_tuple("0.8.5+corex.4.3") == (0, 8, 5)
    assert version_tuple("0.8.5-corex.4.2") == (0, 8, 5)
    assert version_tuple("0.10") == (0, 10, 0)
    assert version_tuple("dev") == (999, 0, 0)


# --- real shipped facts --------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.6.3.post1", "0.7.3", "0.8.5", "0.9.2", "0.10.2", "0.11.0",
                                     "0.12.0", "0.33.0"])
def test_with_shipped_facts(version):
    facts = facts_for_version(version)
    v = version_tuple(version)
    text = spec("tensor-parallel-size: 2\nmax_model_len: 4096\ngpu-memory-utilization: 0.85\n"
                "enforce_eager: true\nenable-prefix-caching: false\ntp: 4\nmax_num_seq: 8")
    seen = read_as_vllm(load_text(text), facts)
    assert seen.args["tensor_parallel_size"].value == 2
    assert seen.args["max_model_len"].value == 4096
    assert seen.args["gpu_memory_utilization"].value == 0.85
    assert seen.args["max_num_seqs"].value == 8           # unique prefix
    assert [s.key for s in unknown(seen)] == ["tp"]
    if v < (0, 7, 0):
        assert rejected(seen)["enforce_eager"][1] == "unrecognized arguments: True"
    else:
        assert seen.args["enforce_eager"].value is True
        assert "enable_prefix_caching" in ignored(seen)
    cmd = read_as_vllm(load_command("vllm serve m -tp 2 --max-model-len 4096 --enforce-eager"), facts)
    assert cmd.args["tensor_parallel_size"].value == 2 and unknown(cmd) == [] and rejected(cmd) == {}
    assert cmd.model.value == "m"


# --- replaying vLLM's own FlexibleArgumentParser -------------------------------------------
#
# The real `FlexibleArgumentParser` (and StoreBoolean / EnableDisableAction) of each version is
# cut out of the wheel's source with `ast` and run over a stand-in parser built from the same
# shipped flag table, so this checks the token stream (config loading, `_`->`-`, `-O`, dotted
# keys, argparse prefixes, nargs, positionals), not the flag table itself.

_PARSER_FILES = {(0, 6): "vllm/utils.py", (0, 7): "vllm/utils.py", (0, 8): "vllm/utils.py",
                 (0, 9): "vllm/utils/__init__.py", (0, 10): "vllm/utils/__init__.py",
                 (0, 11): "vllm/utils/__init__.py"}
_REPLAY_CASES = [
    ("max_model_len: 4096\ntensor-parallel-size: 2\n", "m"),
    ("enforce_eager: true\n", "m"),
    ("enforce_eager: false\nmax_num_seqs: 8\n", "m"),
    ("enable-prefix-caching: false\n", "m"),
    ("enable_chunked_prefill: false\n", "m"),
    ("no_enable_prefix_caching: true\n", "m"),
    ("tp: 4\n", "m"),
    ("max_model: 4096\n", "m"),
    ("max: 4096\n", "m"),
    ("max_model_len: 32k\n", "m"),
    ("cuda_graph_sizes: [1, 2, 4]\n", "m"),
    ("served_model_name: [a, b]\n", "m"),
    ("compilation_config: {level: 3}\n", "m"),
    ("compilation_config.level: 3\n", "m"),
    ("max_model_len: null\n", "m"),
    ("model: mm\nmax_model_len: 10\n", ""),
    ("tensor_parallel_size: 2\nmax_model_len: 10\n", "m -tp 4"),
    (None, "m -tp 4 --enforce-eager --max-model-len=4096 --max_num_seqs 3"),
    (None, "m -O3"),
    (None, "m --no-enable-prefix-caching"),
    (None, "--enforce-eager m"),
    (None, "m --served-model-name a b --port 8001"),
    (None, "m --tensor 2"),
    (None, "m --bogus 2"),
    (None, "m extra"),
    (None, "m --kv-cache-dtype fp9"),
    (None, "m --enable-chunked-prefill false"),
]


def _real_parser(site, version, facts, entrypoint):
    import argparse
    import ast
    import json
    import logging
    import re
    import sys
    import textwrap
    import typing
    from collections import defaultdict

    import yaml

    from patchops.lint.reading.option_table import action_of
    from patchops.lint.reading.value_types import convert

    v = version_tuple(version)
    rel = _PARSER_FILES.get(v[:2], "vllm/utils/argparse_utils.py")
    names = ("StoreBoolean", "EnableDisableAction", "_register_action", "FlexibleArgumentParser")

    class _Failed(Exception):
        pass

    ns = dict(argparse=argparse, ArgumentParser=argparse.ArgumentParser,
              Namespace=argparse.Namespace, ArgumentTypeError=argparse.ArgumentTypeError,
              Action=argparse.Action, BooleanOptionalAction=argparse.BooleanOptionalAction,
              _ArgumentGroup=argparse._ArgumentGroup, SortedHelpFormatter=argparse.HelpFormatter,
              json=json, re=re, sys=sys, yaml=yaml, textwrap=textwrap,
              logger=logging.getLogger("replay"))
    ns.update({k: getattr(typing, k) for k in ("Any", "Union", "List", "Dict", "Optional")})
    ns["defaultdict"] = defaultdict
    for path in (rel, "vllm/engine/arg_utils.py"):
        source = (site / path).read_text()
        nodes = [n for n in ast.parse(source).body
                 if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name in names
                 and n.name not in ns]
        nodes.sort(key=lambda n: names.index(n.name))
        for node in nodes:
            exec(compile(ast.get_source_segment(source, node), path, "exec"), ns)
    parser_class = ns["FlexibleArgumentParser"]

    def error(self, message):
        raise _Failed(message)

    parser_class.error = error
    top = parser_class(prog="vllm")
    target = top
    if entrypoint == "serve":
        target = top.add_subparsers(dest="subparser").add_parser("serve")
        target.add_argument("model_tag", type=str, **({} if v < (0, 8, 0) else {"nargs": "?"}))
    for flag in facts.flags.values():
        action = action_of(flag)
        kw = dict(dest=flag.dest)
        if action in ("store_true", "store_false"):
            kw["action"] = action
        elif action == "boolean_optional":
            kw["action"] = argparse.BooleanOptionalAction
        elif action == "store_boolean":
            kw.update(action=ns["StoreBoolean"], nargs="?", const="True")
        elif action in ("store", "append"):
            def typed(text, flag=flag):
                try:
                    return convert(flag, text, release(version))
                except Exception as exc:
                    raise argparse.ArgumentTypeError(str(exc))
            typed.__name__ = flag.type or "str"
            kw.update(action=action, type=typed)
            if flag.nargs:
                kw["nargs"] = flag.nargs
            if flag.choices:
                kw["choices"] = list(flag.choices)
        else:
            continue
        target.add_argument("--" + flag.name, *flag.aliases, **kw)
    return top, _Failed


@pytest.mark.vllm
@pytest.mark.parametrize("version", ["0.6.3.post1", "0.7.3", "0.8.5", "0.9.2", "0.10.2", "0.11.0",
                                     "0.12.0", "0.33.0"])
@pytest.mark.parametrize("entrypoint", ["serve", "api_server"])
def test_reading_agrees_with_vllms_own_parser(vllm_site, tmp_path, version, entrypoint):
    facts = facts_for_version(version)
    site = vllm_site(version)
    parser, failed = _real_parser(site, version, facts, entrypoint)
    defaults = vars(parser.parse_args(["serve", "m"] if entrypoint == "serve" else []))
    for yaml_text, cli in _REPLAY_CASES:
        argv = cli.split()
        if entrypoint == "api_server" and argv[:1] == ["m"]:
            argv = ["--model", "m"] + argv[1:]
        if yaml_text is not None:
            (tmp_path / "c.yaml").write_text(yaml_text)
            argv += ["--config", str(tmp_path / "c.yaml")]
        try:
            real = vars(parser.parse_args((["serve"] if entrypoint == "serve" else []) + argv))
            real_error = None
        except (failed, ValueError, AssertionError) as exc:
            real, real_error = None, str(exc)
        program = "vllm serve" if entrypoint == "serve" else \
            "python -m vllm.entrypoints.openai.api_server"
        seen = read_as_vllm(load_command(f"{program} {' '.join(argv)}"), facts)
        case = (version, entrypoint, yaml_text, cli)
        messages = [m for _s, m in rejected(seen).values()]
        if real_error is not None:
            assert unknown(seen) or rejected(seen), (case, real_error)
            if real_error.startswith("argument ") or real_error.startswith("ambiguous"):
                assert real_error in messages, (case, real_error, messages)
            continue
        assert not unknown(seen) and not rejected(seen), (case, unknown(seen), rejected(seen))
        if real.get("model_tag") is not None:
            real["model"] = real["model_tag"]
        for dest, setting in seen.args.items():
            assert real[dest] == setting.value, (case, dest)
        ignored_mangled = {d for d, (_s, why) in ignored(seen).items() if "Python text" in why}
        for dest, value in real.items():
            if dest in ("subparser", "model_tag", "config", "model") or dest in ignored_mangled:
                continue
            if dest not in seen.args:
                assert value == defaults.get(dest), (case, dest)
        if real.get("model") is not None:
            assert seen.model is not None and seen.model.value == real["model"], case
