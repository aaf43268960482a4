"""PO322 async-scheduling-speculative-method beyond its examples."""

from __future__ import annotations


import pytest

from patchops.lint.rules.async_scheduling_speculative_method import AsyncSchedulingSpeculativeMethod

from lintkit import linter, said

lint = linter(AsyncSchedulingSpeculativeMethod.code, vllm="0.32.0", kind="command")


def spec(body: str) -> str:
    return f"vllm serve m --async-scheduling --speculative-config '{{{body}, \"num_speculative_tokens\": 3}}'\n"


@pytest.mark.parametrize("method", ["ngram", "[ngram]", "suffix"])
def test_methods_outside_the_list_are_refused(method):
    [found] = lint(spec(f'"method": "{method}"'))
    assert found.severity == "error" and (found.line, found.column) == (1, 14)
    assert f"with {method.strip('[]')} speculative decoding" in found.message and "ngram_gpu" in said(found)
    assert found.vllm_message.startswith("Currently, async scheduling is only supported with EAGLE")


@pytest.mark.parametrize("body", ['"method": "ngram_gpu"', '"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3"',
                                  '"method": "ngram", "model": "org/draft"', '"model": "org/draft"'])
def test_allowed_methods_and_draft_checkpoints_pass(body):
    assert lint(spec(body)) == []


def test_async_scheduling_off_or_unset_passes():
    assert lint("vllm serve m --no-async-scheduling --speculative-config '{\"method\": \"ngram\", "
                "\"num_speculative_tokens\": 3}'\n") == []
    assert lint("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'\n") == []


@pytest.mark.parametrize("version, refused", [("0.12.0", True), ("0.11.0", False), ("0.33.0", False)])
def test_only_releases_with_the_guard(version, refused):
    found = linter(AsyncSchedulingSpeculativeMethod.code, vllm=version, kind="command")(spec('"method": "ngram"'))
    assert bool(found) is refused
