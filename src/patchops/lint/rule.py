"""What a lint rule is: a class carrying its code, docs, vLLM versions and its own examples."""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Iterator, Optional, Sequence, Tuple

from patchops.lint.vllm.releases import in_range

if TYPE_CHECKING:
    from patchops.lint.config import ServeConfig
    from patchops.lint.facts import Facts

SEVERITIES = ("error", "warning", "info")
# How sure a fix is, as ruff names it: "safe" keeps what the user meant and `lint --fix`
# applies it; "unsafe" changes what vLLM does and needs `--unsafe-fixes`.
APPLICABILITIES = ("safe", "unsafe")


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] of the linted input with `content` (offsets into ServeConfig.text).

    `start_at` and `end_at` are the same places as 1-based (line, column), for JSON and SARIF.
    """

    start: int
    end: int
    content: str
    start_at: Tuple[int, int]
    end_at: Tuple[int, int]


@dataclass(frozen=True)
class Fix:
    """The edits that resolve one finding, applied together or not at all."""

    applicability: str
    edits: Tuple[Edit, ...]
    title: str                         # what it does, e.g. "write `true`"


@dataclass(frozen=True)
class Diagnostic:
    """One finding, positioned at the setting that causes it."""

    file: str
    line: int
    column: int
    code: str
    name: str
    severity: str
    message: str
    fields: Tuple[str, ...] = ()
    fix: Optional[str] = None          # the suggestion, in words
    vllm_message: Optional[str] = None
    autofix: Optional[Fix] = None      # the edits `lint --fix` makes, when they are exact

    def named_by(self, selector: str) -> bool:
        """Return whether `selector` (a code, prefix or rule name, as in ignore[...]) names this rule."""
        from patchops.lint.selectors import matches

        return matches(selector, self.code, self.name)


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


def with_vllm_message(diagnostic: Diagnostic, text: Optional[str]) -> Diagnostic:
    """Return `diagnostic` carrying exactly `text` (None: vLLM prints nothing), not the rule's default."""
    return dataclasses.replace(diagnostic, vllm_message=text)


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
    reads_model: ClassVar[bool] = False   # needs the model's config.json (skipped, and said so, without it)
    reads_hardware: ClassVar[Tuple[str, ...]] = ()  # `hardware.*` fields it needs (skipped, and said so, without them)
    # The applicability of the fix some findings carry ("safe" / "unsafe"), None for none.
    fixable: ClassVar[Optional[str]] = None
    VALID: ClassVar[Sequence[Example]] = ()
    INVALID: ClassVar[Sequence[Example]] = ()

    def check(self, cfg: "ServeConfig", facts: "Facts") -> Iterator[Diagnostic]:
        raise NotImplementedError

    @classmethod
    def applies_to(cls, version: str) -> bool:
        """Return whether `version` is inside the rule's vLLM range (pre-releases included)."""
        return in_range(version, cls.versions)

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

    def diagnostic(self, cfg: "ServeConfig", at, message: str, *, fields: Sequence[str] = (),
                   fix: Optional[str] = None, severity: Optional[str] = None,
                   vllm_message: Optional[str] = None,
                   edits: Sequence[Optional[Edit]] = (), edit_title: str = "") -> Diagnostic:
        """Build a Diagnostic for this rule positioned at `at` (a Setting, a (line, col) or None).

        `edits` (from lint/edits.py) become its autofix, of the rule's `fixable` kind; when
        one of them is None (the text cannot be edited exactly there) there is no autofix.
        """
        line, column = cfg.position_of(at)
        autofix = None
        if edits and all(e is not None for e in edits):
            if self.fixable not in APPLICABILITIES:
                raise TypeError(f"{self.code} returns edits but declares no `fixable`")
            autofix = Fix(self.fixable, tuple(edits), edit_title or fix or "")  # type: ignore[arg-type]
        return Diagnostic(file=cfg.path, line=line, column=column, code=self.code, name=self.name,
                          severity=severity or self.severity, message=message,
                          fields=tuple(fields), fix=fix,
                          vllm_message=vllm_message if vllm_message is not None else self.vllm_message,
                          autofix=autofix)
