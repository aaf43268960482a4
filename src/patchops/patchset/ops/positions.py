"""Find the line and column of the few nodes an op reports, without resolving every node.

Why not libcst's PositionProvider: it positions every node of the module, and an op needs a
handful. Measured with libcst 1.9 on 0.33.0's files: arg_utils.py (3,300 lines) 0.50 s with
PositionProvider, 0.06 s here; gpu_model_runner.py (7,200 lines) 1.06 s vs 0.01 s, and
2.0 s vs 0.31 s for its very last name. PositionProvider stays the fallback and the test
oracle. Importing this module does not import libcst.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, Tuple

if TYPE_CHECKING:
    import libcst


_POSITIONS_ON = [True]


@contextlib.contextmanager
def positions_off() -> Iterator[None]:
    """Report (0, 0) for every site while inside: for runs whose sites are thrown away.

    patchset/rewrite.py chains a patchset's ops to build the new module after a first run has
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
    falls back to PositionProvider. tests/patchset/ops/test_base.py compares the two on real files.
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


def site_positions(module: "libcst.Module", nodes: Iterable["libcst.CSTNode"]) -> Dict[int, Tuple[int, int]]:
    """Return `positions(module, nodes)`, or (0, 0) for each node inside `positions_off()`."""
    if _POSITIONS_ON[0]:
        return positions(module, nodes)
    return {id(node): (0, 0) for node in nodes}
