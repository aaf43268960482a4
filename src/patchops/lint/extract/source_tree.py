"""Parse the modules of one vLLM copy on demand and resolve names through its imports.

The first layer of the static reading: which file defines a name, followed across
`from ... import` inside the `vllm` package only (never torch or transformers). What a
resolved expression evaluates to is static_eval's job.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

MAX_DEPTH = 25  # resolution and evaluation give up past this many steps (a cycle, a fork's maze)


@dataclass
class Module:
    name: str
    rel: str
    tree: ast.Module
    symbols: Dict[str, tuple] = field(default_factory=dict)


class Source:
    """Parse vLLM modules of one site directory on demand and remember every file consulted."""

    def __init__(self, site_dir: Path):
        self.site = Path(site_dir)
        self.consulted: Set[str] = set()  # files read or looked for: the facts cache hashes them
        self.listings: Dict[str, Tuple[str, ...]] = {}  # "dir/pattern" -> the names it matched
        self.notes: List[str] = []
        self._modules: Dict[str, Optional[Module]] = {}

    def stat(self, rel: str) -> Optional[os.stat_result]:
        """Stat `rel` under the site dir and record it as an input of the facts."""
        self.consulted.add(rel)
        try:
            return os.stat(self.site / rel)
        except OSError:
            return None

    def exists(self, rel: str) -> bool:
        return self.stat(rel) is not None

    def names(self, rel: str, pattern: str) -> Tuple[str, ...]:
        """Return the names in folder `rel` matching `pattern`, sorted; record the listing.

        A file a fork adds to a folder read whole (vllm/platforms/) changes the facts as surely
        as an edit: the facts cache hashes the folder, facts/vouch.py the matched names.
        """
        self.consulted.add(rel)
        try:
            found = tuple(sorted(fnmatch.filter(os.listdir(self.site / rel), pattern)))
        except OSError:
            found = ()
        self.listings[f"{rel}/{pattern}"] = found
        return found

    def module_file(self, rel: str) -> Optional[Module]:
        """Return the parsed module at `rel`, or None if absent or unparsable (noted)."""
        name = rel[:-3].replace("/", ".")
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        if rel in self._modules:
            return self._modules[rel]
        mod = None
        if self.stat(rel) is not None:
            try:
                text = (self.site / rel).read_text(encoding="utf-8", errors="replace")
                tree = ast.parse(text, filename=rel)
            except (SyntaxError, ValueError, OSError) as exc:
                self.notes.append(f"{rel}: skipped, cannot parse ({exc.__class__.__name__}: {exc})")
            else:
                mod = Module(name=name, rel=rel, tree=tree)
                mod.symbols = _collect_symbols(tree, name, rel.endswith("__init__.py"))
        self._modules[rel] = mod
        return mod

    def module(self, dotted: str) -> Optional[Module]:
        """Return the parsed `vllm.*` module `dotted` (file or package), else None."""
        if not (dotted == "vllm" or dotted.startswith("vllm.")):
            return None  # never follow imports outside vLLM (torch, transformers, ...)
        key = "mod:" + dotted
        if key in self._modules:
            return self._modules[key]
        base = dotted.replace(".", "/")
        mod = None
        for rel in (base + ".py", base + "/__init__.py"):
            mod = self.module_file(rel)
            if mod is not None:
                break
        self._modules[key] = mod
        return mod

    # -- symbol resolution ----------------------------------------------------------------

    def resolve(self, mod: Module, name: str, depth: int = 0) -> Optional[tuple]:
        """Resolve `name` in `mod` to ("class", mod, ClassDef) | ("value", mod, expr) |
        ("module", mod) | ("func", mod, FunctionDef) | ("external", qualname) | None."""
        if depth > MAX_DEPTH:
            return None
        entry = mod.symbols.get(name)
        if entry is None:
            return None
        kind = entry[0]
        if kind in ("class", "func"):
            return (kind, mod, entry[1])
        if kind == "value":
            return ("value", mod, entry[1])
        if kind == "module":
            target = self.module(entry[1])
            return ("module", target) if target else ("external", entry[1])
        if kind == "from":
            source_name, attr = entry[1], entry[2]
            target = self.module(source_name)
            if target is not None and attr in target.symbols:
                return self.resolve(target, attr, depth + 1)
            sub = self.module(source_name + "." + attr)
            if sub is not None:
                return ("module", sub)
            return ("external", source_name + "." + attr)
        return None

    def entity(self, expr: ast.AST, mod: Module, depth: int = 0) -> Optional[tuple]:
        """Resolve a Name or dotted Attribute expression to an entity (see `resolve`)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            return self.resolve(mod, expr.id, depth + 1)
        if isinstance(expr, ast.Attribute):
            owner = self.entity(expr.value, mod, depth + 1)
            if owner is None:
                return None
            if owner[0] == "module":
                if expr.attr in owner[1].symbols:
                    return self.resolve(owner[1], expr.attr, depth + 1)
                sub = self.module(owner[1].name + "." + expr.attr)
                return ("module", sub) if sub else None
            if owner[0] == "external":
                return ("external", owner[1] + "." + expr.attr)
            if owner[0] == "class":
                return ("attr", owner[1], owner[2], expr.attr)
        return None

    def find_class(self, mod: Module, name: str) -> Optional[Tuple[Module, ast.ClassDef]]:
        found = self.resolve(mod, name)
        if found and found[0] == "class":
            return found[1], found[2]
        return None


def _collect_symbols(tree: ast.Module, modname: str, is_package: bool) -> Dict[str, tuple]:
    """Map top-level names to their definitions; `if`/`try` bodies win over their fallbacks."""
    symbols: Dict[str, tuple] = {}
    package = modname if is_package else modname.rpartition(".")[0]

    def absolute(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = package.split(".")
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts)
        return f"{base}.{node.module}" if node.module else base

    def visit(body: Sequence[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                symbols[node.name] = ("class", node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                symbols[node.name] = ("func", node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        symbols[target.id] = ("value", node.value)
            elif isinstance(node, ast.AnnAssign):
                if isinstance(node.target, ast.Name) and node.value is not None:
                    symbols[node.target.id] = ("value", node.value)
            elif isinstance(node, ast.ImportFrom):
                source = absolute(node)
                for alias in node.names:
                    if alias.name != "*":
                        symbols[alias.asname or alias.name] = ("from", source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        symbols[alias.asname] = ("module", alias.name)
                    else:
                        head = alias.name.split(".")[0]
                        symbols.setdefault(head, ("module", head))
            elif isinstance(node, ast.If) and last_name(node.test) == "TYPE_CHECKING":
                # At run time the `else:` is what runs (0.10.x config: `QuantizationMethods = Any`
                # rebinds the import above it, so argparse lists no choices).
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.If):
                visit(node.orelse)
                visit(node.body)
            elif isinstance(node, ast.Try):
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.body)
            elif type(node).__name__ == "TypeAlias":  # `type X = ...` (Python 3.12 syntax)
                name = getattr(node, "name", None)
                if isinstance(name, ast.Name):
                    symbols[name.id] = ("value", getattr(node, "value"))

    visit(tree.body)
    return symbols


def last_name(expr: ast.AST) -> Optional[str]:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Call):
        return last_name(expr.func)
    return None


def str_const(expr: Optional[ast.AST]) -> Optional[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    return None
