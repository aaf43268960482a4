"""Read untrusted YAML into positioned nodes, with the values `yaml.safe_load` would build.

vLLM reads `--config` files with `yaml.safe_load`, so scalars here are constructed by PyYAML's
SafeConstructor (YAML 1.1: `yes`/`on` are True, `0.10` is the float 0.1). Each node keeps its
1-based line and column and, for scalars, the text exactly as written.

Safety: the input is bounded before PyYAML sees it (size, NUL bytes, encoding), nesting depth
and node count are checked while composing (the composer recurses per level, so a deep
document would otherwise blow the Python stack), and aliases are expanded against a node
budget (a "billion laughs" document composes to a handful of shared nodes but constructs to
millions). Every failure is a LintInputError naming the file and, when known, line:col.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from patchops.core.errors import LintInputError

MAX_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 50
MAX_NODES = 20_000           # values after alias expansion; a serve config has a few dozen

TAG_PREFIX = "tag:yaml.org,2002:"
MAP_TAG = TAG_PREFIX + "map"
SEQ_TAG = TAG_PREFIX + "seq"
MERGE_TAG = TAG_PREFIX + "merge"
NULL_TAG = TAG_PREFIX + "null"


@dataclass
class YScalar:
    """A scalar: `value` as safe_load builds it, `text` its unquoted text, `raw` as written."""

    value: Any
    text: str
    raw: str
    tag: str
    line: int
    column: int
    quoted: bool = False
    start: int = -1          # offsets of the node in the text, -1 when not written here (an alias)
    end: int = -1


@dataclass
class YSeq:
    items: List["YNode"]
    line: int
    column: int
    start: int = -1
    end: int = -1


@dataclass
class YEntry:
    """One `key: value` of a mapping; `merged` when it came in through a `<<:` merge key."""

    key: YScalar
    value: "YNode"
    merged: bool = False


@dataclass
class YMap:
    entries: List[YEntry]
    line: int
    column: int
    start: int = -1
    end: int = -1

    def last(self) -> Dict[Any, YEntry]:
        """Return entries by key value, the last one winning (as safe_load does)."""
        out: Dict[Any, YEntry] = {}
        for entry in self.entries:
            out[_hashable(entry.key.value)] = entry
        return out

    def duplicates(self) -> List[Tuple[YEntry, YEntry]]:
        """Return (earlier, later) pairs of keys written twice (merged keys do not count)."""
        seen: Dict[Any, YEntry] = {}
        pairs: List[Tuple[YEntry, YEntry]] = []
        for entry in self.entries:
            if entry.merged:
                continue
            k = _hashable(entry.key.value)
            if k in seen:
                pairs.append((seen[k], entry))
            seen[k] = entry
        return pairs


YNode = Union[YScalar, YSeq, YMap]


def kind_of(node: Optional[YNode]) -> str:
    """Return a short user-facing name for a node's type: "a mapping", "a list", "a string", ..."""
    if node is None:
        return "nothing"
    if isinstance(node, YMap):
        return "a mapping"
    if isinstance(node, YSeq):
        return "a list"
    v = node.value
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean {v}"
    if isinstance(v, int):
        return f"the integer {v}"
    if isinstance(v, float):
        return f"the number {v}"
    if isinstance(v, str):
        return f"the string {v!r}"
    return f"a {type(v).__name__}"


def to_python(node: Optional[YNode]) -> Any:
    """Return the plain value of a node as yaml.safe_load would (dicts keep the last key)."""
    if node is None:
        return None
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [to_python(item) for item in node.items]
    out: Dict[Any, Any] = {}
    for entry in node.entries:
        out[_hashable(entry.key.value)] = to_python(entry.value)
    return out


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


# --- text checks ---------------------------------------------------------------------------


