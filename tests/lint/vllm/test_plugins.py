"""lint/vllm/plugins.py: which parser plugin vLLM would load, from where, and what it prints without it."""

from __future__ import annotations

from patchops.lint.facts.model import facts_for_version
from patchops.lint.input.loaders import load_text
from patchops.lint.vllm import plugins

from handmade import as_read


def config(tmp_path, flags):
    script = tmp_path / "serve.sh"
    script.write_text(f"vllm serve /models/m {flags}\n")
    return as_read(load_text(script.read_text(), path=str(script)))


def test_no_plugin_flag_no_plugin(tmp_path):
    assert plugins.parser_plugin(config(tmp_path, "--seed 0"), facts_for_version("0.8.5"), "tool_call_parser") is None


def test_vllm_loads_only_a_value_longer_than_3_characters(tmp_path):
    facts = facts_for_version("0.8.5")
    assert plugins.parser_plugin(config(tmp_path, "--tool-parser-plugin abc"), facts, "tool_call_parser") is None
    found = plugins.parser_plugin(config(tmp_path, "--tool-parser-plugin abcd"), facts, "tool_call_parser")
    assert found is not None and found.value == "abcd" and found.missing


def test_each_registry_reads_its_own_flag(tmp_path):
    cfg = config(tmp_path, "--reasoning-parser-plugin mine.py")
    facts = facts_for_version("0.25.0")
    assert plugins.parser_plugin(cfg, facts, "tool_call_parser") is None
    assert plugins.parser_plugin(cfg, facts, "reasoning_parser").setting.name == "reasoning_parser_plugin"


def test_a_relative_file_is_found_beside_the_input(tmp_path):
    (tmp_path / "parsers.py").write_text("")
    found = plugins.parser_plugin(config(tmp_path, "--tool-parser-plugin parsers.py"), facts_for_version("0.8.5"),
                                  "tool_call_parser")
    assert found.path == tmp_path / "parsers.py" and not found.missing
    assert found.shown == str(tmp_path / "parsers.py")


def test_a_module_name_proves_nothing_missing_from_0_30(tmp_path):
    cfg = config(tmp_path, "--tool-parser-plugin my_parsers")
    before = plugins.parser_plugin(cfg, facts_for_version("0.25.0"), "tool_call_parser")
    after = plugins.parser_plugin(cfg, facts_for_version("0.30.0"), "tool_call_parser")
    assert (before.module_name, before.missing) == (False, True)
    assert (after.module_name, after.missing) == (True, False)
    assert after.shown == "my_parsers"


def test_a_file_name_or_a_path_is_no_module_name(tmp_path):
    facts = facts_for_version("0.30.0")
    for value in ("my_parsers.py", "plugins/my_parsers"):
        found = plugins.parser_plugin(config(tmp_path, f"--tool-parser-plugin {value}"), facts, "tool_call_parser")
        assert not found.module_name and found.missing, value


def test_the_load_failure_is_worded_as_the_release_words_it(tmp_path):
    plugin = plugins.parser_plugin(config(tmp_path, "--tool-parser-plugin plugins/my_parsers.py"),
                                   facts_for_version("0.8.5"), "tool_call_parser")
    assert plugins.load_failure(facts_for_version("0.6.3.post1"), plugin) == \
        "FileNotFoundError: [Errno 2] No such file or directory: 'plugins/my_parsers.py'"
    assert plugins.load_failure(facts_for_version("0.7.3"), plugin) == \
        "Failed to load module 'my_parsers' from plugins/my_parsers.py."
