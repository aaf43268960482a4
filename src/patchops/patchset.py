"""Read patchset YAML files into Patchset objects; every error says path:line:col.

A patchset is one YAML file named after it:

    name: corex-eager-allreduce          # kebab-case, equal to the file name
    summary: one line
    description: |                       # optional
      why, and what it changes
    notes: |                             # optional: what to do after applying; printed by apply
      the caveat a user must not miss
    vllm: ">=0.6.3"                      # PEP 440 specifier of supported vLLM versions
    ops:
      - op: set-keyword                  # one of patchops.ops.OPS
        file: engine/arg_utils.py        # relative to the vllm package
        sites: 1                         # or ">=1", "<=2": how many sites it must match
        vllm: "<0.11"                    # optional: run this op only on these versions
        ...                              # the op's own parameters

This module must not import libcst, not even indirectly: the status path loads patchsets
and answers from hashes alone. Parameters are checked with the stdlib `ast`, which reads
the same expressions.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import yaml
from packaging.specifiers import SpecifierSet

from patchops.errors import PatchsetError
from patchops.ops import OPS, Op
from patchops.ops.base import check_param, version_in

ENV_VAR = "PATCHOPS_PATCHSETS"
# Editable install or source checkout: <repo>/patchsets next to src/.
SHIPPED_DIR = Path(__file__).resolve().parents[2] / "patchsets"
# Wheel install: the same files packaged as patchops/patchsets/ (pyproject.toml maps
# patchsets/ to that package); absent in a checkout.
PACKAGED_DIR = Path(__file__).resolve().parent / "patchsets"

_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_TOP_KEYS = {"name": True, "summary": True, "description": False, "notes": False, "vllm": True,
             "ops": True}
_SUFFIXES = (".yaml", ".yml")
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


@dataclass(frozen=True)
class Patchset:
    """A named, versioned list of rewrite ops, as read from `path`."""

    name: str
    summary: str
    description: str
    versions: SpecifierSet
    ops: Tuple[Op, ...]
    path: Path
    notes: str = ""     # what to do after applying it: apply and --dry-run print it
    text: str = field(default="", repr=False, compare=False)  # the YAML, kept by the store

    def applies_to(self, version: Optional[str]) -> bool:
        """Say whether vLLM `version` is in range; None (unknown) counts as in range."""
        return version_in(version, self.versions)

    @property
    def files(self) -> Tuple[str, ...]:
        """Return the files the ops target, relative to the vllm package, in op order."""
        return tuple(dict.fromkeys(op.file for op in self.ops))

    def ops_for(self, version: Optional[str]) -> Tuple[Tuple[int, Op], ...]:
        """Return (1-based op number, op) for the ops that run on `version`."""
        if not self.applies_to(version):
            return ()
        return tuple((i, op) for i, op in enumerate(self.ops, 1) if op.applies_to(version))

    def files_for(self, version: Optional[str]) -> Tuple[str, ...]:
        """Return the files the ops running on `version` target; read only these."""
        return tuple(dict.fromkeys(op.file for _, op in self.ops_for(version)))


def load_patchset(path: Union[str, Path]) -> Patchset:
    """Read and check one patchset file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise PatchsetError(f"{path}: cannot read patchset: {reason}") from None
    return _Loader(path, text).load()


def load_patchset_text(text: str, path: Path) -> Patchset:
    """Check a patchset's YAML `text` as if read from `path` (a copy the store kept)."""
    return _Loader(Path(path), text).load()


class UnknownPatchset(PatchsetError):
    """No patchset of that name in any folder searched."""


def patchset_dirs(dirs: Iterable[Union[str, Path]] = ()) -> Tuple[Path, ...]:
    """Return where patchsets are looked up, first match wins.

    In order: `dirs`, then $PATCHOPS_PATCHSETS (os.pathsep-separated), then the shipped
    folder. An entry may also be a single .yaml file.
    """
    found: List[Path] = [Path(d) for d in dirs]
    found += [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    found += [d for d in (SHIPPED_DIR, PACKAGED_DIR) if d.is_dir()]
    unique: Dict[Path, Path] = {}
    for entry in found:
        unique.setdefault(entry.resolve(), entry)
    return tuple(unique.values())


def patchset_files(dirs: Iterable[Union[str, Path]] = ()) -> Dict[str, Path]:
    """Return name -> file for every patchset found, without reading the files."""
    files: Dict[str, Path] = {}
    env = {Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()}
    for entry in patchset_dirs(dirs):
        if entry.is_file() and entry.suffix in _SUFFIXES:
            candidates = [entry]
        elif entry.is_dir():
            candidates = sorted(p for p in entry.iterdir() if p.suffix in _SUFFIXES and p.is_file())
        else:
            origin = f" (from ${ENV_VAR})" if entry in env else ""
            raise PatchsetError(f"{entry}: patchset folder{origin} does not exist")
        for path in candidates:
            files.setdefault(path.stem, path)
    return dict(sorted(files.items()))


def find_patchsets(dirs: Iterable[Union[str, Path]] = ()) -> Dict[str, Patchset]:
    """Load every patchset found in `dirs`, $PATCHOPS_PATCHSETS and the shipped folder."""
    return {name: load_patchset(path) for name, path in patchset_files(dirs).items()}


def get_patchset(name: str, dirs: Iterable[Union[str, Path]] = ()) -> Patchset:
    """Load the patchset called `name`, or the patchset file `name` if it is a path to one."""
    if name.endswith(_SUFFIXES) and Path(name).is_file():
        return load_patchset(name)
    dirs = tuple(dirs)
    files = patchset_files(dirs)
    if name in files:
        return load_patchset(files[name])
    hint = _closest(name, files)
    known = ", ".join(files) or "none"
    searched = ", ".join(str(d) for d in patchset_dirs(dirs)) or "nowhere"
    raise UnknownPatchset(f'unknown patchset "{name}"{hint}; known patchsets: {known}; '
                        f"searched: {searched}")


def _closest(word: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _kind_of(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return _YAML_TYPES.get(node.tag, "a value")


class _Loader:
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
                raise self.fail(key_node, f'unknown key "{key}" in a patchset{_closest(key, _TOP_KEYS)}; '
                                f"allowed keys: {', '.join(_TOP_KEYS)}")
        for key, required in _TOP_KEYS.items():
            if required and key not in top:
                raise self.fail(root, f'patchset is missing "{key}"')

        name_node = top["name"][1]
        name = self.string(name_node, "name")
        if not _NAME_RE.match(name):
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
            raise self.fail(kind_node, f'unknown op "{kind}"{_closest(kind, OPS)}; known ops: {known}')
        fields = {f.name: f for f in cls.param_fields()}
        for key, (key_node, _) in entries.items():
            if key != "op" and key not in fields:
                raise self.fail(key_node, f'unknown key "{key}" in {kind} op {index}'
                                f"{_closest(key, fields)}; allowed keys: op, {', '.join(fields)}")
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
