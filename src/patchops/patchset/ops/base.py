"""The op protocol: parameters and their checks, site states, outcomes, the Op base class.

Importing this module must not import libcst. Loading a patchset builds op objects, and the
status path loads patchsets without rewriting anything; libcst takes ~0.4 s to import. The
tree helpers ops share live in patchset/ops/tree.py and patchset/ops/positions.py, which import it lazily too.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import keyword
import re
import textwrap
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Dict, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from patchops.lint.vllm.releases import parse_version
from patchops.patchset.ops.positions import site_positions

if TYPE_CHECKING:
    import libcst


def version_in(version: Optional[str], versions: SpecifierSet) -> bool:
    """Say whether vLLM `version` is in `versions`; None or an unreadable version counts as in.

    Pre-, post- and local releases count ("0.6.3.post1" and "0.8.5+corex.4.2" are in
    ">=0.6.3"): an op on a version patchops cannot place is left to its site states.
    """
    parsed = parse_version(version)
    return parsed is None or versions.contains(parsed, prereleases=True)


class SiteState(str, Enum):
    """Say what a site holds: the known bad value, the wanted one, or something else."""

    PRISTINE = "pristine"
    SATISFIED = "satisfied"
    DRIFT = "drift"


@dataclass(frozen=True)
class Site:
    """One place an op matched; line and column are 1-based, like editors and SARIF."""

    line: int
    column: int
    state: SiteState
    found: str  # source text of the current value or node; "" when the site is an absence


@dataclass(frozen=True)
class OpOutcome:
    """What an op did to a module: the new module, its sites, and why it refused, if it did."""

    module: "libcst.Module"  # the input module itself unless some site was rewritten
    sites: Tuple[Site, ...]
    # e.g. "set-keyword ModelConfig(enforce_eager=...) matched 0 sites, expected 1"
    error: Optional[str] = None

    @property
    def states(self) -> Tuple[SiteState, ...]:
        """Return the state of each site, in file order."""
        return tuple(site.state for site in self.sites)


_SITES_RE = re.compile(r"^\s*(>=|<=|==|>|<)?\s*(\d+)\s*$")


@dataclass(frozen=True)
class SiteCount:
    """How many sites an op must match: `1`, `">=1"`, `"<=2"`, ..."""

    low: int
    high: Optional[int]  # None: no upper bound

    @classmethod
    def parse(cls, value: Any) -> "SiteCount":
        """Read an int or a string like ">=1"; raise ValueError otherwise."""
        if isinstance(value, SiteCount):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise ValueError(f"site count {value} is negative")
            return cls(value, value)
        if isinstance(value, str):
            match = _SITES_RE.match(value)
            if match:
                op, n = match.group(1) or "==", int(match.group(2))
                low, high = {"==": (n, n), ">=": (n, None), ">": (n + 1, None),
                             "<=": (0, n), "<": (0, n - 1)}[op]
                if high is None or high >= low:
                    return cls(low, high)
        raise ValueError(f"site count {value!r} is not a number or a bound like \">=1\" or \"<=2\"")

    def __contains__(self, count: object) -> bool:
        return isinstance(count, int) and count >= self.low and (self.high is None or count <= self.high)

    def __str__(self) -> str:
        if self.high == self.low:
            return str(self.low)
        if self.high is None:
            return f">={self.low}"
        if self.low == 0:
            return f"<={self.high}"
        return f"{self.low} to {self.high}"


# --- parameter kinds -----------------------------------------------------------------------
# Each op parameter is a dataclass field whose metadata names a kind. The patchset loader turns
# the YAML node into a plain value and calls the kind's check, so a bad value is reported at its
# own line:col; ops built in Python run the same checks in __post_init__.

_DOTTED_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_CALLABLE_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _check_path(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a path relative to the vllm package, like engine/arg_utils.py")
    path = value.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if path.startswith("vllm/"):
        raise ValueError(f"{value!r} is relative to the vllm package already: write {path[5:]!r}")
    if path.startswith("/") or ".." in path.split("/") or not path.endswith(".py"):
        raise ValueError(f"{value!r} must be a .py file relative to the vllm package, "
                         "like engine/arg_utils.py")
    return path


def _check_sites(value: Any) -> SiteCount:
    return SiteCount.parse(value)


def _check_versions(value: Any) -> SpecifierSet:
    if isinstance(value, SpecifierSet):
        return value
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a version specifier; quote it, like \">=0.6.3\"")
    try:
        return SpecifierSet(value)
    except InvalidSpecifier:
        raise ValueError(f"{value!r} is not a PEP 440 version specifier, "
                         "like \">=0.6.3\" or \">=0.7.3,<0.11\"") from None


def _check_expr(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a Python expression, like self.enforce_eager")
    try:
        normalize_expr(value)
    except SyntaxError as exc:
        raise ValueError(f"{value!r} is not a Python expression ({exc.msg})") from None
    return value.strip()


def _check_exprs(value: Any) -> Tuple[str, ...]:
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise ValueError("must be a Python expression or a non-empty list of them")
    return tuple(_check_expr(item) for item in items)


def _check_code(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be Python statements")
    try:
        normalize_code(value)
    except SyntaxError as exc:
        raise ValueError(f"is not valid Python: line {exc.lineno}: {exc.msg}") from None
    return textwrap.dedent(value).strip("\n") + "\n"


def _check_dotted(value: Any) -> str:
    if not isinstance(value, str) or not _DOTTED_RE.match(value.strip()):
        raise ValueError(f"{value!r} is not a dotted name like EngineArgs or "
                         "EngineArgs.create_model_config")
    return value.strip()


def _check_identifier(value: Any) -> str:
    if not isinstance(value, str) or not value.strip().isidentifier() or keyword.iskeyword(value.strip()):
        raise ValueError(f"{value!r} is not a Python identifier")
    return value.strip()


def _check_label(value: Any) -> str:
    if not isinstance(value, str) or not _LABEL_RE.match(value.strip()):
        raise ValueError(f"{value!r} is not a label (letters, digits, '-', '_', '.')")
    return value.strip()


def _check_callable(value: Any) -> str:
    if not isinstance(value, str) or not _CALLABLE_RE.match(value.strip()):
        raise ValueError(f"{value!r} is not a callable path like package.module:ClassName")
    return value.strip()


def _check_mapping(value: Any) -> Tuple[Tuple[str, Any], ...]:
    if isinstance(value, tuple) and all(isinstance(i, tuple) and len(i) == 2 for i in value):
        value = dict(value)
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError("must be a mapping with string keys")
    return tuple(sorted(value.items()))  # a tuple keeps the op hashable


PARAM_KINDS: Dict[str, Callable[[Any], Any]] = {
    "path": _check_path,
    "sites": _check_sites,
    "versions": _check_versions,
    "expr": _check_expr,
    "exprs": _check_exprs,
    "code": _check_code,
    "dotted": _check_dotted,
    "identifier": _check_identifier,
    "label": _check_label,
    "callable": _check_callable,
    "mapping": _check_mapping,
}


def param(kind: str, doc: str, default: Any = dataclasses.MISSING) -> Any:
    """Declare an op parameter of `kind` (a key of PARAM_KINDS); no default means required."""
    assert kind in PARAM_KINDS, kind
    return dataclasses.field(default=default, metadata={"kind": kind, "doc": doc})


def file_param() -> Any:
    """Declare the `file:` every op has."""
    return param("path", "target file relative to the vllm package, e.g. engine/arg_utils.py")


def sites_param() -> Any:
    """Declare the `sites:` every op has."""
    return param("sites", "how many sites the op must match: 1, \">=1\", \"<=2\"")


def versions_param() -> Any:
    """Declare the optional op-level `vllm:` range every op has."""
    return param("versions", "vLLM versions this op runs on, within the patchset's range; "
                 "outside it the op is skipped (its file may not exist there)", SpecifierSet(""))


def check_param(kind: str, value: Any) -> Any:
    """Return `value` checked and normalized as `kind`; raise ValueError with the reason."""
    return PARAM_KINDS[kind](value)


@dataclass(frozen=True)
class OpExample:
    """A before/after pair an op carries; one test runs every op's examples."""

    params: Mapping[str, Any]  # op parameters as in YAML, without `op:`
    before: str
    after: str  # equal to `before` for a site that is already satisfied


