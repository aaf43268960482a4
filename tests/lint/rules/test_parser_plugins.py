"""Parser plugins: an existing plugin turns unknown-parser-name into a warning naming it (PO901, PO907)."""

from __future__ import annotations

from patchops.lint.input.loaders import load_file
from patchops.lint.facts.model import facts_for_version
from patchops.lint.runner import lint_config

from lintkit import findings

SPEC = "model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: my_parser\n  tool-parser-plugin: {}\n"


def lint_file(tmp_path, text: str, vllm: str = "0.10.1.1"):
    path = tmp_path / "serve.yaml"
    path.write_text(text)
    return lint_config(load_file(path), facts_for_version(vllm))


def test_a_plugin_file_beside_the_spec_makes_an_unknown_parser_a_warning_naming_the_file(tmp_path):
    (tmp_path / "my_parser.py").write_text("# registers my_parser\n")
    found = lint_file(tmp_path, SPEC.format("my_parser.py"))
    [hit] = [d for d in found if d.code == "PO901"]
    assert hit.severity == "warning" and (hit.line, hit.column) == (4, 3)
    assert f"plugin file {tmp_path / 'my_parser.py'} is loaded first and may register it" in hit.explanation
    assert [d for d in found if d.code == "PO907"] == []


def test_a_missing_plugin_file_leaves_the_unknown_parser_an_error(tmp_path):
    found = lint_file(tmp_path, SPEC.format("my_parser.py"))
    [unknown] = [d for d in found if d.code == "PO901"]
    [missing] = [d for d in found if d.code == "PO907"]
    assert unknown.severity == "error" and "does not exist, so nothing registers it" in unknown.explanation
    assert (missing.severity, missing.line) == ("warning", 5)
    assert missing.vllm_message == "Failed to load module 'my_parser' from my_parser.py."


def test_a_module_name_may_register_the_parser_from_0_30_and_is_a_missing_path_before():
    text = SPEC.format("my_company.tool_parsers")
    [hit] = findings("PO901", text, vllm="0.33.0")
    assert hit.severity == "warning" and "plugin module my_company.tool_parsers" in hit.explanation
    assert findings("PO907", text, vllm="0.33.0") == []
    [before] = findings("PO901", text, vllm="0.25.0")
    assert before.severity == "error"
    assert [d.severity for d in findings("PO907", text, vllm="0.25.0")] == ["warning"]


def test_vllm_ignores_a_plugin_of_three_characters_or_fewer():
    assert findings("PO907", SPEC.format("a.py"), vllm="0.10.1.1") != []
    assert findings("PO907", SPEC.format("p.y"), vllm="0.10.1.1") == []
    assert findings("PO901", SPEC.format("p.y"), vllm="0.10.1.1")[0].severity == "error"


def test_0_6_3_exits_on_a_missing_plugin():
    [hit] = findings("PO907", "vllm serve m --tool-parser-plugin /nope/x.py\n", vllm="0.6.3.post1", kind="command")
    assert hit.severity == "error"
    assert hit.vllm_message == "FileNotFoundError: [Errno 2] No such file or directory: '/nope/x.py'"
