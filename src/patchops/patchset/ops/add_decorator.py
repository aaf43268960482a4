"""add-decorator: put a decorator on a function or method, once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, List, Optional, Tuple

from packaging.specifiers import SpecifierSet

from patchops.patchset.ops.base import (Op, OpExample, OpOutcome, Site, SiteCount, SiteState, file_param,
                               normalize_expr, one_line, param, sites_param, versions_param)
from patchops.patchset.ops.tree import dotted_name, parse_expr, replace_nodes, split_scope, walk

if TYPE_CHECKING:
    import libcst


@dataclass(frozen=True)
class AddDecorator(Op):
    """Add `decorator` as the outermost decorator of the function `scope`.

    The function already carrying `decorator` (compared as code) is satisfied. One
    carrying a decorator with the same name but other arguments is drift: an older or
    hand-edited version of the patch. Otherwise the function is pristine. Outermost, so
    the wrapper sees the call as its callers do, other decorators included.
    """

    name: ClassVar[str] = "add-decorator"
    EXAMPLES: ClassVar = (
        OpExample(
            {"file": "worker/model_runner.py", "sites": 1, "scope": "ModelRunner.execute_model",
             "decorator": "timed('execute_model')"},
            before=("class ModelRunner:\n"
                    "    # the step\n"
                    "    @torch.inference_mode()\n"
                    "    def execute_model(self, model_input):\n"
                    "        return model_input\n"),
            after=("class ModelRunner:\n"
                   "    # the step\n"
                   "    @timed('execute_model')\n"
                   "    @torch.inference_mode()\n"
                   "    def execute_model(self, model_input):\n"
                   "        return model_input\n"),
        ),
    )

    file: str = file_param()
    sites: SiteCount = sites_param()
    scope: str = param("dotted", "the function, e.g. ModelRunner.execute_model")
    decorator: str = param("expr", "the decorator expression, without @")
    vllm: SpecifierSet = versions_param()

    def describe(self) -> str:
        """Name the decorator and function, e.g. "add-decorator @timed(...) on X.f"."""
        head = self.decorator.split("(", 1)
        shown = head[0] + ("(...)" if len(head) > 1 else "")
        return f"{self.name} @{shown} on {self.scope}"

    def explain(self, site: Site) -> str:
        """Show the decorator found in place of the wanted one."""
        return f"found @{one_line(site.found)}, expected @{self.decorator}"

    def rewrite(self, module: "libcst.Module") -> OpOutcome:
        """Add the decorator to the function unless it is already there."""
        import libcst as cst

        wanted = normalize_expr(self.decorator)
        head = _head(parse_expr(self.decorator))
        found: List[Tuple[cst.CSTNode, SiteState, str]] = []
        edits = []
        for node, ancestors in walk(module, split_scope(self.scope), exact=True):
            if not isinstance(node, cst.FunctionDef):
                continue
            site: Optional[Tuple[cst.CSTNode, SiteState, str]] = None
            for dec in node.decorators:
                text = module.code_for_node(dec.decorator)
                if _normalized(text) == wanted:
                    site = (dec, SiteState.SATISFIED, text)
                    break
                if head is not None and _head(dec.decorator) == head and site is None:
                    site = (dec, SiteState.DRIFT, text)
            if site is None:
                site = (node, SiteState.PRISTINE, "")
                edits.append((list(ancestors), node))
            found.append(site)

        def edit() -> "libcst.Module":
            return replace_nodes(module, [
                (path, fn, fn.with_changes(decorators=(
                    cst.Decorator(decorator=parse_expr(self.decorator)), *fn.decorators)))
                for path, fn in edits])

        return self.outcome(module, found, edit)


def _head(expr: "libcst.BaseExpression") -> Optional[str]:
    """Return the decorator's dotted name: `a.b` for `@a.b` and for `@a.b(...)`."""
    import libcst as cst

    return dotted_name(expr.func if isinstance(expr, cst.Call) else expr)


def _normalized(text: str) -> Optional[str]:
    try:
        return normalize_expr(text)
    except SyntaxError:
        return None