def decode(data: bytes, path: str) -> str:
    """Return `data` as text, refusing oversized, binary and non-UTF-8 input."""
    if len(data) > MAX_BYTES:
        raise LintInputError(f"{path}: file is {len(data)} bytes, over the {MAX_BYTES}-byte limit "
                             "for a serve config; is this the right file?")
    if b"\x00" in data:
        line = data[:data.index(b"\x00")].count(b"\n") + 1
        raise LintInputError(f"{path}:{line}: contains a NUL byte; this looks like a binary file, "
                             "not a serve config or launch command")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise LintInputError(f"{path}:{line}: is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                             f"offset {exc.start}); save it as UTF-8") from None
    return text


def check_text(text: str, path: str) -> str:
    """Return `text` without a BOM, refusing oversized or NUL-containing text."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if len(text) > MAX_BYTES:
        raise LintInputError(f"{path}: input is {len(text)} characters, over the {MAX_BYTES} limit "
                             "for a serve config")
    if "\x00" in text:
        line = text[:text.index("\x00")].count("\n") + 1
        raise LintInputError(f"{path}:{line}: contains a NUL character; this looks like binary "
                             "content, not a serve config or launch command")
    return text


# --- composing -----------------------------------------------------------------------------


class _TooDeep(Exception):
    def __init__(self, mark):
        self.mark = mark


class _TooBig(Exception):
    def __init__(self, mark):
        self.mark = mark


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader whose composer stops at MAX_DEPTH nesting and MAX_NODES events."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._count = 0

    def compose_node(self, parent, index):
        self._depth += 1
        self._count += 1
        if self._depth > MAX_DEPTH:
            raise _TooDeep(self.peek_event().start_mark)
        if self._count > MAX_NODES:
            raise _TooBig(self.peek_event().start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(TAG_PREFIX):] if tag.startswith(TAG_PREFIX) else tag


def _at(path: str, mark) -> str:
    if mark is None:
        return path
    return f"{path}:{mark.line + 1}:{mark.column + 1}"


def _compose(text: str, path: str, documents: bool = False):
    loader = None
    try:
        loader = _BoundedLoader(text)
        if documents:
            nodes = []
            while loader.check_node():
                nodes.append(loader.get_node())
            return nodes
        return loader.get_single_node()
    except _TooDeep as exc:
        raise LintInputError(f"{_at(path, exc.mark)}: YAML is nested more than {MAX_DEPTH} levels "
                             "deep; a serve config is a flat mapping") from None
    except _TooBig as exc:
        raise LintInputError(f"{_at(path, exc.mark)}: YAML has more than {MAX_NODES} values; "
                             "a serve config is a short mapping") from None
    except yaml.reader.ReaderError as exc:
        line = text[:exc.position].count("\n") + 1
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        raise LintInputError(f"{path}:{line}: contains the non-printable character #x{char:04x}; "
                             "this looks like binary content, not YAML") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        hint = ""
        if "'\\t'" in problem:
            hint = " (YAML does not allow tabs for indentation; use spaces)"
        context = ""
        if exc.context and exc.problem:
            if problem.startswith("but "):
                problem = f"{exc.context.strip()}, {problem}"
            elif exc.context_mark is not None:
                context = f" ({exc.context.strip()} at line {exc.context_mark.line + 1})"
        raise LintInputError(f"{_at(path, mark)}: invalid YAML: {problem}{context}{hint}") from None
    except yaml.YAMLError as exc:
        raise LintInputError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise LintInputError(f"{path}: YAML is nested too deeply to read") from None
    finally:
        if loader is not None:
            loader.dispose()


# --- building positioned nodes -------------------------------------------------------------


class _Builder:
    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.count = 0
        self.active: set = set()
        self.placed: set = set()     # nodes already given their offsets: an alias repeats them
        self.constructor = SafeConstructor()

    def fail(self, node: Node, message: str) -> LintInputError:
        return LintInputError(f"{_at(self.path, node.start_mark)}: {message}")

    def build(self, node: Node, depth: int = 1) -> YNode:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, f"YAML expands to more than {MAX_NODES} values through anchors "
                                  "and aliases (`&x` / `*x`); refusing to expand it")
        if depth > MAX_DEPTH:
            raise self.fail(node, f"YAML is nested more than {MAX_DEPTH} levels deep once aliases "
                                  "are expanded")
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if id(node) in self.active:
            raise self.fail(node, "an alias refers to the collection that contains it "
                                  "(a recursive anchor); write the values out instead")
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                if node.tag != SEQ_TAG:
                    raise self.fail(node, f"the tag `{_short_tag(node.tag)}` is not supported "
                                          "here; write a plain list")
                return YSeq([self.build(child, depth + 1) for child in node.value], line, column,
                            *self.offsets(node))
            if isinstance(node, MappingNode):
                if node.tag != MAP_TAG:
                    raise self.fail(node, f"the tag `{_short_tag(node.tag)}` is not supported "
                                          "here; write a plain mapping")
                return YMap(self.entries(node, depth), line, column, *self.offsets(node))
        finally:
            self.active.discard(id(node))
        raise self.fail(node, "unsupported YAML node")  # pragma: no cover

    def entries(self, node: MappingNode, depth: int) -> List[YEntry]:
        merged: List[YEntry] = []
        own: List[YEntry] = []
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag == MERGE_TAG:
                # `<<: *base` (SafeConstructor.flatten_mapping): merged keys come first so
                # the mapping's own keys override them.
                sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                for source in sources:
                    built = self.build(source, depth + 1)
                    if not isinstance(built, YMap):
                        raise self.fail(source, "a `<<` merge key needs a mapping or a list of "
                                                "mappings")
                    merged.extend(YEntry(e.key, e.value, merged=True) for e in built.entries)
                continue
            if not isinstance(key_node, ScalarNode):
                raise self.fail(key_node, "a mapping key must be a plain value, not a "
                                          "list or mapping")
            key = self.scalar(key_node)
            own.append(YEntry(key, self.build(value_node, depth + 1)))
        return merged + own

    def scalar(self, node: ScalarNode) -> YScalar:
        try:
            value = self.constructor.construct_object(node, deep=True)
        except ConstructorError as exc:
            problem = (exc.problem or "cannot read this value").strip()
            problem = problem.replace(TAG_PREFIX, "!!")
            raise self.fail(node, f"{problem}; only plain YAML values are allowed") from None
        except (ValueError, TypeError, OverflowError) as exc:
            raise self.fail(node, f"cannot read this value: {exc}") from None
        raw = self.text[node.start_mark.index:node.end_mark.index]
        start, end = self.offsets(node)
        return YScalar(value=value, text=node.value, raw=raw, tag=node.tag,
                       line=node.start_mark.line + 1, column=node.start_mark.column + 1,
                       quoted=node.style in ("'", '"'), start=start, end=end)

    def offsets(self, node: Node) -> Tuple[int, int]:
        """Return (start, end) of `node` in the text the first time it is built, else (-1, -1).

        A node built again is an alias (`*x`): its text is the anchor's, written elsewhere; a
        node with an anchor or tag in front (`&x on`, `!!str 1`) has no span of its own value.
        """
        if id(node) in self.placed or self.text[node.start_mark.index:node.start_mark.index + 1] in ("&", "!"):
            return (-1, -1)
        self.placed.add(id(node))
        return (node.start_mark.index, node.end_mark.index)


def read_yaml(text: str, path: str) -> Optional[YNode]:
    """Return the positioned node tree of one YAML document, or None for an empty document."""
    text = check_text(text, path)
    root = _compose(text, path)
    if root is None:
        return None
    return _Builder(text, path).build(root)


def read_yaml_documents(text: str, path: str) -> List[Optional[YNode]]:
    """Return the positioned node tree of each `---`-separated document (None for an empty one).

    A Kubernetes manifest holds several objects in one file; the node budget counts them all.
    """
    text = check_text(text, path)
    builder = _Builder(text, path)
    return [None if node is None else builder.build(node) for node in _compose(text, path, True)]

