"""A stated vLLM version gets its own release's facts, or says loudly whose it got.

Every final release on PyPI from 0.6.0 on ships its facts (lint/facts/packs.py); a dev build,
an rc, a local build, a release newer than the facts or one PyPI never had resolves by the
rules of lint/facts/resolution.py, and the lint says so at the top of the input's findings
(PO010) in every format.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from patchops.cli.app import app
from patchops.core.errors import LintInputError
from patchops.lint.facts import packs
from patchops.lint.facts.model import facts_for_version, shipped_versions
from patchops.lint.facts.resolution import ResolutionKind, resolve

EXACT, LOCAL, PRE, NEWER, UNLISTED, UNREADABLE = (ResolutionKind.EXACT, ResolutionKind.LOCAL, ResolutionKind.PRE,
                                                ResolutionKind.NEWER, ResolutionKind.UNLISTED,
                                                ResolutionKind.UNREADABLE)

OLDEST, NEWEST = "0.6.0", shipped_versions()[-1]
SPEC = "model: m\nargs:\n  max-model-len: 4096\n"
# --speculative-config is new in 0.8.2: 0.8.1 lacks it, 0.8.2 and later have it.
SPECULATIVE = SPEC + "  speculative-config: '{\"method\": \"ngram\", \"num_speculative_tokens\": 2, " \
                     "\"prompt_lookup_max\": 3}'\n"


def lint(tmp_path, version, text=SPEC, *extra):
    spec = tmp_path / "serve.yaml"
    spec.write_text(text)
    env = {"PATCHOPS_CACHE": str(tmp_path / "cache"), "PATCHOPS_ROOTS": "", "PYTHONPATH": ""}
    return CliRunner().invoke(app, ["lint", str(spec), "--vllm-version", version, "--no-detect-hardware",
                                    "--exit-zero", *extra], env=env)


def lint_json(tmp_path, version, text=SPEC):
    out = lint(tmp_path, version, text, "--format", "json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_every_final_release_from_060_ships_its_facts():
    versions = shipped_versions()
    assert versions[0] == OLDEST and len(versions) >= 67   # 67 on PyPI on 2026-12-02, 0.34.0 the newest
    for expected in ("0.6.1.post2", "0.7.2", "0.8.4", "0.8.5.post1", "0.9.0.1", "0.10.1", "0.13.0",
                     "0.20.1", "0.24.0", "0.34.0"):
        assert expected in versions
    assert len(packs.index()) < len(versions) / 2          # packed by series, not one file each


@pytest.mark.parametrize("version", shipped_versions())
def test_each_release_lints_as_itself(tmp_path, version):
    """Every shipped release is its own facts: `inputs[].vllm_version` is the release asked for, and no PO010."""
    report = lint_json(tmp_path, version)
    [entry] = report["inputs"]
    assert entry["vllm_version"] == version
    assert "PO010" not in {d["code"] for d in report["diagnostics"]}
    facts = facts_for_version(version)
    assert facts.version == version and facts.asked is None
    assert facts.origin.startswith(f"shipped facts from vllm-{version} wheel (vllm-")


@pytest.mark.parametrize("asked,used,kind", [
    ("0.8.4", "0.8.4", EXACT), ("v0.8.4", "0.8.4", EXACT), ("0.8", "0.8.0", EXACT),
    ("0.10.1", "0.10.1", EXACT), ("0.10.1.1", "0.10.1.1", EXACT),          # a hotfix is its own release
    ("0.8.5+corex.4.2", "0.8.5", LOCAL), ("0.8.5-corex.4.2", "0.8.5", LOCAL), ("0.8.5+cu121", "0.8.5", LOCAL),
    ("0.8.5.dev84+g9c1d5b456", "0.8.4", PRE), ("0.8.5rc1", "0.8.4", PRE),  # the release before X
    ("0.9.0rc1", "0.8.5.post1", PRE), ("0.8.5.post1.dev2", "0.8.5", PRE), ("0.6.1rc1", OLDEST, PRE),
    ("0.8.5.post2", "0.8.5.post1", UNLISTED), ("0.9.9", "0.9.2", UNLISTED),
    ("99.0.0", NEWEST, NEWER), (NEWEST + ".post9", NEWEST, NEWER), ("dev", NEWEST, UNREADABLE),
])
def test_resolution(asked, used, kind):
    assert resolve(asked) == (asked, used, kind)
    facts = facts_for_version(asked)
    assert facts.version == used
    assert facts.asked == (None if kind == EXACT else (asked, kind))


@pytest.mark.parametrize("version", ["0.5.4", "0.6.0rc1", "0.6.0.dev3", "0.5.99+corex.1", ""])
def test_older_than_the_oldest_release_is_an_error(version):
    with pytest.raises(LintInputError) as err:
        facts_for_version(version)
    assert OLDEST in str(err.value) and NEWEST in str(err.value)


@pytest.mark.parametrize("version,used,says", [
    ("0.8.5.dev84+g9c1d5b456", "0.8.4", "a dev build or rc: linted against 0.8.4, the release before it"),
    ("99.0.0", NEWEST, f"newer than the shipped facts: linted against {NEWEST}, the newest"),
])
def test_the_warning_heads_the_findings_in_every_format(tmp_path, version, used, says):
    text = lint(tmp_path, version, SPEC + "  bogus-flag: 1\n")
    first = text.stdout.splitlines()[0]
    assert first.endswith("[PO010 facts-of-another-release]") and ":1:1: warning: " in first
    assert f"vLLM {version} is {says}" in first
    report = lint_json(tmp_path, version, SPEC + "  bogus-flag: 1\n")
    assert report["inputs"][0]["vllm_version"] == used
    assert report["diagnostics"][0]["code"] == "PO010" and version in report["diagnostics"][0]["message"]
    sarif = json.loads(lint(tmp_path, version, SPEC + "  bogus-flag: 1\n", "--format", "sarif").stdout)
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "PO010" and result["level"] == "warning"
    assert version in result["message"]["text"] and used in result["message"]["text"]
    github = lint(tmp_path, version, SPEC + "  bogus-flag: 1\n", "--format", "github").stdout.splitlines()
    assert github[0].startswith("::warning ") and "PO010" in github[0] and version in github[0]


def test_a_local_build_is_its_release_and_says_a_fork_may_differ(tmp_path):
    report = lint_json(tmp_path, "0.8.5+corex.4.2", SPEC + "  bogus-flag: 1\n")
    assert report["inputs"][0]["vllm_version"] == "0.8.5"
    first = report["diagnostics"][0]
    assert (first["code"], first["severity"]) == ("PO010", "info") and "a fork may differ" in first["message"]
    # its release's facts are the build's: an unknown flag stays an error
    assert [d["severity"] for d in report["diagnostics"] if d["code"] == "PO101"] == ["error"]


def test_a_flag_only_the_stand_in_lacks_is_a_warning_saying_so(tmp_path):
    # 0.8.2rc1 is linted as 0.8.1, which lacks --speculative-config; 0.8.2 has it.
    report = lint_json(tmp_path, "0.8.2rc1", SPECULATIVE + "  bogus-flag: 1\n")
    by_field = {d["fields"][0]: d for d in report["diagnostics"] if d["code"] == "PO101"}
    assert by_field["speculative_config"]["severity"] == "warning"
    assert "(vLLM 0.8.1 says so, 0.8.2 does not: unsure for 0.8.2rc1)" in by_field["speculative_config"]["message"]
    assert by_field["bogus_flag"]["severity"] == "error"   # unknown on both sides
    # the releases themselves: 0.8.1 refuses it, 0.8.2 accepts it
    assert [d["severity"] for d in lint_json(tmp_path, "0.8.1", SPECULATIVE)["diagnostics"]
            if d["code"] == "PO101"] == ["error"]
    assert "PO101" not in {d["code"] for d in lint_json(tmp_path, "0.8.2", SPECULATIVE)["diagnostics"]}


def test_past_the_newest_every_unknown_flag_is_a_warning(tmp_path):
    report = lint_json(tmp_path, "99.0.0", SPEC + "  bogus-flag: 1\n")
    [unknown] = [d for d in report["diagnostics"] if d["code"] == "PO101"]
    assert unknown["severity"] == "warning" and f"unsure for the newer 99.0.0" in unknown["message"]
    [exact] = [d for d in lint_json(tmp_path, NEWEST, SPEC + "  bogus-flag: 1\n")["diagnostics"]
               if d["code"] == "PO101"]
    assert exact["severity"] == "error"


def test_a_spec_stating_a_dev_build_gets_one_warning_not_two(tmp_path):
    text = "model: m\nvllm:\n  version: 0.8.5.dev84+g9c1d5b456\nargs:\n  max-model-len: 4096\n"
    out = lint(tmp_path, "0.8.5", text, "--format", "json")
    codes = [d["code"] for d in json.loads(out.stdout)["diagnostics"]]
    assert codes.count("PO010") == 1 and "PO002" not in codes


def test_a_kind_is_its_word_in_messages_and_json():
    kind = resolve("0.9.9").kind
    assert kind is ResolutionKind.UNLISTED and f"{kind}" == "unlisted" and json.dumps([kind]) == '["unlisted"]'
