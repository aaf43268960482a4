"""replace-function: swap a whole function or method for new code, if it is the expected one."""

from __future__ import annotations

import ast
import hashlib
import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, List, Tuple

from packaging.specifiers import SpecifierSet

from patchops.patchset.ops.base import (Op, OpExample, OpOutcome, Site, SiteCount, SiteState, file_param,
                               param, sites_param, versions_param)
from patchops.patchset.ops.tree import replace_nodes, split_scope, walk

if TYPE_CHECKING:
    import libcst

# "ast1": the first normalisation scheme below; a new scheme gets a new prefix, so old
# patchsets keep meaning what they meant.
FINGERPRINT_PREFIX = "ast1-"
_FINGERPRINT_RE = re.compile(r"^ast1-[0-9a-f]{16}$")
# Fields that Python versions add, drop or fill differently for the same source (3.9 to 3.13):
# `type_params` (3.12), `kind` ("u" prefixes), type comments, and load/store contexts.
_IGNORED_FIELDS = frozenset({"ctx", "kind", "type_comment", "type_params", "type_ignores"})


def fingerprint(source: str) -> str:
    """Return the fingerprint of the one function in `source`: a hash of its normalised AST.

    Layout, comments and the Python version that parses it do not change it; any change to
    the code (a statement, a name, a default, a decorator, the docstring) does.
    """
    tree = ast.parse(textwrap.dedent(source))
    defs = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(tree.body) != 1 or len(defs) != 1:
        raise ValueError("must be exactly one function definition (decorators included)")
    digest = hashlib.sha256(repr(_canonical(defs[0])).encode("utf-8")).hexdigest()
    return FINGERPRINT_PREFIX + digest[:16]


def _canonical(node: Any) -> Any:
    if isinstance(node, ast.AST):
        fields = tuple((name, _canonical(value)) for name, value in ast.iter_fields(node)
                       if name not in _IGNORED_FIELDS and value is not None and value != [])
        return (type(node).__name__, fields)
    if isinstance(node, list):
        return tuple(_canonical(item) for item in node)
    return repr(node)


_EXAMPLE_BEFORE = ("class Runner:\n"
                   "    def step(self, batch):\n"
                   "        return self.model(batch)\n")
_EXAMPLE_CODE = ("def step(self, batch):\n"
                 "    import time\n"
                 "    start = time.perf_counter()\n"
                 "    out = self.model(batch)\n"
                 "    print('step', time.perf_counter() - start)\n"
                 "    return out\n")


@dataclass(frozen=True)
class ReplaceFunction(Op):
    """Replace the function or method `scope` with `code`, if it is the one `original` names.

    `original` is the fingerprint (normalised AST, see `fingerprint`) of the function the
    patchset was written against, so the op refuses a version whose function differs:
    its site is pristine when the function's fingerprint is `original`, satisfied when it is
    that of `code`, drift otherwise. Comments and blank lines above the definition stay.
    When several definitions share the name (a property's getter and setter, overloads),
    the ones matching neither fingerprint are not sites, provided one of them matches.
    `code` is written with the definition at column 0; its blocks take the target's
    indentation, while continuation lines and multi-line strings stay exactly as written
    (libcst keeps those verbatim), which is how `patchops capture` writes a hand edit back
    byte for byte.
    """

    name: ClassVar[str] = "replace-function"
    EXAMPLES: ClassVar = (
        OpExample(
            {"file": "v1/worker/gpu_model_runner.py", "sites": 1, "scope": "Runner.step",
             "original": fingerprint(textwrap.dedent(_EXAMPLE_BEFORE.split("\n", 1)[1])),
             "code": _EXAMPLE_CODE},
            before=_EXAMPLE_BEFORE,
            after="class Runner:\n" + textwrap.indent(_EXAMPLE_CODE, "    "),
        ),
    )

    file: str = file_param()
    sites: SiteCount = sites_param()
    scope: str = param("dotted", "the function or method to replace, e.g. GPUModelRunner.execute_model")
    original: str = param("label", "fingerprint of the function the code replaces, "
                          "as `patchops capture` computes it (ast1-...)")
    code: str = param("code", "the whole new function, decorators included")
    vllm: SpecifierSet = versions_param()

    def check(self) -> None:
        """Require one function named like `scope`, a well-formed fingerprint, and a change."""
        if not _FINGERPRINT_RE.match(self.original):
            raise ValueError(f"original: {self.original!r} is not a fingerprint like "
                             f"ast1-0123456789abcdef (patchops capture writes it)")
        try:
            new = fingerprint(self.code)
        except ValueError as exc:
            raise ValueError(f"code: {exc}") from None
        defined = ast.parse(self.code).body[0]
        wanted = split_scope(self.scope)[-1]
        if getattr(defined, "name", None) != wanted:
            raise ValueError(f"code defines {getattr(defined, 'name', '?')!r}, "
                             f"but scope {self.scope!r} names {wanted!r}")
        if new == self.original:
            raise ValueError("code is the original function (same fingerprint): nothing to replace")

    @property
    def replacement(self) -> str:
        """Return the fingerprint of `code`."""
        return fingerprint(self.code)

    def describe(self) -> str:
        """Name the function, e.g. "replace-function GPUModelRunner.execute_model"."""
        return f"{self.name} {self.scope}"

    def explain(self, site: Site) -> str:
        """Say the function is neither the one the patchset replaces nor its replacement."""
        return (f"found a different {self.scope} ({site.found}): the patchset does not match this "
                f"file; it replaces the one with fingerprint {self.original}")

    def rewrite(self, module: "libcst.Module") -> OpOutcome:
        """Replace the pristine definition; report each definition of `scope`."""
        import libcst as cst

        new_print = self.replacement
        found: List[Tuple[cst.CSTNode, SiteState, str]] = []
        paths = {}
        for node, ancestors in walk(module, split_scope(self.scope), exact=True):
            if not isinstance(node, cst.FunctionDef):
                continue
            text = module.code_for_node(node.with_changes(leading_lines=()))
            try:
                current = fingerprint(text)
            except (SyntaxError, ValueError):  # syntax this Python cannot read: not ours to judge
                current = "unreadable"
            state = {self.original: SiteState.PRISTINE, new_print: SiteState.SATISFIED}.get(
                current, SiteState.DRIFT)
            found.append((node, state, f"fingerprint {current}"))
            paths[id(node)] = list(ancestors)
        if any(state is not SiteState.DRIFT for _, state, _ in found):
            found = [item for item in found if item[1] is not SiteState.DRIFT]

        def edit() -> "libcst.Module":
            edits = []
            for node, state, _ in found:
                if state is SiteState.PRISTINE:
                    new = cst.parse_statement(self.code, config=module.config_for_parsing)
                    edits.append((paths[id(node)], node, new.with_changes(leading_lines=node.leading_lines)))
            return replace_nodes(module, edits)

        return self.outcome(module, found, edit)
