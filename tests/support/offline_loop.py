"""The fast loop's contract: `pytest -m "not vllm"` downloads and unpacks no vLLM wheel.

A test needs the `vllm` marker when it reads real vLLM files. Rather than trust hand-written
markers, collection derives it: a test is `vllm` when its own code, a fixture it uses or a
module-level helper either calls (followed a few calls deep) names the wheel cache. Under the
fast loop the wheel cache raises, so a test the derivation misses fails loudly instead of
quietly fetching 300 MB.
"""

from __future__ import annotations

import inspect
import os
import types
from pathlib import Path
from typing import Callable, Iterable, Optional, Set

# Names whose use means "this code reads a real vLLM tree or wheel".
WHEEL_NAMES = frozenset({"wheelcache", "vllm_site", "corex_tree", "site_packages",
                         "copy_site_packages", "transformers_site", "vllm_wheel", "wheel_path"})
FOLLOW_DEPTH = 4
SWITCH = "PATCHOPS_TEST_OFFLINE"
TESTS_DIR = Path(__file__).resolve().parents[1]
DEVTOOLS_DIR = TESTS_DIR.parent / "devtools"   # the dev helpers beside src/, followed as the suite's own


class WheelsForbidden(RuntimeError):
    """Raised by the wheel cache in the fast loop."""


def wanted(markexpr: Optional[str]) -> bool:
    """Return whether this run is the fast loop: `-m "not vllm"` or the environment switch."""
    if os.environ.get(SWITCH) == "1":
        return True
    return "not vllm" in " ".join((markexpr or "").split())


def forbid_wheels() -> None:
    """Make every way to a vLLM wheel or tree raise WheelsForbidden, in this process and in
    subprocesses that import the wheel cache (the switch is inherited)."""
    from patchops.host import pypi
    from tests.support import wheelcache

    os.environ[SWITCH] = "1"

    def refuse(*args, **kwargs):
        raise WheelsForbidden("this test reads a real vLLM wheel, which the fast loop "
                              "(-m 'not vllm') forbids: it should be marked vllm; "
                              "tests/support/offline_loop.py derives the marker")

    for module, names in ((pypi, ("wheel", "vllm_wheel")),
                          (wheelcache, ("site_packages", "transformers_site", "wheel_path",
                                        "copy_site_packages"))):
        for name in names:
            setattr(module, name, refuse)


def reads_wheels(item) -> bool:
    """Return whether a collected test reaches the wheel cache (see the module docstring)."""
    functions = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        for name in item.fixturenames:
            if name in WHEEL_NAMES:
                return True
            functions += [d.func for d in info.name2fixturedefs.get(name, ())]
    seen: Set[int] = set()
    return any(_names_wheels(f, FOLLOW_DEPTH, seen) for f in functions if f is not None)


def _names_wheels(func: Callable, depth: int, seen: Set[int]) -> bool:
    """Return whether `func`'s code, or a function it calls by a global name, names the cache."""
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None or id(code) in seen:
        return False
    seen.add(id(code))
    names = set(_all_names(code))
    if names & WHEEL_NAMES:
        return True
    if depth == 0:
        return False
    module_globals = getattr(func, "__globals__", {})
    for name in names:
        callee = module_globals.get(name)
        if isinstance(callee, types.FunctionType) and _ours(callee):
            if _names_wheels(callee, depth - 1, seen):
                return True
        elif isinstance(callee, type) and _ours(callee):
            for member in vars(callee).values():
                if isinstance(member, types.FunctionType) and _names_wheels(member, depth - 1, seen):
                    return True
    return False


def _all_names(code: types.CodeType) -> Iterable[str]:
    """Every global, attribute and free name `code` and its nested functions use."""
    yield from code.co_names
    yield from code.co_freevars
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _all_names(const)


def _ours(obj) -> bool:
    """Only the suite's own code is followed (files under tests/ and devtools/), not the library's."""
    try:
        path = Path(inspect.getfile(obj)).resolve()
        return path.is_relative_to(TESTS_DIR) or path.is_relative_to(DEVTOOLS_DIR)
    except (TypeError, OSError):
        return False
