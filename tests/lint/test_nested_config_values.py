"""A nested config's own checks on its JSON value: read from the class (ast), run by lint.

facts_extract/value_checks.py reads a config class's post-init into a program, config_fields
reads which enum a field takes, lint/vllm/nested_values.py runs the program on the user's value
and PO112 reports it. Each construct is read from a small class here (a refused value and an
accepted one), then checked against the shipped facts of the real releases.
"""

from __future__ import annotations

import textwrap

import pytest

from lintkit import linter
from patchops.lint.extract.config_fields import nested_config_facts
from patchops.lint.extract.source_tree import Source
from patchops.lint.extract.static_eval import Classes
from patchops.lint.facts.groups import NestedConfig
from patchops.lint.vllm import nested_values

lint = linter("PO112", kind="command")

ENGINE = """
    from dataclasses import dataclass
    from typing import Optional
    from vllm.config import CompilationConfig

    @dataclass
    class EngineArgs:
        compilation_config: {annotation} = None
"""
CONFIG = """
    import enum
    from typing import Optional
    from dataclasses import dataclass, field
    from pydantic import field_validator
    from pydantic.dataclasses import dataclass as pydantic_dataclass

    class Mode(enum.IntEnum):
        NONE = 0
        FULL = 3

    @pydantic_dataclass
    class CompilationConfig:
        custom_ops: list[str] = field(default_factory=list)
        mode: Mode = None
        flag: bool = False
        backend: str = ""
"""


def _spec(tmp_path, body: str, annotation: str = "Optional[CompilationConfig]"):
    (tmp_path / "vllm/engine").mkdir(parents=True)
    (tmp_path / "vllm/__init__.py").write_text("")
    (tmp_path / "vllm/engine/__init__.py").write_text("")
    (tmp_path / "vllm/engine/arg_utils.py").write_text(textwrap.dedent(ENGINE.format(annotation=annotation)))
    (tmp_path / "vllm/config.py").write_text(textwrap.dedent(CONFIG) + textwrap.indent(textwrap.dedent(body), "    "))
    src = Source(tmp_path)
    return nested_config_facts(src, Classes(src))["compilation_config"]


def refusal(spec, value):
    """Run nested_values.refusal on the extractor's dict, read as Facts reads it."""
    return nested_values.refusal(NestedConfig.from_dict(spec), value)


def _refused(spec, value):
    found = refusal(spec, value)
    return found[0] if found else None


COUNT_ASSERT = """
    def model_post_init(self, __context):
        count_none = self.custom_ops.count("none")
        count_all = self.custom_ops.count("all")
        assert count_none + count_all <= 1, "Can only specify 'none' or 'all'"
"""
SYNTAX_LOOP = """
    def __post_init__(self):
        for op in self.custom_ops:
            if op not in {"all", "none"} and (len(op) < 2 or op[0] not in {"+", "-"}):
                raise ValueError(f"Invalid syntax '{op}' for custom op")
        base_modes = [op for op in self.custom_ops if op in {"all", "none"}]
        if len(base_modes) > 1:
            raise ValueError("only one base mode")
"""
CONFLICT = """
    def __post_init__(self):
        if self.flag and "+rope" not in self.custom_ops:
            self.custom_ops.append("+rope")
        enabled = {op[1:] for op in self.custom_ops if op.startswith("+")}
        disabled = {op[1:] for op in self.custom_ops if op.startswith("-")}
        both = sorted(enabled & disabled)
        if both:
            raise ValueError(f"cannot both enable and disable: {', '.join(both)}.")
"""


def test_an_assert_over_counts_refuses_two_base_modes(tmp_path):
    spec = _spec(tmp_path, COUNT_ASSERT)
    assert _refused(spec, {"custom_ops": ["all", "none"]}) == "Can only specify 'none' or 'all'"
    assert refusal(spec, {"custom_ops": ["all", "none"]})[1] == "AssertionError"
    assert _refused(spec, {"custom_ops": ["all", "+rms_norm"]}) is None
    assert _refused(spec, {"custom_ops": "all"}) is None        # no list: pydantic's own error first


def test_a_loop_over_the_list_and_a_comprehension(tmp_path):
    spec = _spec(tmp_path, SYNTAX_LOOP)
    assert _refused(spec, {"custom_ops": ["+ok", "rms_norm"]}) == "Invalid syntax 'rms_norm' for custom op"
    assert _refused(spec, {"custom_ops": ["+"]}) == "Invalid syntax '+' for custom op"     # len(op) < 2
    assert _refused(spec, {"custom_ops": ["+rms_norm", "-silu", "none"]}) is None
    assert _refused(spec, {"custom_ops": ["all", "none"]}) == "only one base mode"
    assert _refused(spec, {"custom_ops": ["all"]}) is None
    assert _refused(spec, {"custom_ops": [3]}) is None          # len(3) raises: not vLLM's check


def test_a_set_intersection_names_the_ops(tmp_path):
    spec = _spec(tmp_path, CONFLICT)
    assert _refused(spec, {"custom_ops": ["+a", "-a", "+b", "-b"]}) == "cannot both enable and disable: a, b."
    assert _refused(spec, {"custom_ops": ["+a", "-b"]}) is None


def test_a_conditional_append_counts_only_when_both_launches_refuse(tmp_path):
    spec = _spec(tmp_path, CONFLICT)
    assert ["maybe_add", "custom_ops", "+rope"] in spec["checks"]["program"]
    # "-rope" conflicts only when `flag` appends "+rope": not certain, so not reported
    assert _refused(spec, {"custom_ops": ["-rope"]}) is None
    assert _refused(spec, {"custom_ops": ["-rope", "+rope"]}) == "cannot both enable and disable: rope."
    spec = _spec(tmp_path / "needs", """
        def __post_init__(self):
            if self.flag:
                self.custom_ops.append("+rope")
            if "+rope" not in self.custom_ops:
                raise ValueError("no rope")
        """)
    # refused without the append, accepted with it: some launches get through
    assert _refused(spec, {"custom_ops": ["-x"]}) is None


