"""lint/vllm/prediction.py: the record every predictor returns."""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.vllm.prediction import Prediction


def test_unpacks_as_value_and_reason():
    value, reason = Prediction(8192, "max_model_len caps it")
    assert (value, reason) == (8192, "max_model_len caps it")


def test_certain_with_no_alternatives_fields_or_error_by_default():
    found = Prediction(True, "why")
    assert (found.certain, found.alternatives, found.fields, found.error) == (True, (), (), None)


def test_candidates_are_the_value_then_the_alternatives_without_repeats():
    assert Prediction("FLASH_ATTN", "", alternatives=("XFORMERS", "FLASH_ATTN", "XFORMERS")).candidates == \
        ("FLASH_ATTN", "XFORMERS")
    assert Prediction(None, "").candidates == (None,)


def test_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Prediction(1, "").value = 2
