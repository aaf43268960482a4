"""What a lint rule is: a class carrying its code, docs, vLLM versions and its own examples."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Iterator, Optional, Sequence, Tuple, Type

from patchops.core import records
from patchops.lint.codes import Category, category_of
# The findings live apart from the rules, so cached results load them without the rule API.
from patchops.lint.diagnostic import APPLICABILITIES, Diagnostic, Edit, Fix, NotRun

if TYPE_CHECKING:
    from patchops.lint.reading.read_config import ReadConfig
    from patchops.lint.facts.model import Facts

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Example:
    """A rule example run as a test.

    `text` is a serve input: a serve spec by default; `kind="config"` for a plain vLLM
    `--config` YAML, `kind="command"` for a launch command. `vllm` is the vLLM version
    the example is linted against (shipped facts). `at` is the (line, column) of the
    expected finding for INVALID examples, `severity` its severity when not the rule's own.
    """

    text: str
    vllm: str = "0.8.5"
    kind: str = "spec"
    at: Optional[Tuple[int, int]] = None
    severity: Optional[str] = None
    facts: dict = field(default_factory=dict)  # overrides of Facts fields, e.g. {"has_flash_attn": False}
    model: Optional[dict] = None  # the model's config.json, for rules that read it (model_facts.py)
    fixed: Optional[str] = None


@dataclass(frozen=True)
class Needs:
    """The inputs a rule reads; the runner calls check() only when the required ones are there.

    `model`: the model's config.json (`cfg.model_facts`); `hardware` and `workload`: the
    `hardware.*` / `workload.*` fields it cannot judge without ("memory_gib"); `optional`:
    what it reads when there and judges without ("model", "hardware.compute_capability").
    A rule reads nothing else of these (tests/lint/test_rule_needs.py checks it).
    """

    model: bool = False
    hardware: Tuple[str, ...] = ()
    workload: Tuple[str, ...] = ()
    optional: Tuple[str, ...] = ()

    @property
    def required(self) -> Tuple[str, ...]:
        """Return the required inputs as "model", "hardware.x", "workload.y"."""
        return (("model",) if self.model else ()) + tuple(f"hardware.{k}" for k in self.hardware) + \
            tuple(f"workload.{k}" for k in self.workload)


def with_vllm_message(diagnostic: Diagnostic, text: Optional[str]) -> Diagnostic:
    """Return `diagnostic` carrying exactly `text` (None: vLLM prints nothing), not the rule's default."""
    return records.replace(diagnostic, vllm_message=text)


