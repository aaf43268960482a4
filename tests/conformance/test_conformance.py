"""patchops lint against real vLLM's recorded verdicts (no vLLM needed to run these).

The verdicts in verdicts/<version>.json were recorded by the harness from real vLLM
(`python scripts/conformance.py record`); baseline.json holds today's known disagreements.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from conformance import borrowed, compare, generate, generate_more, harness
from conformance.cases import Case, all_cases, case_from_mapping

CASES = all_cases()
RECORD = "python scripts/conformance.py record"


@pytest.fixture(scope="module")
def results():
    return compare.compare_all(harness.VERSIONS, CASES)


# --------------------------------------------------------------------------- the judge

@pytest.mark.parametrize("version", harness.VERSIONS)
def test_every_case_has_a_current_verdict(version):
    missing = [c.id for c in harness.stale(harness.cases_for(version, CASES), version)]
    assert not missing, (f"{len(missing)} cases have no current verdict for vLLM {version} "
                         f"(new or changed): {missing[:10]}; run `{RECORD} --version {version}`")


@pytest.mark.parametrize("version", harness.VERSIONS)
def test_verdicts_are_vllm_answers_not_harness_failures(version):
    recorded = harness.load_verdicts(version)["cases"]
    broken = {k: v["message"] for k, v in recorded.items()
              if v.get("stage") in ("timeout", "crash") or v.get("type") == "NoEngineConfig"}
    assert not broken


@pytest.mark.parametrize("version", harness.VERSIONS)
def test_shipped_facts_assume_the_install_the_judge_ran(version):
    """A release's shipped facts name the transformers of a release-day install; the judge's
    venv is such an install, and its recorded environment says which one it got."""
    from patchops.lint.facts.model import facts_for_version

    recorded = harness.load_verdicts(version)
    assumed = facts_for_version(version).transformers
    assert assumed.version == recorded["environment"]["transformers"]
    assert recorded["exclude_newer"].startswith(assumed.resolved_on)


@pytest.mark.vllm  # lints the whole corpus: the judge, not the fast loop
@pytest.mark.parametrize("version", harness.VERSIONS)
def test_lint_matches_the_baseline(results, version):
    changes = compare.baseline_changes({version: results[version]}, compare.load_baseline())
    assert not changes, "\n".join(changes)


@pytest.mark.vllm
def test_table_counts_every_compared_case(results):
    text = compare.table(results, len(CASES))
    for version, rows in results.items():
        line = next(l for l in text.splitlines() if l.startswith(f"| {version} "))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(rows) == len(harness.cases_for(version, CASES))
        if version in harness.SUBSET_VERSIONS:
            assert cells[1] == f"{len(rows)} of {len(CASES)} recorded"
        else:
            assert cells[1] == str(len(rows)) == str(len(CASES))
        assert sum(int(c) for c in cells[3:]) == len(rows)


def test_subset_is_every_written_case_and_rule_example_and_each_fifth_draw(monkeypatch):
    assert harness.SAMPLE_EVERY == 5 and set(harness.SUBSET_VERSIONS) <= set(harness.VERSIONS)
    monkeypatch.setattr(harness, "SUBSET_VERSIONS", ("9.9.9",))
    assert harness.in_subset(Case(id="gen/005")) and not harness.in_subset(Case(id="gen/004"))
    assert harness.in_subset(Case(id="gen/serve-010"))
    assert not harness.in_subset(Case(id="gen/serve-011"))
    assert harness.in_subset(Case(id="rule/PO101-unknown-flag/valid-3"))
    assert harness.in_subset(Case(id="shape/heads-tp3"))
    subset = harness.cases_for("9.9.9", CASES)
    drawn = [c for c in CASES if c.id.startswith("gen/")]
    assert len(CASES) - len(subset) == len(drawn) - len([c for c in subset if c.id.startswith("gen/")])
    for family in ("gen/0", "gen/serve-", "gen/deploy-", "gen/pooling-", "gen/frontend-"):
        assert any(c.id.startswith(family) for c in subset), family
    assert harness.cases_for("0.8.5", CASES) == CASES


# --------------------------------------------------------------------------- classification

class _Diag:
    def __init__(self, code, severity="error"):
        self.code, self.name, self.severity, self.message = code, "rule", severity, "m"


OK = {"verdict": "ok", "resolved": {}}
HEADS = {"verdict": "error", "stage": "engine-config", "type": "ValueError",
         "message": "Total number of attention heads (28) must be divisible by tensor parallel size (3)."}
BUDGET = {"verdict": "error", "stage": "engine-config", "type": "ValueError",
          "message": "max_num_batched_tokens (128) must be greater than or equal to max_num_seqs (256)."}
CASE = Case(id="t/1")
STAGES = {"PO202": "config", "PO303": "later", "PO101": "config"}


def outcome(verdict, found, case=CASE, causes=None):
    return compare.classify(case, "0.8.5", verdict, found, causes=causes, stages=STAGES).outcome


def test_both_fine_agree():
    assert outcome(OK, []) == "agree"
    assert outcome(OK, [_Diag("PO202", "warning")]) == "agree"


def test_error_where_vllm_is_fine_is_a_false_error():
    assert outcome(OK, [_Diag("PO202")]) == "false-error"
    assert outcome(OK, [_Diag("PO303"), _Diag("PO202")]) == "false-error"


def test_later_stage_rule_is_not_a_false_error():
    assert outcome(OK, [_Diag("PO303")]) == "agree"


def test_vllm_refusal_without_patchops_error_is_a_miss():
    assert outcome(BUDGET, []) == "miss"
    assert outcome(BUDGET, [_Diag("PO202", "warning")]) == "miss"


def test_a_later_stage_error_on_a_config_time_refusal_is_a_miss_not_a_wrong_cause():
    assert outcome(BUDGET, [_Diag("PO303")]) == "miss"
    assert outcome(BUDGET, [_Diag("PO303"), _Diag("PO101")]) == "wrong-cause"


def test_cause_decides_between_agree_and_wrong_cause():
    assert outcome(BUDGET, [_Diag("PO202")]) == "agree"
    assert outcome(BUDGET, [_Diag("PO101"), _Diag("PO202")]) == "agree"
    assert outcome(BUDGET, [_Diag("PO101")]) == "wrong-cause"


def test_unknown_cause_is_unmapped_and_case_cause_overrides():
    assert outcome(HEADS, [_Diag("PO101")], causes=[]) == "unmapped"
    named = Case(id="t/2", cause=("PO101",))
    assert outcome(HEADS, [_Diag("PO101")], named, causes=[]) == "agree"
    assert outcome(HEADS, [_Diag("PO202")], named, causes=[]) == "wrong-cause"


def test_unreadable_input_counts_as_an_error():
    from patchops.core.errors import LintInputError

    assert outcome(OK, LintInputError("bad")) == "false-error"
    assert outcome(HEADS, LintInputError("bad"), causes=[]) == "unmapped"
    two = dict(HEADS, message="More than one config file specified!")
    assert outcome(two, LintInputError("bad")) == "agree"


def test_baseline_flags_regressions_and_improvements():
    row = compare.classify(CASE, "0.8.5", BUDGET, [], stages=STAGES)
    assert compare.baseline_changes({"0.8.5": [row]}, {"0.8.5": {"miss": ["t/1"]}}) == []
    assert "miss (was agree)" in compare.baseline_changes({"0.8.5": [row]}, {})[0]
    fixed = compare.classify(CASE, "0.8.5", BUDGET, [_Diag("PO202")], stages=STAGES)
    assert "now agrees" in compare.baseline_changes({"0.8.5": [fixed]},
                                                    {"0.8.5": {"miss": ["t/1"]}})[0]


def _lint_085(text):
    from patchops.lint.rule import Example
    from patchops.lint.runner import lint_example

    return lint_example(Example(text, vllm="0.8.5"))


CHANCE = {"verdict": "error", "stage": "parse", "type": "ArgumentError",
          "message": "argument --guided-decoding-backend: invalid choice: 'outlines' (choose from 'auto', "
                     "'guidance', 'xgrammar')"}


def test_a_choice_some_launches_refuse_is_judged_by_the_launch_recorded():
    found = _lint_085("model: m\nargs:\n  guided-decoding-backend: outlines\n")
    assert [d.code for d in found if d.severity == "error"] == ["PO107"]
    assert outcome(CHANCE, found) == "agree"       # this launch took the V1 Literal
    assert outcome(OK, found) == "agree"           # this one the V0 Literal: the value is fine
    assert outcome(BUDGET, found) == "miss"        # refused for another reason patchops missed


def test_a_choice_every_launch_refuses_stays_an_error():
    found = _lint_085("model: m\nargs:\n  guided-decoding-backend: bogus\n")
    assert outcome(OK, found) == "false-error"
    bogus = dict(CHANCE, message=CHANCE["message"].replace("'outlines'", "'bogus'"))
    assert outcome(bogus, found) == "agree"


def test_known_check_without_a_rule_makes_any_error_a_wrong_cause():
    causes = [(re.compile("attention heads"), ())]
    row = compare.classify(CASE, "0.8.5", HEADS, [_Diag("PO101")], causes=causes, stages=STAGES)
    assert row.outcome == "wrong-cause"
    row = compare.classify(CASE, "0.8.5", HEADS, [], causes=causes, stages=STAGES)
    assert row.outcome == "miss"


def test_causes_name_existing_rules_and_compile():
    from patchops.lint.rules import ALL_RULES

    codes = {rule.code for rule in ALL_RULES} | {compare.INPUT_ERROR}
    for pattern, named in compare.load_causes():
        assert set(named) <= codes, pattern.pattern
    assert compare.expected_causes(CASE, {"message": "unrecognized arguments: --num-scheduler-steps 8"}) == ("PO301",)
    assert compare.expected_causes(CASE, {"message": "unrecognized arguments: --foo"}) == ("PO101",)


def test_rule_stage_is_declared_and_known():
    from patchops.lint.rules import ALL_RULES

    for version in harness.VERSIONS:
        assert set(compare.rule_stages(version).values()) <= {"config", "later"}
    assert compare.rule_stages("0.8.5")["PO303"] == "later"
    assert {rule.stage_in("0.8.5") for rule in ALL_RULES} == {"config", "later"}


# --------------------------------------------------------------------------- the corpus

def test_corpus_covers_every_check_class():
    prefixes = Counter(case.id.split("/")[0] for case in CASES)
    for wanted in ("shape", "values", "parsers", "spec", "compile", "argparse", "dup", "world",
                   "ref1", "ref2", "ref3", "ref4", "ref5", "ref6", "seed", "rule", "gen"):
        assert prefixes[wanted] > 0, wanted
    assert len(CASES) >= 300


def test_every_rule_example_that_real_vllm_can_replay_is_a_case():
    from patchops.lint.rules import ALL_RULES

    ids = {case.id for case in CASES}
    skipped = dict(borrowed.skipped())
    for rule in ALL_RULES:
        for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID)):
            for index in range(1, len(examples) + 1):
                case_id = f"rule/{rule.code}-{rule.name}/{kind}-{index}"
                assert (case_id in ids) != (case_id in skipped), case_id


def test_spec_example_keeps_its_yaml_text():
    from patchops.lint.rule import Example

    class Rule:
        code, name = "PO999", "x"

    text = ("model: /models/Qwen2.5-32B-Instruct\nhardware: {gpus: 4, compute_capability: 7.5}\n"
            "env: {VLLM_USE_V1: 0}\nargs:\n  max-model-len: 4096  # c\n  enforce-eager: yes\n"
            "  max-model-len: 8192\n")
    case = borrowed.convert(Rule, "invalid", 1, Example(text))
    assert case.config == "max-model-len: 4096  # c\nenforce-eager: yes\nmax-model-len: 8192\n"
    assert (case.model, case.gpu, case.gpus, case.env) == ("Qwen2.5-32B-Instruct", "t4", 4,
                                                           (("VLLM_USE_V1", "0"),))
    with pytest.raises(borrowed.Skip):
        borrowed.convert(Rule, "valid", 1, Example("args: {}\n", facts={"has_flash_attn": False}))


def test_command_example_becomes_argv_and_env():
    from patchops.lint.rule import Example

    class Rule:
        code, name = "PO999", "x"

    case = borrowed.convert(Rule, "valid", 2, Example(
        "VLLM_ATTENTION_BACKEND=XFORMERS vllm serve /m/Llama-2-7b-hf -tp 2 --enforce-eager\n",
        kind="command"))
    assert case.model == "Llama-2-7b-hf" and case.args == ("-tp", "2", "--enforce-eager")
    assert case.argv()[2:] == ["-tp", "2", "--enforce-eager"]
    assert case.env == (("VLLM_ATTENTION_BACKEND", "XFORMERS"),)


def test_command_example_naming_the_served_model_as_draft_uses_the_same_folder():
    from patchops.lint.rule import Example

    class Rule:
        code, name = "PO999", "x"

    draft = borrowed.convert(Rule, "invalid", 1, Example(
        "vllm serve m --speculative-config '{\"method\": \"medusa\", \"model\": \"m\"}'\n", kind="command"))
    assert json.loads(draft.args[1]) == {"method": "medusa", "model": "{model}"}
    assert json.loads(draft.argv()[-1])["model"] == draft.model_path()
    other = borrowed.convert(Rule, "invalid", 2, Example(
        "vllm serve m --speculative-config '{\"method\": \"medusa\", \"model\": \"org/head\"}'\n",
        kind="command"))
    assert json.loads(other.args[1])["model"] == "org/head"


def test_example_paths_into_the_corpus_are_named_absolutely():
    """vLLM runs in the case's folder, not the repository root the example was written from."""
    from patchops.lint.rule import Example

    class Rule:
        code, name = "PO999", "x"

    tok = "tests/conformance/corpus/models/Qwen2.5-7B-Instruct"
    cli = borrowed.convert(Rule, "valid", 1, Example(f"vllm serve m --tokenizer {tok}\n", kind="command"))
    assert cli.args == ("--tokenizer", "{models}/Qwen2.5-7B-Instruct")
    assert cli.argv()[-1] == str(cli.model_path())
    spec = borrowed.convert(Rule, "valid", 2, Example(f"model: m\nargs:\n  tokenizer: {tok}\n"))
    assert spec.config_text() == f"tokenizer: {cli.model_path()}\n"


