"""Compose interpolation (lint/input/compose_env.py) as `docker compose config` gives it."""

from __future__ import annotations

import pytest

from patchops.lint.input.compose_env import Variables, interpolate, read_dotenv

VALUES = {"SET": "a", "EMPTY": ""}


@pytest.mark.parametrize("written, expected", [
    ("$$SET", ("$SET", False)),
    ("x${SET}y$SET", ("xaya", False)),
    ("${EMPTY:-d}|${EMPTY-d}|${UNSET-d}", ("d||d", False)),
    ("${SET:+alt}|${EMPTY:+alt}|${EMPTY+alt}", ("alt||alt", False)),
    ("${UNSET:-${SET}b}", ("ab", False)),
    ("${SET:?needed}", ("a", False)),
    ("${UNSET:?needed}", ("${UNSET:?needed}", True)),
    ("--n=${UNSET}", ("--n=${UNSET}", True)),
    ("$UNSET/$", ("$UNSET/$", True)),
])
def test_interpolate(written, expected):
    unknown = []
    assert interpolate(written, VALUES.get, unknown) == expected
    assert unknown == (["UNSET"] if expected[1] else [])


def test_read_dotenv_quotes_comments_and_references():
    text = ("# a comment\n\nexport A=1 # trailing\nB='$A literal'\nC=\"x\\ty $A\"\nD=${A}2\n"
            "E=${HOST_ONLY}\nnot a line\n")
    assert read_dotenv(text, {"HOST_ONLY": "h"}.get) == {"A": "1", "B": "$A literal", "C": "x\ty 1",
                                                        "D": "12", "E": "h"}


def test_variables_take_the_environment_first(tmp_path):
    (tmp_path / ".env").write_text("A=from-file\nB=file\n")
    found = Variables(str(tmp_path), environ={"A": "from-env"})
    assert (found.get("A"), found.get("B"), found.get("C")) == ("from-env", "file", None)
    assert Variables(str(tmp_path / "none"), environ={}).get("A") is None
