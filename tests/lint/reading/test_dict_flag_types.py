"""How a dict-valued flag reads its argv string, as each copy's get_kwargs() makes it.

0.8.x wraps dict fields in `optional_type(json.loads)`, which reads a value that is not
`{...}` as key=value pairs (nullable_kvs); from 0.10 the wrapper is plain JSON. 0.32 types
`limit_per_prompt` with a dict subclass (`MultiModalDummyOptions(dict[...])`), a dict too.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from lintkit import linter
from patchops.lint.facts.model import Flag
from patchops.lint.extract.hint_kwargs import JSON_OR_KVS, kwargs_from_hints, kwargs_style
from patchops.lint.extract.source_tree import Module
from patchops.lint.reading.value_types import BadValue, convert
from patchops.lint.vllm.releases import release

lint = linter("PO107", kind="command")

GET_KWARGS = """
    def get_kwargs(cls):
        for field in fields(cls):
            if contains_type(type_hints, dict):
                kwargs[name]["type"] = {wrapped}
"""
OPTIONAL_TYPE_085 = """
    def optional_type(return_type):
        def _optional_type(val):
            if return_type is json.loads and not re.match("^{.*}$", val):
                return nullable_kvs(val)
            return return_type(val)
        return _optional_type
"""
OPTIONAL_TYPE_010 = """
    def optional_type(return_type):
        def _optional_type(val):
            return parse_type(return_type)(val)
        return _optional_type
"""


def _style(*sources: str):
    text = "".join(textwrap.dedent(s) for s in sources)
    return kwargs_style(Module("vllm.engine.arg_utils", "vllm/engine/arg_utils.py", ast.parse(text)))


@pytest.mark.parametrize("sources, kind, optional", [
    ((GET_KWARGS.format(wrapped="optional_type(json.loads)"), OPTIONAL_TYPE_085), JSON_OR_KVS, True),
    ((GET_KWARGS.format(wrapped="optional_type(json.loads)"), OPTIONAL_TYPE_010), "json", True),
    ((GET_KWARGS.format(wrapped="parse_type(json.loads)"), OPTIONAL_TYPE_085), "json", None),
])
def test_dict_field_type_follows_the_wrapper_and_its_fallback(sources, kind, optional):
    kw = kwargs_from_hints({("dict",)}, "limit_per_prompt", _style(*sources))
    assert kw["type"] == kind
    assert kw.get("optional") is optional


def _flag(kind: str) -> Flag:
    return Flag(name="limit-mm-per-prompt", dest="limit_mm_per_prompt", type=kind, optional=True)


@pytest.mark.parametrize("text, value", [
    ("image=2", {"image": 2}),
    ("Image = 2,video=1", {"image": 2, "video": 1}),
    ('{"image": 2}', {"image": 2}),
    ("None", None),
])
def test_json_or_key_values_reads_both(text, value):
    assert convert(_flag(JSON_OR_KVS), text, release("0.8.5")) == value


@pytest.mark.parametrize("text, message", [
    ("image", "Each item should be in the form KEY=VALUE"),
    ("image=two", "Failed to parse value of item image=two"),
    ("{image: 2}", "Value {image: 2} cannot be converted to <function loads>."),
])
def test_json_or_key_values_refuses_with_vllms_words(text, message):
    with pytest.raises(BadValue) as caught:
        convert(_flag(JSON_OR_KVS), text, release("0.8.5"))
    assert str(caught.value) == message


def test_plain_json_refuses_key_values():
    with pytest.raises(BadValue):
        convert(_flag("json"), "image=2", release("0.10.1.1"))


@pytest.mark.parametrize("version, refused", [("0.8.5", False), ("0.10.1.1", True), ("0.32.0", True),
                                              ("0.33.0", True)])
def test_limit_mm_key_values_per_release(version, refused):
    found = lint("vllm serve m --limit-mm-per-prompt image=2\n", vllm=version)
    assert bool(found) is refused
    if refused:
        assert found[0].severity == "error" and "--limit-mm-per-prompt" in found[0].message
    assert lint('vllm serve m --limit-mm-per-prompt \'{"image": 2}\'\n', vllm=version) == []
