"""Read a patchset's YAML into a Patchset, checking every op; every error says path:line:col.

Kept apart from `patchops.patchset.model` so that finding patchsets by name, and the index that
answers status and a no-op apply (`patchops.patchset.index`), import neither yaml nor the ops.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import yaml

from patchops.core.errors import PatchsetError
from patchops.patchset.ops import OPS, Op
from patchops.patchset.ops.base import check_param
from patchops.patchset.model import Patchset, did_you_mean

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # kebab-case, as file names and the CLI spell them
_TOP_KEYS = {"name": True, "summary": True, "description": False, "notes": False, "vllm": True,
             "ops": True}
_MAX_DEPTH = 100  # far beyond any patchset; the YAML composer recurses per level
_YAML_TYPES = {
    "tag:yaml.org,2002:str": "a string", "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number", "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:null": "null",
}
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_INT = "tag:yaml.org,2002:int"
_STR = "tag:yaml.org,2002:str"


def _kind_of(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return _YAML_TYPES.get(node.tag, "a value")


class Loader:
    """Turn the composed YAML node tree into a Patchset, keeping marks for messages."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.text = text

    def fail(self, node: Optional[yaml.Node], message: str) -> PatchsetError:
        mark = node.start_mark if node is not None else None
        where = f"{mark.line + 1}:{mark.column + 1}" if mark else "1:1"
        return PatchsetError(f"{self.path}:{where}: {message}")

    def load(self) -> Patchset:
        try:
            root = yaml.compose(self.text, Loader=yaml.SafeLoader)
        except RecursionError:
            raise self.too_deep() from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"{mark.line + 1}:{mark.column + 1}" if mark else "1:1"
            what = " ".join(x for x in (exc.context, exc.problem) if x)
            raise PatchsetError(f"{self.path}:{where}: invalid YAML: {what}") from None
        except yaml.YAMLError as exc:
            raise PatchsetError(f"{self.path}:1:1: invalid YAML: {exc}") from None
        if root is None:
            raise self.fail(None, "empty patchset; expected a mapping with name, summary, vllm and ops")
        top = self.mapping(root, "a patchset")
        for key, (key_node, _) in top.items():
            if key not in _TOP_KEYS:
                raise self.fail(key_node, f'unknown key "{key}" in a patchset{did_you_mean(key, _TOP_KEYS)}; '
                                f"allowed keys: {', '.join(_TOP_KEYS)}")
        for key, required in _TOP_KEYS.items():
            if required and key not in top:
                raise self.fail(root, f'patchset is missing "{key}"')

        name_node = top["name"][1]
        name = self.string(name_node, "name")
        if not NAME_RE.match(name):
            raise self.fail(name_node, f'name "{name}" is not kebab-case, like "corex-eager-allreduce"')
        if name != self.path.stem:
            raise self.fail(name_node, f'name "{name}" differs from the file name; name the file '
                            f'"{name}{self.path.suffix}" or the patchset "{self.path.stem}"')
        summary_node = top["summary"][1]
        summary = self.string(summary_node, "summary")
        if "\n" in summary.strip():
            raise self.fail(summary_node, "summary must be one line; put the rest in description")
        description = ""
        if "description" in top:
            description = self.string(top["description"][1], "description", empty_ok=True)
        notes = self.string(top["notes"][1], "notes", empty_ok=True) if "notes" in top else ""
        versions = self.checked(top["vllm"][1], "vllm", "versions")

        ops_node = top["ops"][1]
        if not isinstance(ops_node, yaml.SequenceNode) or not ops_node.value:
            raise self.fail(ops_node, f'"ops" must be a non-empty list of ops, found {_kind_of(ops_node)}')
        ops = tuple(self.op(node, i) for i, node in enumerate(ops_node.value, 1))
        return Patchset(name, summary.strip(), description.strip(), versions, ops, self.path,
                        notes=notes.strip(), text=self.text)

    def too_deep(self) -> PatchsetError:
        """Return the error for YAML nested past what the composer can recurse through.

        Found again with the parser's events, which need no recursion, to name the line.
        """
        depth = 0
        for event in yaml.parse(self.text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > _MAX_DEPTH:
                    mark = event.start_mark
                    return PatchsetError(f"{self.path}:{mark.line + 1}:{mark.column + 1}: YAML "
                                         f"nested more than {_MAX_DEPTH} levels deep; a patchset "
                                         f"is a mapping a few levels deep (name, summary, vllm, "
                                         f"ops)")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        return PatchsetError(f"{self.path}:1:1: YAML nested too deeply to read")

    def mapping(self, node: yaml.Node, what: str) -> Dict[str, Tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping, found {_kind_of(node)}")
        entries: Dict[str, Tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR:
                raise self.fail(key_node, f"keys of {what} must be plain words, "
                                f"found {_kind_of(key_node)}")
            if key_node.value in entries:
                first = entries[key_node.value][0].start_mark.line + 1
                raise self.fail(key_node, f'duplicate key "{key_node.value}" in {what} '
                                f"(first on line {first})")
            entries[key_node.value] = (key_node, value_node)
        return entries

    def string(self, node: yaml.Node, key: str, empty_ok: bool = False) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _STR:
            raise self.fail(node, f'"{key}" must be a string, found {_kind_of(node)}')
        if not empty_ok and not node.value.strip():
            raise self.fail(node, f'"{key}" is empty')
        return node.value

    def op(self, node: yaml.Node, index: int) -> Op:
        entries = self.mapping(node, f"op {index}")
        known = ", ".join(OPS)
        if "op" not in entries:
            raise self.fail(node, f'op {index} has no "op" key naming the op; known ops: {known}')
        kind_node = entries["op"][1]
        kind = self.string(kind_node, "op")
        cls = OPS.get(kind)
        if cls is None:
            raise self.fail(kind_node, f'unknown op "{kind}"{did_you_mean(kind, OPS)}; known ops: {known}')
        fields = {f.name: f for f in cls.param_fields()}
        for key, (key_node, _) in entries.items():
            if key != "op" and key not in fields:
                raise self.fail(key_node, f'unknown key "{key}" in {kind} op {index}'
                                f"{did_you_mean(key, fields)}; allowed keys: op, {', '.join(fields)}")
        missing = [f for f in fields.values()
                   if f.default is dataclasses.MISSING and f.name not in entries]
        if missing:
            f = missing[0]
            raise self.fail(node, f'{kind} op {index} is missing "{f.name}": {f.metadata["doc"]}')
        kwargs = {key: self.checked(value_node, key, fields[key].metadata["kind"])
                  for key, (_, value_node) in entries.items() if key != "op"}
        try:
            return cls(**kwargs)
        except ValueError as exc:
            raise self.fail(node, f"{kind} op {index}: {exc}") from None

    def checked(self, node: yaml.Node, key: str, kind: str) -> Any:
        """Return the YAML value of `node` checked as parameter kind `kind`."""
        if kind == "exprs" and isinstance(node, yaml.SequenceNode):
            if not node.value:
                raise self.fail(node, f'"{key}" is an empty list; give at least one expression')
            return tuple(self.checked(item, key, "expr") for item in node.value)
        value = self.plain(node, key, kind)
        try:
            return check_param(kind, value)
        except ValueError as exc:
            raise self.fail(node, f'"{key}": {exc}') from None

    def plain(self, node: yaml.Node, key: str, kind: str) -> Any:
        """Return the Python value a parameter of `kind` is checked on."""
        if kind == "mapping":
            if not isinstance(node, yaml.MappingNode):
                raise self.fail(node, f'"{key}" must be a mapping, found {_kind_of(node)}')
            self.mapping(node, f'"{key}"')  # duplicate keys
            try:
                return yaml.SafeLoader("").construct_document(node)
            except RecursionError:
                raise self.too_deep() from None
            except yaml.MarkedYAMLError as exc:
                raise self.fail(node, f'"{key}": {exc.problem or exc}') from None
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, f'"{key}" must be a single value, found {_kind_of(node)}')
        if kind in ("expr", "exprs"):
            # Take the text as written: YAML would turn `True` into a bool and `1.0` into a
            # float, but the op compares Python code.
            if node.tag == _BOOL and node.value not in ("True", "False"):
                raise self.fail(node, f'"{key}": {node.value!r} is a YAML boolean, not Python; '
                                "write True or False, or quote it")
            if node.tag == _NULL:
                raise self.fail(node, f'"{key}" is empty (YAML null); write None for Python\'s None')
            return node.value
        if kind == "sites" and node.tag == _INT:
            return int(yaml.SafeLoader("").construct_object(node))
        if node.tag != _STR:
            if kind == "sites":
                raise self.fail(node, f'"{key}" must be a number or a bound like ">=1", '
                                f"found {_kind_of(node)}")
            hint = ""
            if kind == "versions":
                hint = f'; quote it with an operator, like ">={node.value}"'
            raise self.fail(node, f'"{key}" must be a string, found {_kind_of(node)}{hint}')
        return node.value