def test_a_field_changed_before_the_check_is_not_judged(tmp_path):
    spec = _spec(tmp_path, """
        def __post_init__(self):
            self.custom_ops = ["none"]
            if len(self.custom_ops) > 1:
                raise ValueError("too many")
        """)
    assert _refused(spec, {"custom_ops": ["a", "b"]}) is None
    spec = _spec(tmp_path / "kept", """
        def __post_init__(self):
            self.backend = "eager"
            if len(self.custom_ops) > 1:
                raise ValueError("too many")
        """)
    assert _refused(spec, {"custom_ops": ["a", "b"]}) == "too many"


def test_a_method_call_forgets_what_it_changes(tmp_path):
    spec = _spec(tmp_path, """
        def _fill(self):
            self.custom_ops = ["none"]

        def __post_init__(self):
            self._fill()
            if len(self.custom_ops) > 1:
                raise ValueError("too many")
        """)
    assert _refused(spec, {"custom_ops": ["a", "b"]}) is None


def test_a_check_on_defaults_alone_is_not_reported(tmp_path):
    spec = _spec(tmp_path, """
        def __post_init__(self):
            if self.backend == "":
                raise ValueError("no backend")
        """)
    assert _refused(spec, {"custom_ops": ["+a"]}) is None
    assert _refused(spec, {"backend": ""}) == "no backend"
    assert _refused(spec, {"backend": "eager"}) is None


def test_a_field_a_validator_converts_is_unknown(tmp_path):
    spec = _spec(tmp_path, """
        @field_validator("backend", mode="before")
        @classmethod
        def _lower(cls, value):
            return value.lower()

        def __post_init__(self):
            if self.backend == "EAGER":
                raise ValueError("upper")
        """)
    assert _refused(spec, {"backend": "EAGER"}) is None


def test_only_a_class_engine_args_builds_at_parse_time_is_checked(tmp_path):
    assert "checks" in _spec(tmp_path / "a", COUNT_ASSERT)
    assert "checks" not in _spec(tmp_path / "b", COUNT_ASSERT, annotation="Optional[dict]")


@pytest.mark.parametrize("validator, values", [
    ("", [0, 3]),
    # converts strings only, and a wrap validator that skips None: ints reach the enum check
    ('''
        @field_validator("mode", mode="before")
        @classmethod
        def _names(cls, value):
            if isinstance(value, str):
                return Mode[value.upper()]
            return value
        @field_validator("mode", mode="wrap")
        @classmethod
        def _skip_none(cls, value, handler):
            if value is None:
                return value
            return handler(value)''', [0, 3]),
    # may change any value first: the enum says nothing certain
    ('''
        @field_validator("mode", mode="before")
        @classmethod
        def _shift(cls, value):
            return value - 1''', None),
])
def test_an_enum_field_takes_its_member_values(tmp_path, validator, values):
    spec = _spec(tmp_path, validator + "\n")
    assert spec["fields"]["mode"].get("enum_values") == values


# --- the real releases, through PO112 -----------------------------------------------------------


def _ops(ops) -> str:
    import json
    return f"vllm serve m --compilation-config '{json.dumps({'custom_ops': ops})}'\n"


@pytest.mark.parametrize("version, message", [
    ("0.8.5", "Can only specify 'none' or 'all'"),
    ("0.10.1.1", "Can only specify 'none' or 'all'"),
    ("0.32.0", "custom_ops can contain only one base mode: 'all' or 'none'"),
    ("0.33.0", "custom_ops can contain only one base mode: 'all' or 'none'"),
])
def test_two_base_modes_per_release(version, message):
    [found] = lint(_ops(["all", "none"]), vllm=version)
    assert found.severity == "error" and message in found.explanation and (found.line, found.column) == (1, 14)
    assert lint(_ops(["all", "+rms_norm"]), vllm=version) == []


@pytest.mark.parametrize("version, refused", [("0.10.1.1", False), ("0.32.0", True), ("0.33.0", True)])
def test_bare_op_names_and_conflicts_from_032(version, refused):
    for ops, message in ((["rms_norm"], "Invalid syntax 'rms_norm' for custom op"),
                         (["+rms_norm", "-rms_norm"], "enable and disable the same operation(s): rms_norm.")):
        found = lint(_ops(ops), vllm=version)
        assert bool(found) is refused
        assert all(message in d.explanation and d.severity == "error" for d in found)
    assert lint(_ops(["+rms_norm", "-silu_and_mul"]), vllm=version) == []


@pytest.mark.parametrize("version", ["0.32.0", "0.33.0"])
def test_compilation_mode_takes_the_enum_values(version):
    [found] = lint("vllm serve m --compilation-config '{\"mode\": 9}'\n", vllm=version)
    assert found.severity == "error" and found.vllm_message == "mode: Input should be 0, 1, 2 or 3"
    assert lint("vllm serve m --compilation-config '{\"mode\": 3}'\n", vllm=version) == []
    assert lint("vllm serve m --compilation-config '{\"mode\": \"VLLM_COMPILE\"}'\n", vllm=version) == []


def test_an_enum_inside_a_collection_is_not_judged_as_the_enum(tmp_path):
    spec = _spec(tmp_path, "modes: list[Mode] = field(default_factory=list)\n")
    assert "enum_values" not in spec["fields"]["modes"]
    assert _spec(tmp_path / "optional", "other: Optional[Mode] = None\n")["fields"]["other"]["enum_values"] == [0, 3]
