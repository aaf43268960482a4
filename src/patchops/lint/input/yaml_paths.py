"""Walk positioned YAML nodes by key: what the deploy readers ask of a manifest or compose file."""

from __future__ import annotations

from typing import List, Optional

from patchops.lint.input.yaml_nodes import YEntry, YMap, YNode, YScalar, YSeq


def entry(node: Optional[YNode], key: str) -> Optional[YEntry]:
    """Return the entry of `key` in a mapping (the last one written), None if absent or not a mapping."""
    if not isinstance(node, YMap):
        return None
    return node.last().get(key)


def child(node: Optional[YNode], *keys: str) -> Optional[YNode]:
    """Return the node at `keys` below `node` (`child(obj, "spec", "template")`), None if absent."""
    for key in keys:
        found = entry(node, key)
        if found is None:
            return None
        node = found.value
    return node


def items(node: Optional[YNode]) -> List[YNode]:
    """Return a list node's items ([] for anything else)."""
    return list(node.items) if isinstance(node, YSeq) else []


def text_of(node: Optional[YNode]) -> Optional[str]:
    """Return a non-null scalar's text as written (unquoted), else None."""
    return node.text if isinstance(node, YScalar) and node.value is not None else None
