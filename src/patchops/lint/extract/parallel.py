"""What a vLLM copy does with a world size above the node's GPUs, and whether it needs Ray.

`ParallelConfig.__post_init__` picks the executor when none is given: up to 0.11 a world size
(TP x PP) above the visible GPU count switches to Ray, and raises "Unable to load Ray" when Ray
is missing; from 0.12 the same branch raises outright ("Tensor parallel size (8) cannot be
larger than ...", 0.15+: "World size (8) is larger than ..."). Read from the copy: the action
of that branch, and whether the wheel's metadata makes Ray a dependency (0.6.3-0.15 do).

Also whether a `--distributed-executor-backend` name outside the built-in ones is taken for
the import path of an Executor class (`resolve_obj_by_qualname` in `Executor.get_class`, 0.2x+:
a bare `bogus` fails with "not enough values to unpack") rather than refused by argparse.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, Optional

from patchops.lint.extract.source_tree import Source

PARALLEL_FILES = ("vllm/config/parallel.py", "vllm/config.py", "vllm/config/__init__.py")
EXECUTOR_FILES = ("vllm/v1/executor/abstract.py", "vllm/executor/executor_base.py")


def parallel_facts(src: Source) -> Dict[str, Any]:
    """Return {"over_gpus": "ray" | "refuse", "over_gpus_message"?, "ray_required": bool}."""
    out: Dict[str, Any] = {}
    for rel in PARALLEL_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ClassDef) and node.name == "ParallelConfig":
                branch = _over_gpus_branch(node)
                if branch is not None:
                    out.update(branch)
                    break
        if out:
            break
    required = _ray_required(src)
    if required is not None:
        out["ray_required"] = required
    if _executor_by_qualname(src):
        out["executor_by_qualname"] = True
    return out


def _executor_by_qualname(src: Source) -> bool:
    """Whether `Executor.get_class` imports a string backend it does not know by name."""
    for rel in EXECUTOR_FILES:
        mod = src.module_file(rel)
        for node in ast.walk(mod.tree) if mod is not None else ():
            if isinstance(node, ast.FunctionDef) and node.name == "get_class" and any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "resolve_obj_by_qualname"
                    and any(isinstance(a, ast.Name) and "executor_backend" in a.id for a in n.args)
                    for n in ast.walk(node)):
                return True
    return False


def _over_gpus_branch(cls: ast.ClassDef) -> Optional[Dict[str, Any]]:
    for node in ast.walk(cls):
        if not (isinstance(node, ast.If) and _compares_device_count(node.test)):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.Raise):
                message = _message(stmt)
                return {"over_gpus": "refuse", **({"over_gpus_message": message} if message else {})}
            if isinstance(stmt, ast.If) and any(isinstance(s, ast.Raise) for s in stmt.body) and \
                    "ray" in ast.dump(stmt.test).lower():
                return {"over_gpus": "ray"}
    return None


def _compares_device_count(test: ast.AST) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt) \
                and isinstance(node.comparators[0], ast.Attribute) \
                and node.comparators[0].attr == "world_size" and isinstance(node.left, ast.Call):
            return True
    return False


def _message(stmt: ast.Raise) -> Optional[str]:
    """Return the raised f-string with its interpolations as `{}`."""
    exc = stmt.exc
    if not (isinstance(exc, ast.Call) and exc.args and isinstance(exc.args[0], ast.JoinedStr)):
        return None
    return "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in exc.args[0].values)


def _ray_required(src: Source) -> Optional[bool]:
    """Whether the wheel's METADATA lists ray as an unconditional dependency."""
    for info in src.names(".", "vllm-*.dist-info"):
        rel = f"{info}/METADATA"
        if src.stat(rel) is None:
            continue
        try:
            text = (src.site / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        for line in text.splitlines():
            match = re.match(r"Requires-Dist:\s*ray\b(.*)", line, re.I)
            if match and "extra ==" not in match.group(1):
                return True
        return False
    return None
