"""The op protocol: parameters, site states and outcomes, plus the tree helpers ops share.

Importing this module must not import libcst. Loading a patchset builds op objects, and the
status path loads patchsets without rewriting anything; libcst takes ~0.4 s to import. The
helpers below import it inside the function body instead.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import keyword
import re
import textwrap
from dataclasses import dataclass
from enum import Enum
from typing import (TYPE_CHECKING, Any, Callable, ClassVar, Dict, Iterable, Iterator, List, Mapping,
                    Optional, Sequence, Tuple)

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from patchops.versions import parse_version

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
        where = (positions(module, [node for node, _, _ in found]) if _POSITIONS_ON[0]
                 else {id(node): (0, 0) for node, _, _ in found})
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


# --- helpers over libcst trees -------------------------------------------------------------


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


def parse_expr(code: str) -> "libcst.BaseExpression":
    """Parse an op's expression parameter with libcst."""
    import libcst as cst

    return cst.parse_expression(code.strip())


_POSITIONS_ON = [True]


@contextlib.contextmanager
def positions_off() -> Iterator[None]:
    """Report (0, 0) for every site while inside: for runs whose sites are thrown away.

    rewrite.py chains a patchset's ops to build the new module after a first run has
    reported the sites; positions cost most of an op on a large file.
    """
    _POSITIONS_ON[0] = False
    try:
        yield
    finally:
        _POSITIONS_ON[0] = True


def positions(module: "libcst.Module", nodes: Iterable["libcst.CSTNode"]) -> Dict[int, Tuple[int, int]]:
    """Return id(node) -> (line, 1-based column) for `nodes` of `module`, as PositionProvider has them.

    Resolving PositionProvider for a whole module takes ~0.9 s on 0.33.0's 3,300-line
    arg_utils.py and ~1.5 s on its 7,000-line gpu_model_runner.py, and an op needs a handful
    of positions. So this runs libcst's code generator once, tracks line and column, records
    only the wanted nodes and stops after the last one (~0.1 s). It relies on libcst's
    CodegenState hooks, which PositionProvider itself is built on; if they ever move, it
    falls back to PositionProvider. tests/ops/test_base.py compares the two on real files.
    """
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    try:
        state = _position_state(module, wanted)
    except ImportError:  # pragma: no cover - a libcst without the hooks
        return _provider_positions(module, wanted)
    try:
        module._codegen(state)
    except _AllFound:
        pass
    missing = wanted - state.found.keys()
    if missing:  # pragma: no cover - nodes not in `module`, or hooks that changed meaning
        return _provider_positions(module, wanted)
    return {key: (line, column + 1) for key, (line, column) in state.found.items() if key in wanted}


def _provider_positions(module: "libcst.Module", wanted: set) -> Dict[int, Tuple[int, int]]:
    from libcst.metadata import MetadataWrapper, PositionProvider

    # unsafe_skip_copy: the copy would give nodes new identities; a parsed or op-built module
    # never holds one node twice, which is what the copy guards against.
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(node): (r.start.line, r.start.column + 1)
            for node, r in ranges.items() if id(node) in wanted}


class _AllFound(Exception):
    """Stop code generation once every wanted position is known."""


class _NoRecord:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


_NO_RECORD = _NoRecord()


def _position_state(module: "libcst.Module", wanted: set) -> Any:
    """Build a code-generation state that records the start of the `wanted` nodes."""
    from libcst._nodes.internal import CodegenState

    class PositionState(CodegenState):
        # Mirrors libcst.metadata.position_provider.PositionProvidingCodegenState: a node's
        # start is its syntactic start if it records one, else where its code begins.
        def __init__(self) -> None:
            super().__init__(default_indent=module.default_indent,
                             default_newline=module.default_newline)
            self.line = 1
            self.column = 0
            self.targets = set(wanted)
            self.pending = set(wanted)
            self.found: Dict[int, Tuple[int, int]] = {}

        def add_indent_tokens(self) -> None:
            for token in self.indent_tokens:
                self.add_token(token)

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            if "\r" in value:
                value = value.replace("\r\n", "\n").replace("\r", "\n")
            newlines = value.count("\n")
            if newlines:
                self.line += newlines
                self.column = len(value) - value.rfind("\n") - 1
            else:
                self.column += len(value)

        def before_codegen(self, node: Any) -> None:
            if id(node) in self.targets:
                self.found[id(node)] = (self.line, self.column)

        def after_codegen(self, node: Any) -> None:
            self.done(id(node))

        def record_syntactic_position(self, node: Any, *, start_node: Any = None,
                                      end_node: Any = None) -> Any:
            key = id(node)
            if key not in self.targets:
                return _NO_RECORD
            if start_node is None:
                # The start is known now; a class is done here, not after its whole body.
                self.found[key] = (self.line, self.column)
                self.done(key)
                return _NO_RECORD
            return self.hoisted(key, start_node)

        @contextlib.contextmanager
        def hoisted(self, key: int, start_node: Any) -> Iterator[None]:
            # The start is that of a child (libcst: SimpleStatementLine's first statement).
            self.targets.add(id(start_node))
            yield
            if id(start_node) in self.found:
                self.found[key] = self.found[id(start_node)]
            self.done(key)

        def done(self, key: int) -> None:
            if key in self.pending:
                self.pending.discard(key)
                if not self.pending:
                    raise _AllFound()

    return PositionState()


