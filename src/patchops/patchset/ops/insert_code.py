"""insert-code: add a block of module-level code, once, marked by a comment."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, List, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet

from patchops.patchset.ops.base import (Op, OpExample, OpOutcome, Site, SiteCount, SiteState, file_param,
                               normalize_code, one_line, param, sites_param, versions_param)

if TYPE_CHECKING:
    import libcst

_MARKER_RE = re.compile(r"^#\s*patchops:\s*(\S+)\s*$")


@dataclass(frozen=True)
class InsertCode(Op):
    """Insert `code` at module level right before the top-level class or function `before`.

    The block opens with the comment `# patchops: <marker>`, which is how the op finds it
    again: a marked block equal to `code` (compared as code, ignoring layout and comments)
    is satisfied; a marked block that differs is drift; no marked block means the site is
    the `before` definition, pristine. Inserting before a definition, rather than after the
    imports, keeps the block next to what uses it and defined before any decorator runs.
    Comments after the last statement of `code` are not inserted.
    """

    name: ClassVar[str] = "insert-code"
    EXAMPLES: ClassVar = (
        OpExample(
            {"file": "worker/model_runner.py", "sites": 1, "marker": "hello",
             "before": "ModelRunner", "code": "GREETING = 'hello'\n"},
            before=("import os\n\n\nclass ModelRunner:\n    pass\n"),
            after=("import os\n\n\n# patchops: hello\nGREETING = 'hello'\n\n\n"
                   "class ModelRunner:\n    pass\n"),
        ),
    )

    file: str = file_param()
    sites: SiteCount = sites_param()
    marker: str = param("label", "name in the `# patchops: <marker>` comment that opens the block")
    before: str = param("identifier", "top-level class or function the block goes before")
    code: str = param("code", "the module-level statements to insert")
    vllm: SpecifierSet = versions_param()

    def describe(self) -> str:
        """Name the block and its anchor, e.g. "insert-code timing before ModelRunner"."""
        return f"{self.name} {self.marker} before {self.before}"

    def explain(self, site: Site) -> str:
        """Say the marked block differs from the patchset's code."""
        return (f"found a \"# patchops: {self.marker}\" block that differs from the patchset's "
                f"code: {one_line(site.found, 60)}")

    def rewrite(self, module: "libcst.Module") -> OpOutcome:
        """Insert the block before `before` unless a marked block is there already."""
        import libcst as cst

        block = cst.parse_module(self.code)
        size = len(block.body)
        body = list(module.body)
        found: List[Tuple[cst.CSTNode, SiteState, str]] = []
        for i, stmt in enumerate(body):
            # libcst keeps the comments that open a file in module.header, not on body[0].
            if self._is_marked(stmt.leading_lines) or (i == 0 and self._is_marked(module.header)):
                text = "".join(module.code_for_node(s) for s in body[i:i + size]).lstrip("\n")
                same = len(body[i:i + size]) == size and _same_code(text, self.code)
                found.append((stmt, SiteState.SATISFIED if same else SiteState.DRIFT, text))
        anchor: Optional[int] = None
        if not found:
            for i, stmt in enumerate(body):
                if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) and stmt.name.value == self.before:
                    found.append((stmt, SiteState.PRISTINE, ""))
                    anchor = i

        def edit() -> "libcst.Module":
            marker = cst.EmptyLine(comment=cst.Comment(f"# patchops: {self.marker}"))
            first = block.body[0]
            lines = (cst.EmptyLine(), cst.EmptyLine(), marker, *block.header, *first.leading_lines)
            new = [first.with_changes(leading_lines=lines), *block.body[1:]]
            assert anchor is not None
            return module.with_changes(body=body[:anchor] + new + body[anchor:])

        return self.outcome(module, found, edit)

    def _is_marked(self, lines: Sequence["libcst.EmptyLine"]) -> bool:
        for line in lines:
            match = line.comment and _MARKER_RE.match(line.comment.value)
            if match and match.group(1) == self.marker:
                return True
        return False


def _same_code(text: str, code: str) -> bool:
    try:
        return normalize_code(text) == normalize_code(code)
    except SyntaxError:
        return False