def test_lint_is_told_the_harness_runs_vllm_offline(tmp_path):
    case = Case(id="t/offline", config="tokenizer: org/never-downloaded\n")
    found = compare.lint_case(case, "0.33.0", tmp_path)
    assert [d.code for d in found if d.severity == "error"] == ["PO908"]
    online = Case(id="t/online", config="tokenizer: org/never-downloaded\n", env=(("HF_HUB_OFFLINE", "0"),))
    assert not [d for d in compare.lint_case(online, "0.33.0", tmp_path) if d.code == "PO908"]


def test_record_runs_the_versions_asked_else_the_default_two_or_all():
    assert harness.versions_to_record(["0.32.0"], every=True) == ("0.32.0",)
    assert harness.versions_to_record(None) == harness.DEFAULT_VERSIONS == ("0.8.5", "0.33.0")
    assert harness.versions_to_record(None, every=True) == harness.VERSIONS
    assert "0.32.0" in harness.VERSIONS


def test_generated_cases_are_seeded():
    first, again = generate.cases(), generate.cases()
    total = (generate.COUNT + generate.SERVE_COUNT + generate.USER_COUNT + generate.PLAUSIBLE_COUNT
             + generate.TAIL_COUNT + generate.SPELLING_COUNT + generate.DEPLOY_COUNT
             + generate.HARDWARE_COUNT)
    assert first == again and len(first) == total
    assert len({c.id for c in first}) == total
    assert len({(c.config, c.args) for c in first}) > total // 2