class Rule:
    """Base class: subclasses set the class attributes and implement check()."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str] = "error"
    # Severity when the facts cannot tell (shipped facts, nothing inspected), if it differs.
    unsure_severity: ClassVar[Optional[str]] = None
    versions: ClassVar[str] = ""          # PEP 440 specifier of vLLM versions where the rule holds
    vllm_message: ClassVar[Optional[str]] = None  # the exact vLLM text it prevents, if any
    # When vLLM fails: "config" while it builds its configuration (argument parsing, serve
    # validation, create_engine_config: what the conformance harness asks real vLLM), or
    # "later" (worker start-up, KV-cache sizing, graph capture, a request).
    stage: ClassVar[str] = "config"
    needs: ClassVar[Needs] = Needs()      # the inputs it reads (not run, and said so, without them)
    # The applicability of the fix some findings carry ("safe" / "unsafe"), None for none.
    fixable: ClassVar[Optional[str]] = None
    VALID: ClassVar[Sequence[Example]] = ()
    INVALID: ClassVar[Sequence[Example]] = ()
    # Fragments of the messages of vLLM's config checks this rule words better, with more
    # context, than quoting the check (lint/vllm/messages.py): config-check-refuses leaves
    # those checks to it while it is enabled.
    explains: ClassVar[Tuple[str, ...]] = ()

    def __init__(self, enabled: Sequence[Type["Rule"]] = ()):
        # The rules this run enabled (select/ignore; ruff's `checker.enabled`), whatever their
        # versions and needs: a rule that quotes vLLM's checks asks them what they explain.
        self.enabled = tuple(enabled)

    @classmethod
    def explains_check(cls, text: str, facts: "Facts") -> bool:
        """Return whether this rule words the vLLM check whose message's text (its values left
        out) is `text`; a rule whose checks come from the facts extends it."""
        return any(fragment in text for fragment in cls.explains)

    def explained_by_enabled(self, text: str, facts: "Facts") -> bool:
        """Return whether an enabled rule words the vLLM check whose message's text is `text`."""
        return any(rule.explains_check(text, facts) for rule in self.enabled)

    def check(self, cfg: "ReadConfig", facts: "Facts") -> Iterator[Diagnostic]:
        raise NotImplementedError

    def concerns(self, cfg: "ReadConfig") -> bool:
        """Say whether the known model (`cfg.model_facts`) has what the rule judges.

        The runner asks only once the model config is there: a rule for MLA, sink or hybrid
        models is then neither run nor listed as not run for another model, so a launch that
        states no GPU is not told that checks irrelevant to its model were skipped.
        """
        return True

    @classmethod
    def applies_to(cls, version: str) -> bool:
        """Return whether `version` is inside the rule's vLLM range (pre-releases included)."""
        from patchops.lint.vllm.releases import in_range  # packaging: not for a cached result

        return in_range(version, cls.versions)

    @classmethod
    def category(cls) -> Category:
        """Return the rule's area, read off its code in lint/codes.py's CATEGORIES."""
        return category_of(cls.code)

    @classmethod
    def stage_in(cls, version: str) -> str:
        """Return `stage` on vLLM `version`; a rule whose failure moved between stages overrides it."""
        return cls.stage

    @classmethod
    def summary(cls) -> str:
        """Return the first sentence of the "## What it does" section."""
        doc = cls.docs()
        body = doc.split("## What it does", 1)[-1].split("\n## ", 1)[0].strip()
        paragraph = " ".join(body.split("\n\n", 1)[0].split())
        sentence = re.split(r"(?<=\.)\s", paragraph, maxsplit=1)[0]
        return sentence.rstrip(":") or cls.name

    @classmethod
    def docs(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()

    def diagnostic(self, cfg: "ReadConfig", at, message: str, *, explanation: Optional[str] = None,
                   fields: Sequence[str] = (),
                   fix: Optional[str] = None, severity: Optional[str] = None,
                   vllm_message: Optional[str] = None,
                   edits: Sequence[Optional[Edit]] = (), edit_title: str = "") -> Diagnostic:
        """Build a Diagnostic for this rule positioned at `at` (a Setting, a (line, col) or None).

        `message` is the headline (one line, the values in it); `explanation` the why under it.

        A Setting written in another file (a command's `--config FILE`) puts the finding
        there. `edits` (from lint/edits.py) become its autofix, of the rule's `fixable` kind;
        when one of them is None (the text cannot be edited exactly there) there is no autofix.
        An edit names its file (Edit.file) only when that is not the finding's.
        """
        line, column = cfg.position_of(at)
        source = cfg.source_of(at)
        autofix = None
        if edits and all(e is not None for e in edits):
            if self.fixable not in APPLICABILITIES:
                raise TypeError(f"{self.code} returns edits but declares no `fixable`")
            placed = tuple(records.replace(e, file=None if (e.file or cfg.path) == source.path
                                           else e.file or cfg.path) for e in edits)  # type: ignore[union-attr]
            autofix = Fix(self.fixable, placed, edit_title or fix or "")
        return Diagnostic(file=source.path, line=line, column=column, code=self.code, name=self.name,
                          severity=severity or self.severity, message=message,
                          explanation=explanation,
                          fields=tuple(fields), fix=fix,
                          vllm_message=vllm_message if vllm_message is not None else self.vllm_message,
                          autofix=autofix)
