"""List the folders a Python process would search for vLLM, in import order, each with its origin.

The interpreter's import path (this one's, or another interpreter's printed sys.path), the
source checkouts setuptools editable finders map `vllm` to, then vendor roots and the folders
their .pth files add. Reads a handful of small files; never walks a tree.
"""

from __future__ import annotations

import ast
import os
import sys
from typing import Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from patchops.core.errors import LocateError
from patchops.host.installed_version import assigned_value, parse_file

PathLike = Union[str, "os.PathLike[str]"]

# Where Iluvatar CoreX images install vLLM; lib64 is a copy on some images, a symlink on others.
DEFAULT_ROOTS: Tuple[str, ...] = (
    "/usr/local/corex/lib/python3/dist-packages",
    "/usr/local/corex/lib64/python3/dist-packages",
)
ROOTS_ENV = "PATCHOPS_ROOTS"
SYS_PATH_TIMEOUT = 20.0
SYS_PATH_CODE = "import json,sys; print(json.dumps(sys.path))"


class Entry:
    """One folder searched: where it came from and whether `import` looks there."""

    __slots__ = ("path", "origin", "importable")

    def __init__(self, path: str, origin: str, importable: bool):
        self.path = path              # absolute, normalised, symlinks kept
        self.origin = origin
        self.importable = importable  # on the import path, not only under a vendor root


def search_entries(python: Optional[str], roots: Sequence[PathLike], env: Mapping[str, str],
                   default_roots: Sequence[PathLike], cwd: str) -> List[Entry]:
    """Return every folder searched, in order: import path, editable installs, vendor roots."""
    path = _import_path(python, env, cwd)
    return _unique(path + _editable_entries(path) + _root_entries(roots, env, default_roots, cwd))


# --- the import path -----------------------------------------------------------------------


def _import_path(python: Optional[str], env: Mapping[str, str], cwd: str) -> List[Entry]:
    """Return the interpreter's import path in order, each entry labelled with its origin."""
    pythonpath = _pythonpath(env, cwd)
    if python is None:
        current = [str(item) for item in sys.path if isinstance(item, (str, os.PathLike))]
        seen = {_absolute(item, cwd) for item in current}
        # A real interpreter puts PYTHONPATH right after the script folder; this one was
        # started with another environment, so put the wanted PYTHONPATH first.
        raw = [item for item in pythonpath if item not in seen] + current
    else:
        raw = _interpreter_sys_path(python, env)
    wanted = set(pythonpath)
    return [Entry(_absolute(item, cwd), _path_origin(item, cwd, wanted), True) for item in raw]


def _pythonpath(env: Mapping[str, str], cwd: str) -> List[str]:
    """Return PYTHONPATH from `env` as absolute paths; empty parts are skipped, as CPython does."""
    return [_absolute(part, cwd) for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]


def _path_origin(item: str, cwd: str, pythonpath: set) -> str:
    if item == "":
        return "cwd"
    return "PYTHONPATH" if _absolute(item, cwd) in pythonpath else "sys.path"


def _absolute(item: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, item))


