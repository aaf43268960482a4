"""PO112 nested-config-invalid."""

from __future__ import annotations

import json
from typing import Iterator

from patchops.lint.facts.groups import NestedConfig
from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import config_checks, inputs, nested_fields, nested_values


class NestedConfigInvalid(Rule):
    """
    ## What it does
    Checks a JSON config flag (`--speculative-config`, `--compilation-config`) against the
    fields of the class vLLM builds from it, read from the copy: the value must be a JSON
    object; a key the class does not have is an error where the class refuses it (a plain
    dataclass in 0.8.5 `SpeculativeConfig`, `extra="forbid"` from 0.15) and a warning where it
    is silently dropped (pydantic's default, 0.9-0.12); where pydantic validates the class, a
    `Literal` field takes only its choices (`method`), a `Field(gt=0)` its range, and a field
    only values of its type as pydantic's lax mode reads them (`"1,2"` is no list), a field
    parsed as an enum by name only its members (`cudagraph_mode`, any case, 0.10.1+), a field
    typed by an enum only its member values (`mode`, 0.12+), and a field that is itself a config
    class is checked the same way (`pass_config`). Where vLLM builds the class while parsing
    the flag, the class's own post-init checks run on the value too, read from the copy
    as each release writes them (`custom_ops`: one base mode `all` or `none`; from 0.11 the
    `+op`/`-op` syntax; later also no op both enabled and disabled).

    ## Why is this bad?
    vLLM stops at parse or config time: `Extra inputs are not permitted` for `level` in
    0.20+'s compilation config (the field became `mode`), `SpeculativeConfig.__init__() got an
    unexpected keyword argument`, `Input should be 'ngram', 'eagle', ...`, `Input should be an
    object` for a bare `3`, `KeyError: 'BOGUS'` for an unknown `cudagraph_mode`,
    `pass_config.enable_sequence_parallelism: Unexpected keyword argument` for a field 0.33
    renamed, `mode: Input should be 0, 1, 2 or 3`, `Can only specify 'none' or 'all'`, `Invalid
    syntax 'rms_norm' for custom op`. Where the key is dropped, the setting silently does nothing.

    ## Fix
    Use the field names and values of the vLLM that will run (`vllm serve --help=<flag>`).
    """

    code = "PO112"
    name = "nested-config-invalid"
    severity = "error"
    versions = ">=0.8.5"
    needs = Needs(optional=("hardware.platform",))
    VALID = [
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"prompt_lookup_max\": 4}'\n", kind="command"),
        Example("vllm serve m --compilation-config '{\"level\": 3}'\n", kind="command", vllm="0.10.1.1"),
        Example("vllm serve m --compilation-config '{\"mode\": 3}'\n", kind="command", vllm="0.33.0"),
        Example("vllm serve m -O3\n", kind="command", vllm="0.8.5"),
        Example("vllm serve m --compilation-config '{\"cudagraph_mode\": \"full_decode_only\"}'\n",
                kind="command", vllm="0.33.0"),
        Example("vllm serve m --compilation-config '{\"pass_config\": {\"enable_sequence_parallelism\": true}}'\n",
                kind="command", vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("vllm serve m --compilation-config '{\"level\": 3}'\n", kind="command", vllm="0.33.0",
                at=(1, 14)),
        Example("vllm serve m --compilation-config 3\n", kind="command", vllm="0.10.1.1", at=(1, 14)),
        Example("vllm serve m --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
                "\"lookahead\": 4}'\n", kind="command", vllm="0.8.5", at=(1, 14)),
        Example("vllm serve m --speculative-config '{\"method\": \"ngrams\", \"num_speculative_tokens\": 3}'\n",
                kind="command", vllm="0.10.1.1", at=(1, 14)),
        # Dropped without a word by 0.10.1.1's pydantic dataclass: a warning.
        Example("vllm serve m --compilation-config '{\"levle\": 3}'\n", kind="command", vllm="0.10.1.1",
                at=(1, 14), severity="warning"),
        Example("vllm serve m --compilation-config '{\"cudagraph_mode\": \"FULLY\"}'\n",
                kind="command", vllm="0.10.1.1", at=(1, 14)),
        Example("vllm serve m --compilation-config '{\"pass_config\": {\"enable_sequence_parallelism\": true}}'\n",
                kind="command", vllm="0.33.0", at=(1, 14)),
        # CompilationConfig's own post-init (read from the copy) and its `mode: CompilationMode`.
        Example("vllm serve m --compilation-config '{\"custom_ops\": [\"all\", \"none\"]}'\n",
                kind="command", vllm="0.10.1.1", at=(1, 14)),
        Example("vllm serve m --compilation-config '{\"mode\": 9}'\n", kind="command", vllm="0.33.0",
                at=(1, 14)),
    ]

    def named_by_config_checks(self, cfg: ReadConfig, facts: Facts, config_class: str, message: str) -> bool:
        """Return whether PO113 (config-check-refuses) reports the same refusal of the same class."""
        return any(r.config_class == config_class and r.message == message for r in config_checks.refusals(
            cfg, facts, lambda text: self.explained_by_enabled(text, facts)))

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for dest, spec in sorted(facts.nested_configs.items()):
            found = cfg.args.get(dest)
            if found is None or found.value is None or found.unknown or inputs.is_dropped(cfg, dest, found):
                continue
            value = found.value
            if not isinstance(value, dict):
                yield self.diagnostic(
                    cfg, found, f"{dest} must be a JSON object of {spec.class_name} fields, not "
                    f"{json.dumps(value)}", explanation=f"vLLM {facts.version} refuses it",
                    fields=(dest,), fix=f"write it as a JSON object, e.g. '{{\"{_example_key(spec)}\": ...}}'",
                    vllm_message="Input should be an object")
                continue
            problems = 0
            for key, item in value.items():
                problem = nested_fields.field_problem(spec, key, item)
                if problem is None:
                    continue
                problems += problem.severity != "warning"     # vLLM stops before its post-init
                refuses = None if problem.severity == "warning" else f"vLLM {facts.version} refuses it"
                yield self.diagnostic(
                    cfg, found, f"{dest} {problem.headline}",
                    explanation="; ".join(part for part in (problem.takes, refuses) if part) or None,
                    fields=(dest,), severity=problem.severity, vllm_message=problem.vllm_message,
                    fix=f"use the {spec.class_name} fields of vLLM {facts.version}: "
                        + ", ".join(sorted(spec.fields)[:12]) + (", ..." if len(spec.fields) > 12 else ""))
            refused = nested_values.refusal(spec, value) if not problems else None
            if refused is not None and not self.named_by_config_checks(cfg, facts, spec.class_name, refused[0]):
                message, exception, read = refused
                yield self.diagnostic(
                    cfg, found, f"{dest} {', '.join(read)}: vLLM {facts.version}'s {spec.class_name} refuses it",
                    explanation=f"{spec.class_name} refuses it when vLLM parses the flag: \"{message}\"",
                    fields=(dest,),
                    vllm_message=f"{exception}: {message}" if exception == "AssertionError" else message,
                    fix=f"change {', '.join(read)} so that {spec.class_name}'s own check passes")


def _example_key(spec: NestedConfig) -> str:
    for key in ("method", "mode", "level"):
        if key in spec.fields:
            return key
    return next(iter(spec.fields), "key")
