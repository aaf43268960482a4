"""Helpers over libcst trees that ops share: parse, the scoped walk, children, node replacement.

Importing this module does not import libcst (see patchset/ops/base.py); each helper imports it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import libcst


def parse_expr(code: str) -> "libcst.BaseExpression":
    """Parse an op's expression parameter with libcst."""
    import libcst as cst

    return cst.parse_expression(code.strip())


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