class Op:
    """Base class of rewrite ops; each op is a frozen dataclass in its own module.

    Subclasses declare `file`, `sites`, their own parameters, then `vllm` (see file_param,
    sites_param, param, versions_param). The fields are repeated in every op rather than
    inherited because dataclasses (before Python 3.10's kw_only) put inherited fields first,
    and an inherited field with a default forbids required parameters after it.
    """

    name: ClassVar[str]
    EXAMPLES: ClassVar[Sequence[OpExample]] = ()

    file: str
    sites: SiteCount
    vllm: SpecifierSet

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            kind = f.metadata.get("kind")
            value = getattr(self, f.name)
            if kind is None or (f.default is not dataclasses.MISSING and value == f.default):
                continue
            try:
                object.__setattr__(self, f.name, check_param(kind, value))
            except ValueError as exc:
                raise ValueError(f"{self.name}: {f.name}: {exc}") from None
        self.check()

    @classmethod
    def param_fields(cls) -> Tuple[dataclasses.Field, ...]:
        """Return the YAML-visible parameters of this op, in declaration order."""
        return tuple(f for f in dataclasses.fields(cls) if "kind" in f.metadata)  # type: ignore[arg-type]

    def check(self) -> None:
        """Check parameters against each other; raise ValueError with the reason."""

    def applies_to(self, version: Optional[str]) -> bool:
        """Say whether the op runs on vLLM `version` (None: unknown, so yes)."""
        return version_in(version, self.vllm)

    def describe(self) -> str:
        """Name the op and its target in a few words, for messages."""
        return self.name

    def explain(self, site: Site) -> str:
        """Say what a drifted site holds and what was expected."""
        return f"found {one_line(site.found) or 'nothing'}"

    def rewrite(self, module: "libcst.Module") -> OpOutcome:
        """Rewrite every pristine site; report every site. Never raise for drift."""
        raise NotImplementedError

    def outcome(self, module: "libcst.Module", found: Sequence[Tuple["libcst.CSTNode", SiteState, str]],
                edit: Callable[[], "libcst.Module"]) -> OpOutcome:
        """Build the outcome from (node, state, found text); call `edit` only if rewriting is safe.

        Nothing is rewritten when the site count is off or any site drifted: the caller
        refuses the whole patchset then, and an untouched module is the honest answer.
        """
        where = site_positions(module, [node for node, _, _ in found])
        sites = tuple(sorted((Site(*where[id(node)], state, text) for node, state, text in found),
                             key=lambda s: (s.line, s.column)))
        error = None
        if len(sites) not in self.sites:
            error = f"{self.describe()} matched {len(sites)} sites, expected {self.sites}"
        states = {site.state for site in sites}
        if error or SiteState.DRIFT in states or SiteState.PRISTINE not in states:
            return OpOutcome(module, sites, error)
        try:
            return OpOutcome(edit(), sites, None)
        except Exception as exc:  # e.g. a value Python's ast accepts and libcst 1.0 does not
            return OpOutcome(module, sites, f"{self.describe()} could not rewrite: {exc}")


def classify_value(text: str, value: str, pristine: Sequence[str]) -> SiteState:
    """Return the state of a site holding `text`, given the wanted and the known-bad values."""
    try:
        current = normalize_expr(text)
    except SyntaxError:  # syntax the running Python cannot read: not ours to judge
        return SiteState.DRIFT
    if current == normalize_expr(value):
        return SiteState.SATISFIED
    if any(current == normalize_expr(p) for p in pristine):
        return SiteState.PRISTINE
    return SiteState.DRIFT


@functools.lru_cache(maxsize=512)
def normalize_expr(code: str) -> str:
    """Return a formatting- and comment-free form of an expression, for comparing values."""
    return ast.dump(ast.parse("(\n" + code.strip() + "\n)", mode="eval"))


@functools.lru_cache(maxsize=64)
def normalize_code(code: str) -> str:
    """Return a formatting- and comment-free form of statements, for comparing blocks."""
    return ast.dump(ast.parse(textwrap.dedent(code)))


def one_line(text: str, limit: int = 80) -> str:
    """Collapse whitespace so source text fits in a one-line message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
