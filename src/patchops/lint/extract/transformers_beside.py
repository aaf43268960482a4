"""The transformers installed beside a vLLM copy: its version and the model types it knows, read with `ast`.

vLLM's `get_config` hands every config.json whose `model_type` has no config class of vLLM's
own (`_CONFIG_REGISTRY`, read in architectures.py) to transformers' `AutoConfig`, which
refuses a model type missing from its `CONFIG_MAPPING_NAMES`: "The checkpoint you are trying
to load has model type `gpt_oss` but Transformers does not recognize this architecture."
That happens to a checkpoint newer than the transformers a release was installed with (gpt-oss
on vLLM 0.8.5's transformers 4.51). transformers 4.x spells the mapping in
models/auto/configuration_auto.py; 5.x generates it into models/auto/auto_mappings.py and adds
to it in configuration_auto.py.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Sequence

from patchops.lint.extract.source_tree import Source

VERSION_FILE = "transformers/__init__.py"
MAPPING_FILES = ("transformers/models/auto/auto_mappings.py", "transformers/models/auto/configuration_auto.py")
MAPPING = "CONFIG_MAPPING_NAMES"


def transformers_beside(src: Source, extra_paths: Sequence[Path] = ()) -> Dict[str, Any]:
    """Return the facts of the transformers Python imports beside the copy: the copy's own site
    dir first, then the further import roots in their order."""
    for root in [src, *(Source(Path(p)) for p in extra_paths)]:
        found = transformers_facts(root)
        if found:
            return found
    return {}


def transformers_facts(src: Source) -> Dict[str, Any]:
    """Return {"version": "4.51.3", "model_types": [...]}; {} when no readable transformers is there."""
    version = _version(src)
    types = sorted({t for rel in MAPPING_FILES for t in _mapped_types(src, rel)})
    if version is None or not types:
        return {}
    return {"version": version, "model_types": types}


def _version(src: Source) -> Optional[str]:
    mod = src.module_file(VERSION_FILE)
    for node in mod.tree.body if mod is not None else ():
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__"
                                                 for t in node.targets)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    return None


def _mapped_types(src: Source, rel: str) -> Iterator[str]:
    """The string keys a module gives CONFIG_MAPPING_NAMES: its assignment (an OrderedDict of
    pairs or of `**{...}`) and its `.update({...})` calls."""
    mod = src.module_file(rel)
    for node in mod.tree.body if mod is not None else ():
        value = None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == MAPPING for t in targets):
                value = node.value
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "update"
              and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == MAPPING):
            value = node.value
        if value is not None:
            yield from _keys(value)


def _keys(node: ast.AST) -> Iterator[str]:
    """String keys of the dict literals and the first items of the (key, value) pairs under `node`."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Dict):
            yield from (k.value for k in sub.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
        elif (isinstance(sub, ast.Tuple) and len(sub.elts) == 2 and isinstance(sub.elts[0], ast.Constant)
              and isinstance(sub.elts[0].value, str)):
            yield sub.elts[0].value