_FIELD_NAMES: Dict[type, Tuple[str, ...]] = {}
_IS_NODE: Dict[type, bool] = {}  # isinstance against libcst's ABCs dominates a walk; cache by type


def _is_node(value: Any) -> bool:
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        import libcst as cst

        known = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return known


def children(node: "libcst.CSTNode") -> List["libcst.CSTNode"]:
    """Return the direct child nodes of `node`.

    Faster than CSTNode.children, which runs a visitor over the node to collect them.
    """
    names = _FIELD_NAMES.get(type(node))
    if names is None:
        names = _FIELD_NAMES[type(node)] = tuple(f.name for f in dataclasses.fields(node))
    out: List["libcst.CSTNode"] = []
    for name in names:
        value = getattr(node, name)
        if _is_node(value):
            out.append(value)
        elif type(value) in (tuple, list):
            out.extend(item for item in value if _is_node(item))
    return out


def split_scope(scope: str) -> Tuple[str, ...]:
    """Split a dotted scope like "EngineArgs.create_model_config" into its names."""
    return tuple(scope.split(".")) if scope else ()


def walk(module: "libcst.Module", scope: Tuple[str, ...] = (),
         exact: bool = False) -> Iterator[Tuple["libcst.CSTNode", List["libcst.CSTNode"]]]:
    """Yield (node, ancestors) for every node inside `scope`, module first.

    `scope` is a chain of class/function names from the module top level; if/try/with
    blocks in between do not count. With `exact`, only the ClassDef/FunctionDef whose chain
    is exactly `scope` is yielded (not its contents). `ancestors` is a live list, root
    first; copy it to keep it. Subtrees that cannot reach the scope are skipped, and so are
    whitespace, comments and punctuation, which no op looks for.
    """
    import libcst as cst

    defs = (cst.ClassDef, cst.FunctionDef)
    opaque = (cst.BaseExpression, cst.SimpleStatementLine, cst.SimpleStatementSuite)
    trivia_types = (cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine,
              cst.Newline, cst.Comment, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon,
              cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
              cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.AssignEqual, cst.BaseBinaryOp,
              cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp)
    trivia: Dict[type, bool] = {}

    def wanted(child: cst.CSTNode) -> bool:
        kind = type(child)
        skip = trivia.get(kind)
        if skip is None:
            skip = trivia[kind] = isinstance(child, trivia_types)
        return not skip

    path: List[cst.CSTNode] = []
    chain: List[str] = []
    stack: List[Tuple[cst.CSTNode, bool]] = [(module, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            path.pop()
            if type(node) in defs:
                chain.pop()
            continue
        inside = len(chain) >= len(scope)  # chain always agrees with scope on its prefix
        is_def = type(node) in defs
        if is_def:
            if len(chain) < len(scope) and node.name.value != scope[len(chain)]:
                continue
            if exact and len(chain) + 1 == len(scope):
                yield node, path
                continue
        elif not inside and isinstance(node, opaque):  # only outside the scope: cheap enough
            continue
        if inside and not exact:
            yield node, path
        path.append(node)
        if is_def:
            chain.append(node.name.value)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(children(node)) if wanted(child))


def dotted_name(node: "libcst.CSTNode") -> Optional[str]:
    """Return "a.b.c" for a Name/Attribute chain, else None."""
    import libcst as cst

    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def replace_nodes(module: "libcst.Module",
                  edits: Sequence[Tuple[Sequence["libcst.CSTNode"], "libcst.CSTNode", "libcst.CSTNode"]]
                  ) -> "libcst.Module":
    """Return `module` with each (ancestors, old, new) edit applied, rebuilding only ancestors.

    Untouched subtrees keep their identity, unlike a CSTTransformer pass that rebuilds every
    node: cheaper on 7,000-line files, and later ops see the same nodes.
    """
    import libcst as cst

    new_for = {id(old): new for _, old, new in edits}
    on_path = {id(node) for ancestors, _, _ in edits for node in ancestors}

    def rebuild(node: cst.CSTNode) -> cst.CSTNode:
        if id(node) in new_for:
            return new_for[id(node)]
        if id(node) not in on_path:
            return node
        changes: Dict[str, Any] = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if isinstance(value, cst.CSTNode):
                new = rebuild(value)
                if new is not value:
                    changes[f.name] = new
            elif isinstance(value, (tuple, list)):
                items = [rebuild(v) if isinstance(v, cst.CSTNode) else v for v in value]
                if any(a is not b for a, b in zip(items, value)):
                    changes[f.name] = type(value)(items)
        return node.with_changes(**changes) if changes else node

    result = rebuild(module)
    assert isinstance(result, cst.Module)
    return result