def _interpreter_sys_path(python: str, env: Mapping[str, str]) -> List[str]:
    """Run `python` with `env` and return the sys.path it prints."""
    import subprocess  # only this path needs it; keep `patchops` startup lean

    try:
        done = subprocess.run(
            [python, "-c", SYS_PATH_CODE], env=dict(env), capture_output=True,
            text=True, errors="replace", timeout=SYS_PATH_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise LocateError(
            f'python "{python}" did not print its sys.path within {SYS_PATH_TIMEOUT:g} s; '
            "check that it starts on its own, or pass another interpreter"
        ) from None
    except OSError as exc:
        raise LocateError(
            f'could not run python "{python}" to read its sys.path: {exc.strerror or exc}; '
            "pass the interpreter that runs vLLM, for example /opt/venv/bin/python"
        ) from None
    if done.returncode != 0:
        raise LocateError(
            f'python "{python}" exited with code {done.returncode} while printing its sys.path: '
            f"{_last_line(done.stderr) or 'no error output'}; pass the interpreter that runs vLLM"
        )
    return _parse_sys_path(python, done.stdout)


def _parse_sys_path(python: str, stdout: str) -> List[str]:
    """Return the JSON list on the last line of `stdout` (a sitecustomize may print before it)."""
    import json

    line = _last_line(stdout)
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        shown = line if len(line) <= 80 else line[:77] + "..."
        raise LocateError(
            f'python "{python}" printed "{shown}" instead of its sys.path as a JSON list; '
            "pass a Python interpreter, for example /opt/venv/bin/python"
        )
    return value


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --- editable installs ----------------------------------------------------------------------


def _editable_entries(path: List[Entry]) -> List[Entry]:
    """Return source checkouts that setuptools editable finders map `vllm` to.

    `pip install -e` of vLLM writes `__editable___vllm_<version>_finder.py` plus a .pth that
    installs it on sys.meta_path *after* the path finder, so such a copy is imported only
    when no folder on the path holds vllm/ (setuptools, command/editable_wheel.py).
    """
    found = []
    for entry in path:
        if entry.origin == "PYTHONPATH":  # Python runs .pth files only in site dirs
            continue
        for finder in _editable_finders(entry.path):
            package = _editable_mapping(finder)
            if package is not None and os.path.basename(package) == "vllm":
                origin = f"editable install {finder}"
                found.append(Entry(os.path.dirname(package), origin, True))
    return found


def _editable_finders(site_dir: str) -> List[str]:
    try:
        names = os.listdir(site_dir)
    except OSError:
        return []
    # The finder runs only if its .pth (`import __editable___vllm_..._finder; ...`) is here.
    if not any(name.startswith("__editable__.") and name.endswith(".pth") for name in names):
        return []
    return sorted(
        os.path.join(site_dir, name) for name in names
        if name.startswith("__editable___vllm") and name.endswith("_finder.py")
    )


def _editable_mapping(finder: str) -> Optional[str]:
    """Return MAPPING["vllm"] from a setuptools editable finder, None if absent.

    setuptools writes MAPPING as a dict's repr, so a finder without the quoted key `'vllm'`
    (another distribution whose name starts with vllm, such as vllm-patchops itself) is
    skipped without parsing it.
    """
    try:
        with open(finder, "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    if b"'vllm'" not in text and b'"vllm"' not in text:
        return None
    tree = parse_file(finder)
    for node in tree.body if tree is not None else ():
        value = assigned_value(node, {"MAPPING"})
        if value is None:
            continue
        try:
            mapping = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return None
        package = mapping.get("vllm") if isinstance(mapping, dict) else None
        return os.path.normpath(package) if isinstance(package, str) else None
    return None


# --- vendor roots ---------------------------------------------------------------------------


def _root_entries(
    roots: Sequence[PathLike], env: Mapping[str, str], default_roots: Sequence[PathLike], cwd: str
) -> List[Entry]:
    """Return vendor roots that exist and the folders their .pth files add."""
    from_env = [part for part in env.get(ROOTS_ENV, "").split(os.pathsep) if part]
    wanted = [(root, True) for root in roots]
    wanted += [(root, False) for root in from_env]
    wanted += [(root, False) for root in default_roots]
    entries = []
    for root, required in wanted:
        path = _absolute(os.fspath(root), cwd)
        path = site_dir_of(path) or path
        if not os.path.isdir(path):
            if required:
                raise LocateError(
                    f'root "{root}" is not a folder; pass a site-packages folder that holds vllm/'
                )
            continue
        entries.append(Entry(path, f"root {path}", False))
        for pth, added in _pth_dirs(path):
            entries.append(Entry(added, f"{pth} in root {path}", False))
    return entries


def _pth_dirs(site_dir: str) -> Iterator[Tuple[str, str]]:
    """Yield (pth file name, folder) for each existing folder a .pth file in `site_dir` adds.

    Mirrors site.addpackage(): files in sorted order, `#` comments and blank lines skipped,
    `import` lines (code to run) skipped, paths relative to the site dir.
    """
    try:
        names = sorted(os.listdir(site_dir))
    except OSError:
        return
    for name in names:
        if not name.endswith(".pth") or name.startswith("."):
            continue
        path = os.path.join(site_dir, name)
        try:
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if not line.strip() or line.startswith("#") or line.startswith(("import ", "import\t")):
                continue
            folder = os.path.normpath(os.path.join(site_dir, line.rstrip()))
            if os.path.isdir(folder):
                yield name, folder


# --- the search, in order ------------------------------------------------------------------


def _unique(entries: List[Entry]) -> List[Entry]:
    """Drop repeated (path, origin) pairs, keeping the first; CPython tolerates duplicates too."""
    seen = set()
    kept = []
    for entry in entries:
        if (entry.path, entry.origin) not in seen:
            seen.add((entry.path, entry.origin))
            kept.append(entry)
    return kept


def site_dir_of(path: str) -> Optional[str]:
    """Return the folder holding vllm/__init__.py for a site dir or a vllm/ folder, else None."""
    if os.path.isfile(os.path.join(path, "vllm", "__init__.py")):
        return path
    if os.path.basename(path) == "vllm" and os.path.isfile(os.path.join(path, "__init__.py")):
        return os.path.dirname(path)
    return None


def no_vllm_message(given: str) -> str:
    hint = "pass the site-packages folder that holds vllm/, or the vllm/ folder itself"
    if not os.path.exists(given):
        return f'vLLM path "{given}" does not exist; {hint}'
    package = given if os.path.basename(given) == "vllm" else os.path.join(given, "vllm")
    if os.path.isdir(package):
        return (f'"{package}" has no __init__.py, so Python would not import it as vLLM; '
                f"{hint}")
    return f'no vLLM in "{given}": there is no "{package}" folder; {hint}'
