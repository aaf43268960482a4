"""Patchset YAML loading and lookup; every error names path:line:col."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from patchops.patchset import model as patchset_mod
from patchops.core.errors import PatchsetError
from patchops.patchset.ops import SetKeyword, SiteCount
from patchops.patchset.model import (ENV_VAR, Patchset, find_patchsets, get_patchset, load_patchset,
                               patchset_dirs)

GOOD = """\
name: demo
summary: A demo patchset.
description: |
  Longer text.
vllm: ">=0.6.3"
ops:
  - op: set-keyword
    file: engine/arg_utils.py
    scope: EngineArgs
    callee: ModelConfig
    keyword: enforce_eager
    value: self.enforce_eager
    pristine: [True]
    sites: 1
  - op: add-decorator
    file: worker/model_runner.py
    vllm: "<0.11"
    scope: ModelRunner.execute_model
    decorator: timed("x")
    sites: ">=1"
"""


def write(folder: Path, text: str, name: str = "demo") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_loads_a_patchset(tmp_path):
    ps = load_patchset(write(tmp_path, GOOD))
    assert (ps.name, ps.summary, ps.description) == ("demo", "A demo patchset.", "Longer text.")
    assert ps.versions == SpecifierSet(">=0.6.3")
    assert ps.ops[0] == SetKeyword(file="engine/arg_utils.py", sites=1, scope="EngineArgs",
                                   callee="ModelConfig", keyword="enforce_eager",
                                   value="self.enforce_eager", pristine=("True",))
    assert ps.ops[1].sites == SiteCount(1, None)
    assert ps.ops[1].vllm == SpecifierSet("<0.11")
    assert ps.files == ("engine/arg_utils.py", "worker/model_runner.py")
    assert ps.files_for("0.11.0") == ("engine/arg_utils.py",)
    assert [i for i, _ in ps.ops_for("0.8.5")] == [1, 2]
    assert ps.ops_for("0.5.0") == ()
    assert ps.path == tmp_path / "demo.yaml"


@pytest.mark.parametrize("version, expected", [
    ("0.6.3.post1", True), ("0.6.3", True), ("0.6.2", False), ("0.9.0rc1", True), (None, True),
    ("0.8.5+corex.4.2.0", True),
])
def test_applies_to(tmp_path, version, expected):
    assert load_patchset(write(tmp_path, GOOD)).applies_to(version) is expected


# Each case: (YAML text, line, column, words the message must contain).
ERRORS = {
    "yaml-syntax": ("name: demo\nops: [\n", 3, 1, ["invalid YAML"]),
    "not-a-mapping": ("- a\n- b\n", 1, 1, ["a patchset must be a mapping, found a list"]),
    "empty": ("", 1, 1, ["empty patchset"]),
    "unknown-top-key": (GOOD.replace("summary:", "sumary:"), 2, 1,
                        ['unknown key "sumary"', 'did you mean "summary"?']),
    "missing-top-key": (GOOD.replace('vllm: ">=0.6.3"\n', ""), 1, 1, ['patchset is missing "vllm"']),
    "duplicate-key": (GOOD.replace("summary:", "name: demo\nsummary:"), 2, 1,
                      ['duplicate key "name"', "first on line 1"]),
    "name-not-file": (GOOD.replace("name: demo", "name: other"), 1, 7,
                      ['name "other" differs from the file name']),
    "name-not-kebab": (GOOD.replace("name: demo", "name: Demo_1"), 1, 7, ["not kebab-case"]),
    "summary-type": (GOOD.replace("summary: A demo patchset.", "summary: [a]"), 2, 10,
                     ['"summary" must be a string, found a list']),
    "bad-specifier": (GOOD.replace('">=0.6.3"', '">=0.6.3,foo"'), 5, 7,
                      ["is not a PEP 440 version specifier"]),
    "unquoted-specifier": (GOOD.replace('">=0.6.3"', "0.8"), 5, 7,
                           ['"vllm" must be a string, found a number', 'like ">=0.8"']),
    "ops-not-list": (GOOD.split("ops:")[0] + "ops: {}\n", 6, 6, ['"ops" must be a non-empty list']),
    "op-not-mapping": (GOOD.split("ops:")[0] + "ops:\n  - set-keyword\n", 7, 5,
                       ["op 1 must be a mapping, found a string"]),
    "op-missing-op": (GOOD.replace("  - op: add-decorator\n    file:", "  - file:"), 15, 5,
                      ['op 2 has no "op" key', "known ops: add-decorator, insert-code"]),
    "unknown-op": (GOOD.replace("op: set-keyword", "op: set-kwarg"), 7, 9,
                   ['unknown op "set-kwarg"', 'did you mean "set-keyword"?',
                    "known ops: add-decorator, insert-code, replace-function, set-default, set-keyword, transformer"]),
    "unknown-op-key": (GOOD.replace("    callee:", "    calee:"), 10, 5,
                       ['unknown key "calee" in set-keyword op 1', 'did you mean "callee"?']),
    "missing-op-key": (GOOD.replace("    keyword: enforce_eager\n", ""), 7, 5,
                       ['set-keyword op 1 is missing "keyword"', "keyword argument to set"]),
    "bad-expression": (GOOD.replace("value: self.enforce_eager", "value: self.enforce_eager)"), 12, 12,
                       ['"value"', "is not a Python expression"]),
    "yaml-bool": (GOOD.replace("pristine: [True]", "pristine: [true]"), 13, 16,
                  ["'true' is a YAML boolean, not Python", "write True or False"]),
    "yaml-null": (GOOD.replace("value: self.enforce_eager", "value:"), 12, 11,
                  ['"value" is empty (YAML null)']),
    "bad-sites": (GOOD.replace("    sites: 1\n", "    sites: many\n"), 14, 12,
                  ['"sites"', "is not a number or a bound"]),
    "sites-bool": (GOOD.replace("    sites: 1\n", "    sites: yes\n"), 14, 12,
                   ['"sites" must be a number or a bound like ">=1", found a boolean']),
    "bad-scope": (GOOD.replace("scope: EngineArgs\n", "scope: EngineArgs.\n"), 9, 12,
                  ["is not a dotted name"]),
    "file-with-vllm-prefix": (GOOD.replace("file: engine/", "file: vllm/engine/"), 8, 11,
                              ["relative to the vllm package already", "'engine/arg_utils.py'"]),
    "op-cross-field": (GOOD.split("ops:")[0] + textwrap.dedent("""\
        ops:
          - op: set-default
            file: engine/arg_utils.py
            scope: EngineArgs
            value: "False"
            pristine: ["True"]
            sites: 1
        """), 7, 5, ["set-default op 1: give exactly one of `param`"]),
    "empty-pristine": (GOOD.replace("pristine: [True]", "pristine: []"), 13, 15,
                       ['"pristine" is an empty list']),
    "transformer-module": (GOOD.split("ops:")[0] + textwrap.dedent("""\
        ops:
          - op: transformer
            file: engine/arg_utils.py
            callable: no_such_module_xyz:Fix
            sites: 1
        """), 7, 5, ["cannot find module 'no_such_module_xyz'"]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_name_path_line_and_column(tmp_path, case):
    text, line, column, words = ERRORS[case]
    path = write(tmp_path, text)
    with pytest.raises(PatchsetError) as caught:
        load_patchset(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}:{column}: "), message
    for word in words:
        assert word in message, message
    assert "\n" not in message


def test_unreadable_file(tmp_path):
    with pytest.raises(PatchsetError, match="cannot read patchset"):
        load_patchset(tmp_path / "missing.yaml")


def test_anchors_share_code_between_ops(tmp_path):
    text = GOOD.split("ops:")[0] + textwrap.dedent("""\
        ops:
          - op: insert-code
            file: a.py
            marker: m
            before: A
            sites: 1
            code: &block |
              X = 1
          - op: insert-code
            file: b.py
            marker: m
            before: B
            sites: 1
            code: *block
        """)
    ps = load_patchset(write(tmp_path, text))
    assert ps.ops[0].code == ps.ops[1].code == "X = 1\n"


def test_search_order_first_match_wins(tmp_path, monkeypatch):
    first, second, env = tmp_path / "first", tmp_path / "second", tmp_path / "env"
    for folder in (first, second, env):
        folder.mkdir()
    write(first, GOOD.replace("A demo patchset.", "From first."))
    write(second, GOOD.replace("A demo patchset.", "From second."))
    write(env, GOOD.replace("name: demo", "name: env-only"), name="env-only")
    monkeypatch.setenv(ENV_VAR, os.pathsep.join([str(env), ""]))
    dirs = patchset_dirs([first, second])
    assert dirs[:3] == (first, second, env)
    assert patchset_mod.SHIPPED_DIR in dirs
    found = find_patchsets([first, second])
    assert found["demo"].summary == "From first."
    assert found["env-only"].path == env / "env-only.yaml"
    assert "corex-eager-allreduce" in found and "decode-step-timing" in found
    assert list(found) == sorted(found)
    assert get_patchset("demo", [second, first]).summary == "From second."


def test_a_single_file_can_be_given(tmp_path):
    path = write(tmp_path, GOOD)
    assert get_patchset(str(path)).name == "demo"
    assert "demo" in find_patchsets([path])


def test_unknown_patchset_lists_known_names(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(PatchsetError) as caught:
        get_patchset("corex-eager-allreduc")
    message = str(caught.value)
    assert message.startswith('unknown patchset "corex-eager-allreduc" (did you mean "corex-eager-allreduce"?)')
    assert "known patchsets: corex-eager-allreduce, decode-step-timing" in message
    assert str(patchset_mod.SHIPPED_DIR) in message


def test_missing_folder_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nope"))
    with pytest.raises(PatchsetError, match=r"nope: patchset folder \(from \$PATCHOPS_PATCHSETS\) does not exist"):
        find_patchsets()
    monkeypatch.delenv(ENV_VAR)
    with pytest.raises(PatchsetError, match="patchset folder does not exist"):
        find_patchsets([tmp_path / "gone"])


def test_broken_file_does_not_block_others_by_name(tmp_path):
    write(tmp_path, GOOD)
    write(tmp_path, "name: [", name="broken")
    assert get_patchset("demo", [tmp_path]).name == "demo"
    with pytest.raises(PatchsetError, match=r"broken.yaml:\d+:\d+: invalid YAML"):
        find_patchsets([tmp_path])


def test_shipped_folder_is_the_repo_patchsets_folder():
    assert patchset_mod.SHIPPED_DIR == Path(__file__).resolve().parents[2] / "patchsets"
    assert isinstance(get_patchset("corex-eager-allreduce"), Patchset)
