"""lint/checks/ir.py: the checks' records read from and written to exactly the JSON the packs ship."""

from __future__ import annotations

import json

import pytest

from patchops.lint.checks import ir
from patchops.lint.facts import packs


def same_json(a, b) -> bool:
    return json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize("version", packs.shipped_releases())
def test_every_shipped_program_round_trips_byte_identically(version):
    data = packs.release_dict(version)
    classes = (data.get("config_checks") or {}).get("classes") or {}
    for name, spec in classes.items():
        assert same_json(ir.program_json(ir.parse_program(spec["program"])), spec["program"]), name
        exprs = list((spec.get("defaults") or {}).values()) + list((spec["built"].get("args") or {}).values())
        exprs += [spec["built"]["when"]] if "when" in spec["built"] else []
        assert all(same_json(ir.to_json(ir.parse(e)), e) for e in exprs), name
    for dest, nested in (data.get("nested_configs") or {}).items():
        program = (nested.get("checks") or {}).get("program")
        if program is not None:
            assert same_json(ir.nested_json(ir.parse_nested(program)), program), dest


def test_the_packs_hold_programs_to_round_trip():
    data = packs.release_dict("0.10.1.1")
    kinds = {item[0] for spec in data["config_checks"]["classes"].values() for item in spec["program"]}
    assert kinds == {"assign", "guard", "build"}


def test_there_is_one_unknown_and_it_reads_back_as_itself():
    assert ir.parse(["unknown"]) is ir.UNKNOWN and ir.to_json(ir.UNKNOWN) == ["unknown"]
    assert ir.parse(["all"]) is ir.ALL
    assert ir.parse(["not", ["unknown"]]) == ir.Not(ir.UNKNOWN)


def test_a_json_list_that_is_no_check_is_refused():
    with pytest.raises(ValueError):
        ir.parse(["lambda", "x"])
    with pytest.raises(ValueError):
        ir.parse_program([["let", "x", ["const", 1]]])      # a nested statement in a class program
    with pytest.raises(ValueError):
        ir.parse_nested([["forget", ["const", 1]]])


def test_a_message_without_its_values_and_the_walk_of_an_expression():
    pieces = [["text", "rank ("], ["expr", ["field", "rank"], "r"], ["text", ") too big"]]
    message = ir.parse_message(pieces)
    assert ir.message_text(message) == "rank () too big"
    expr = ir.parse(["and", [["cmp", "<", ["field", "a"], ["const", 1]], ["other", "ParallelConfig", "b"]]])
    assert [type(e).__name__ for e in ir.walk(expr)] == ["Logic", "Compare", "Name", "Const", "Other"]
    guard = ir.parse_program([["guard", ["const", True], ["field", "a"], pieces, "ValueError"]])[0]
    assert list(ir.statement_exprs(guard)) == [ir.Const(True), ir.Name("field", "a"), ir.Name("field", "rank")]
