"""set-keyword: give a keyword argument of a call a wanted value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, List, Tuple

from packaging.specifiers import SpecifierSet

from patchops.patchset.ops.base import (Op, OpExample, OpOutcome, Site, SiteCount, SiteState, classify_value,
                               file_param, one_line, param, sites_param, versions_param)
from patchops.patchset.ops.tree import dotted_name, parse_expr, replace_nodes, split_scope, walk

if TYPE_CHECKING:
    import libcst


@dataclass(frozen=True)
class SetKeyword(Op):
    """Set keyword `keyword` of calls to `callee` inside `scope` to `value`.

    A call whose keyword value is one of `pristine` is rewritten; one that already has
    `value` is satisfied; any other value is drift, reported with its line and text. Only
    the value node is replaced, plus the comment trailing it on the same line: that comment
    explained the old value (a vendor's "graphs unsupported" on `enforce_eager=True`) and
    would be false next to the new one. The comma, other comments and the layout stay. A matching
    call without the keyword is not a site. `callee` matches the called name or the tail
    of an attribute chain: `ModelConfig` matches `ModelConfig(...)` and
    `config.ModelConfig(...)`. Values are compared as code, ignoring layout and comments.
    """

    name: ClassVar[str] = "set-keyword"
    EXAMPLES: ClassVar = (
        OpExample(
            {"file": "engine/arg_utils.py", "sites": 1, "scope": "EngineArgs",
             "callee": "ModelConfig", "keyword": "enforce_eager",
             "value": "self.enforce_eager", "pristine": ["True"]},
            before=("class EngineArgs:\n"
                    "    def create_model_config(self):\n"
                    "        return ModelConfig(\n"
                    "            model=self.model,\n"
                    "            enforce_eager=True,  # CoreX: graphs unsupported\n"
                    "        )\n"),
            after=("class EngineArgs:\n"
                   "    def create_model_config(self):\n"
                   "        return ModelConfig(\n"
                   "            model=self.model,\n"
                   "            enforce_eager=self.enforce_eager,\n"
                   "        )\n"),
        ),
    )

    file: str = file_param()
    sites: SiteCount = sites_param()
    callee: str = param("dotted", "called name, e.g. ModelConfig; also matches x.ModelConfig")
    keyword: str = param("identifier", "keyword argument to set, e.g. enforce_eager")
    value: str = param("expr", "the wanted value, a Python expression")
    pristine: Tuple[str, ...] = param("exprs", "values known to need the rewrite, e.g. [True]")
    scope: str = param("dotted", "class/function path the calls must be inside, e.g. EngineArgs "
                       "or EngineArgs.create_model_config; empty: the whole file", "")
    vllm: SpecifierSet = versions_param()

    def describe(self) -> str:
        """Name the call and keyword, e.g. "set-keyword ModelConfig(enforce_eager=...)"."""
        return f"{self.name} {self.callee}({self.keyword}=...)"

    def explain(self, site: Site) -> str:
        """Show the keyword as found and the values that would have been accepted."""
        expected = " or ".join((self.value,) + self.pristine)
        return f"found {self.keyword}={one_line(site.found)}, expected {expected}"

    def rewrite(self, module: "libcst.Module") -> OpOutcome:
        """Rewrite pristine keyword values to `value`; report every matching keyword."""
        import libcst as cst

        tail = "." + self.callee
        found: List[Tuple[cst.CSTNode, SiteState, str]] = []
        edits = []
        for node, ancestors in walk(module, split_scope(self.scope)):
            if not isinstance(node, cst.Call):
                continue
            callee = dotted_name(node.func)
            if callee is None or not (callee == self.callee or callee.endswith(tail)):
                continue
            for arg in node.args:
                if arg.keyword is None or arg.keyword.value != self.keyword:
                    continue
                text = module.code_for_node(arg.value)
                state = classify_value(text, self.value, self.pristine)
                found.append((arg, state, text))
                if state is SiteState.PRISTINE:
                    edits.append((ancestors + [node], arg, arg))  # new node built in edit()

        def edit() -> "libcst.Module":
            value = parse_expr(self.value)
            return replace_nodes(module, [(path, old, _without_comment(old.with_changes(
                value=value.deep_clone()))) for path, old, _ in edits])

        return self.outcome(module, found, edit)


def _without_comment(arg: "libcst.Arg") -> "libcst.Arg":
    """Drop the comment after `arg,` on its line (it described the value being replaced)."""
    import libcst as cst

    comma = arg.comma
    after = getattr(comma, "whitespace_after", None)
    if not isinstance(after, cst.ParenthesizedWhitespace) or after.first_line.comment is None:
        return arg
    line = cst.TrailingWhitespace(newline=after.first_line.newline)
    return arg.with_changes(comma=comma.with_changes(whitespace_after=after.with_changes(first_line=line)))
