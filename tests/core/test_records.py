"""patchops.core.records: what a dataclass promises (constructor, repr, equality, hashing,
immutability, replace, as_dict), without defining a single dataclass."""

from __future__ import annotations

import dataclasses
import importlib
import json
from typing import Dict, List, Optional

import pytest

from patchops.core.records import FrozenRecordError, StrEnum, as_dict, field, field_names, record, replace


@record(frozen=True)
class Point:
    x: int
    y: int = 0
    label: str = field(default="", repr=False, compare=False)


@record
class Bag:
    name: str
    items: List[str] = field(default_factory=list)
    extra: Optional[Dict[str, Point]] = None


def test_constructor_takes_positions_keywords_defaults_and_factories():
    assert (Point(1).x, Point(1).y, Point(1, 2).y, Point(y=3, x=1).y) == (1, 0, 2, 3)
    first, second = Bag("a"), Bag("b")
    first.items.append("x")
    assert second.items == []          # a fresh list each time, not a shared default


@pytest.mark.parametrize("call, message", [
    (lambda: Point(), "missing argument 'x'"),
    (lambda: Point(1, 2, "l", 4), "takes 3 positional arguments, got 4"),
    (lambda: Point(1, z=2), "unexpected argument 'z'"),
    (lambda: Point(1, x=2), "a second value 'x'"),
])
def test_constructor_refuses_what_a_dataclass_refuses(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_repr_and_equality_follow_the_field_options():
    assert repr(Point(1, 2, "hidden")) == "Point(x=1, y=2)"
    assert Point(1, 2, "a") == Point(1, 2, "b")            # compare=False
    assert Point(1, 2) != Point(1, 3) and Point(1, 2) != (1, 2)
    assert repr(Bag("a")) == "Bag(name='a', items=[], extra=None)"


def test_frozen_records_hash_by_value_and_refuse_assignment():
    assert hash(Point(1, 2, "a")) == hash(Point(1, 2, "b")) and len({Point(1), Point(1)}) == 1
    point = Point(1)
    with pytest.raises(FrozenRecordError):
        point.x = 5
    with pytest.raises(FrozenRecordError):
        del point.x
    assert isinstance(FrozenRecordError(), AttributeError)   # as FrozenInstanceError is


def test_mutable_records_assign_and_are_unhashable():
    bag = Bag("a")
    bag.name = "b"
    assert bag.name == "b"
    with pytest.raises(TypeError):
        hash(bag)


def test_replace_as_dict_and_field_names():
    assert field_names(Point) == field_names(Point(1)) == ("x", "y", "label")
    assert replace(Point(1, 2), y=5) == Point(1, 5)
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(Point(1), z=1)
    bag = Bag("a", ["i"], {"p": Point(1, 2)})
    assert as_dict(bag) == {"name": "a", "items": ["i"], "extra": {"p": {"x": 1, "y": 2, "label": ""}}}


def test_a_required_field_after_a_defaulted_one_is_refused_at_definition():
    with pytest.raises(TypeError, match="'b' without a default follows one with a default"):
        @record
        class Wrong:
            a: int = 0
            b: int


COPIES_SIDE = ("patchops.api.copies", "patchops.core.settings", "patchops.patchset.model", "patchops.host.locate",
               "patchops.store.state", "patchops.store.transaction", "patchops.patching.targets",
               "patchops.patching.status_check", "patchops.patching.plan", "patchops.patching.commit",
               "patchops.patching.restore")


@pytest.mark.parametrize("name", COPIES_SIDE)
def test_the_copies_side_defines_records_not_dataclasses(name):
    """What status, apply and rollback import defines no dataclass: each would cost ~4.5M
    instructions of exec at startup."""
    module = importlib.import_module(name)
    classes = [value for value in vars(module).values()
               if isinstance(value, type) and value.__module__ == name]
    assert [c.__name__ for c in classes if dataclasses.is_dataclass(c)] == []
    assert any(hasattr(c, "__record_fields__") for c in classes)


def test_a_str_enum_reads_as_its_value_everywhere_a_string_went():
    class Color(StrEnum):
        DARK_RED = "dark-red"

    member = Color("dark-red")
    assert member is Color.DARK_RED and member == "dark-red" and {"dark-red": 1}[member] == 1
    assert str(member) == f"{member}" == "{}".format(member) == "%s" % member == "dark-red"
    assert f"{member:>9}|" == " dark-red|" and json.dumps({member: [member]}) == '{"dark-red": ["dark-red"]}'
