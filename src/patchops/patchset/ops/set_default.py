"""set-default: give a function parameter or a dataclass field a wanted default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, List, Tuple

from packaging.specifiers import SpecifierSet

from patchops.patchset.ops.base import (Op, OpExample, OpOutcome, Site, SiteCount, SiteState, classify_value,
                               file_param, one_line, sites_param, versions_param)
from patchops.patchset.ops.tree import parse_expr, replace_nodes, split_scope, walk

from patchops.patchset.ops.base import param as op_param  # this op has a parameter named `param`

if TYPE_CHECKING:
    import libcst


@dataclass(frozen=True)
class SetDefault(Op):
    """Set the default of parameter `param` of function `scope`, or of field `field` of class `scope`.

    A field is an annotated assignment directly in the class body (`name: T = default`,
    as in `@dataclass class EngineArgs`). States follow set-keyword: a default in
    `pristine` is rewritten, `value` is satisfied, anything else is drift. A parameter or
    field without a default is drift too: adding one could change the signature's meaning.
    """

    name: ClassVar[str] = "set-default"
    EXAMPLES: ClassVar = (
        OpExample(
            {"file": "engine/arg_utils.py", "sites": 1, "scope": "EngineArgs",
             "field": "enforce_eager", "value": "False", "pristine": ["True"]},
            before=("@dataclass\nclass EngineArgs:\n"
                    "    enforce_eager: bool = True  # vendor\n"),
            after=("@dataclass\nclass EngineArgs:\n"
                   "    enforce_eager: bool = False  # vendor\n"),
        ),
        OpExample(
            {"file": "engine/arg_utils.py", "sites": 1, "scope": "EngineArgs.__init__",
             "param": "enforce_eager", "value": "False", "pristine": ["True"]},
            before=("class EngineArgs:\n"
                    "    def __init__(self, model, enforce_eager: bool = True):\n"
                    "        pass\n"),
            after=("class EngineArgs:\n"
                   "    def __init__(self, model, enforce_eager: bool = False):\n"
                   "        pass\n"),
        ),
    )

    file: str = file_param()
    sites: SiteCount = sites_param()
    scope: str = op_param("dotted", "the function (with param) or class (with field), "
                       "e.g. EngineArgs.__init__ or EngineArgs")
    value: str = op_param("expr", "the wanted default, a Python expression")
    pristine: Tuple[str, ...] = op_param("exprs", "defaults known to need the rewrite, e.g. [True]")
    param: str = op_param("identifier", "parameter of the function `scope`", "")
    field: str = op_param("identifier", "annotated field of the class `scope`", "")
    vllm: SpecifierSet = versions_param()

    def check(self) -> None:
        """Require exactly one of `param` and `field`."""
        if bool(self.param) == bool(self.field):
            raise ValueError("give exactly one of `param` (a function parameter) "
                             "and `field` (a class field)")

    @property
    def target(self) -> str:
        """Return the parameter or field name."""
        return self.param or self.field

    def describe(self) -> str:
        """Name the target, e.g. "set-default EngineArgs.enforce_eager"."""
        if self.param:
            return f"{self.name} {self.scope}({self.param}=...)"
        return f"{self.name} {self.scope}.{self.field}"

    def explain(self, site: Site) -> str:
        """Show the default as found and the values that would have been accepted."""
        expected = " or ".join((self.value,) + self.pristine)
        if not site.found:
            return f"found {self.target} without a default, expected {expected}"
        return f"found {self.target}={one_line(site.found)}, expected {expected}"

    def rewrite(self, module: "libcst.Module") -> OpOutcome:
        """Rewrite a pristine default to `value`; report the parameter or field."""
        import libcst as cst

        found: List[Tuple[cst.CSTNode, SiteState, str]] = []
        edits = []
        kind = cst.FunctionDef if self.param else cst.ClassDef
        for node, ancestors in walk(module, split_scope(self.scope), exact=True):
            if not isinstance(node, kind):
                continue
            for path, target, default in self._targets(node, ancestors + [node]):
                if default is None:
                    found.append((target, SiteState.DRIFT, ""))
                    continue
                text = module.code_for_node(default)
                state = classify_value(text, self.value, self.pristine)
                found.append((target, state, text))
                if state is SiteState.PRISTINE:
                    edits.append((path, target))

        def edit() -> "libcst.Module":
            new = parse_expr(self.value)
            return replace_nodes(module, [(path, old, _with_default(old, new.deep_clone()))
                                          for path, old in edits])

        return self.outcome(module, found, edit)

    def _targets(self, node, path):
        """Yield (ancestors, param-or-AnnAssign node, default node or None) in a def or class."""
        import libcst as cst

        if isinstance(node, cst.FunctionDef):
            params = node.params
            for group in (params.posonly_params, params.params, params.kwonly_params):
                for p in group:
                    if p.name.value == self.param:
                        yield path + [params], p, p.default
            return
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)
                        and small.target.value == self.field):
                    yield path + [node.body, stmt], small, small.value


def _with_default(node, value):
    import libcst as cst

    if isinstance(node, cst.Param):
        return node.with_changes(default=value)
    return node.with_changes(value=value)