def test_pooling_and_frontend_draws_are_seeded_and_apart_from_the_first_eight():
    first, again = generate_more.cases(), generate_more.cases()
    total = generate_more.POOLING_COUNT + generate_more.FRONTEND_COUNT
    assert first == again and len({c.id for c in first}) == len(first) == total
    assert {c.id.split("-")[0] for c in first} == {"gen/pooling", "gen/frontend"}
    assert not {c.id for c in first} & {c.id for c in generate.cases()}
    assert len({(c.config, c.args) for c in first}) > total // 2


def test_case_key_follows_what_vllm_sees():
    case = Case(id="k", config="max-model-len: 4096\n")
    same = Case(id="k", config="max-model-len: 4096\n", about="other words", cause=("PO101",))
    assert case.key() == same.key()
    assert case.key() != Case(id="k", config="max-model-len: 4097\n").key()
    assert case.key() != Case(id="k", config="max-model-len: 4096\n", gpus=4).key()
    assert case.key() != Case(id="k", config="max-model-len: 4096\n", model="Llama-2-7b-hf").key()


def test_case_files_refuse_unknown_keys():
    with pytest.raises(ValueError, match="unknown keys"):
        case_from_mapping({"id": "x", "confg": "a: 1\n"}, "f.yaml")


def test_messages_are_stored_without_paths_or_pydantic_dumps(tmp_path):
    case = Case(id="m")
    raw = ("1 validation error for VllmConfig\n  Value error, Total number of attention heads "
           "(28) must be divisible by tensor parallel size (3). [type=value_error, "
           "input_value=ArgsKwargs((), {'model': '" + case.model_path() + "'}), input_type=ArgsKwargs]\n"
           "    For further information visit https://errors.pydantic.dev/2.11/v/value_error")
    assert harness.normalize(raw, case, tmp_path) == (
        "Total number of attention heads (28) must be divisible by tensor parallel size (3).")
    path_msg = f"Invalid repository ID or local directory specified: '{case.model_path()}'"
    assert harness.normalize(path_msg, case, tmp_path).endswith("'{model}'")


def test_recorded_files_name_their_release():
    for version in harness.VERSIONS:
        data = json.loads(harness.verdict_path(version).read_text())
        assert data["vllm"] == version and re.match(r"\d{4}-\d\d-\d\dT", data["exclude_newer"])


def test_the_script_runs_from_a_plain_interpreter():
    """scripts/conformance.py finds the suite and devtools/ itself, outside pytest's path."""
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "scripts" / "conformance.py"
    done = subprocess.run([sys.executable, str(script), "--help"],
                          capture_output=True, text=True, cwd="/", env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "record" in done.stdout and "baseline" in done.stdout
