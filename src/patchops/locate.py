"""Find every vLLM copy a Python process could import, which one wins, and its version.

Vendor images often hold several copies (CoreX ships one in `lib` and one in `lib64`, pip
adds another to site-packages), and patching the one that is not imported changes nothing.
Runs on every command, so it never imports vLLM, uses only the standard library and reads
a handful of small files; it never walks a tree.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from patchops.errors import LocateError

PathLike = Union[str, "os.PathLike[str]"]

# Where Iluvatar CoreX images install vLLM; lib64 is a copy on some images, a symlink on others.
DEFAULT_ROOTS: Tuple[str, ...] = (
    "/usr/local/corex/lib/python3/dist-packages",
    "/usr/local/corex/lib64/python3/dist-packages",
)
ROOTS_ENV = "PATCHOPS_ROOTS"
SYS_PATH_TIMEOUT = 20.0
SYS_PATH_CODE = "import json,sys; print(json.dumps(sys.path))"

VERSION_FILE = "vllm/_version.py"
UNKNOWN = "unknown"
EXPLICIT = "explicit path"


@dataclass(frozen=True)
class VllmCopy:
    """One vLLM package on disk, however many spellings lead to it."""

    site_dir: Path              # folder holding vllm/: first spelling found, absolute, unresolved
    package_dir: Path           # site_dir / "vllm"
    version: Optional[str]      # "0.8.5", None if unknown
    version_source: str         # "vllm/_version.py", "vllm-0.8.5.dist-info/METADATA" or "unknown"
    found_via: Tuple[str, ...]  # "PYTHONPATH", "sys.path", "cwd", "root DIR", "x.pth in root DIR"
    aliases: Tuple[Path, ...]   # other site dirs that reach the same files
    wins: bool                  # the copy `import vllm` loads
    importable: bool = True     # on the import path (False: found only under a vendor root)


@dataclass(frozen=True)
class Location:
    """Every vLLM copy found for one interpreter, in import order."""

    python: str                               # interpreter whose path was searched
    search_path: Tuple[Tuple[str, str], ...]  # (path, origin) in import order, then roots
    copies: Tuple[VllmCopy, ...]              # in import order; root-only copies last

    @property
    def winner(self) -> Optional[VllmCopy]:
        """Return the copy `import vllm` loads, None if no copy is on the import path."""
        return next((copy for copy in self.copies if copy.wins), None)


class _Entry:
    """One folder searched: where it came from and whether `import` looks there."""

    __slots__ = ("path", "origin", "importable")

    def __init__(self, path: str, origin: str, importable: bool):
        self.path = path              # absolute, normalised, symlinks kept
        self.origin = origin
        self.importable = importable  # on the import path, not only under a vendor root


def locate(
    *,
    python: Optional[str] = None,
    roots: Sequence[PathLike] = (),
    env: Optional[Mapping[str, str]] = None,
    default_roots: Sequence[PathLike] = DEFAULT_ROOTS,
) -> Location:
    """Find the vLLM copies `python` (default: this interpreter) could import, plus vendor roots.

    `env` is the environment vLLM will run with (default: os.environ): its PYTHONPATH and
    PATCHOPS_ROOTS count. `roots` are extra site dirs that must exist (`--root DIR`);
    `default_roots` and PATCHOPS_ROOTS entries that do not exist are skipped.
    """
    env = os.environ if env is None else env
    cwd = os.getcwd()
    path = _import_path(python, env, cwd)
    entries = path + _editable_entries(path) + _root_entries(roots, env, default_roots, cwd)
    entries = _unique(entries)
    return Location(
        python=sys.executable if python is None else python,
        search_path=tuple((entry.path, entry.origin) for entry in entries),
        copies=_copies(entries),
    )


def locate_site(site_dir: PathLike) -> VllmCopy:
    """Describe the vLLM copy in one given folder: a site dir holding vllm/, or vllm/ itself."""
    given = os.path.abspath(os.fspath(site_dir))
    found = _site_dir_of(given)
    if found is None:
        raise LocateError(_no_vllm_message(given))
    version, source = read_version(Path(found))
    return VllmCopy(
        site_dir=Path(found),
        package_dir=Path(found, "vllm"),
        version=version,
        version_source=source,
        found_via=(EXPLICIT,),
        aliases=(),
        # Whether it is imported depends on an interpreter this call does not ask; see locate().
        wins=False,
    )


def read_version(site_dir: PathLike) -> Tuple[Optional[str], str]:
    """Return (version, where it was read) for the vLLM in `site_dir`, without importing it."""
    site_dir = Path(site_dir)
    version = _version_from_module(site_dir / VERSION_FILE)
    if version is not None:
        return version, VERSION_FILE
    found = _version_from_metadata(site_dir)
    if found is not None:
        return found
    return None, UNKNOWN


# --- the import path -----------------------------------------------------------------------


def _import_path(python: Optional[str], env: Mapping[str, str], cwd: str) -> List[_Entry]:
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
    return [_Entry(_absolute(item, cwd), _path_origin(item, cwd, wanted), True) for item in raw]


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


def _editable_entries(path: List[_Entry]) -> List[_Entry]:
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
                found.append(_Entry(os.path.dirname(package), origin, True))
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
    tree = _parse(finder)
    for node in tree.body if tree is not None else ():
        value = _assigned(node, {"MAPPING"})
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
) -> List[_Entry]:
    """Return vendor roots that exist and the folders their .pth files add."""
    from_env = [part for part in env.get(ROOTS_ENV, "").split(os.pathsep) if part]
    wanted = [(root, True) for root in roots]
    wanted += [(root, False) for root in from_env]
    wanted += [(root, False) for root in default_roots]
    entries = []
    for root, required in wanted:
        path = _absolute(os.fspath(root), cwd)
        path = _site_dir_of(path) or path
        if not os.path.isdir(path):
            if required:
                raise LocateError(
                    f'root "{root}" is not a folder; pass a site-packages folder that holds vllm/'
                )
            continue
        entries.append(_Entry(path, f"root {path}", False))
        for pth, added in _pth_dirs(path):
            entries.append(_Entry(added, f"{pth} in root {path}", False))
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


# --- copies and identity --------------------------------------------------------------------


def _unique(entries: List[_Entry]) -> List[_Entry]:
    """Drop repeated (path, origin) pairs, keeping the first; CPython tolerates duplicates too."""
    seen = set()
    kept = []
    for entry in entries:
        if (entry.path, entry.origin) not in seen:
            seen.add((entry.path, entry.origin))
            kept.append(entry)
    return kept


class _Group:
    """The spellings found so far for one package directory."""

    def __init__(self, site_dir: str):
        self.site_dir = site_dir
        self.aliases: List[str] = []
        self.origins: List[str] = []
        self.importable = False

    def add(self, entry: _Entry) -> None:
        if entry.path != self.site_dir and entry.path not in self.aliases:
            self.aliases.append(entry.path)
        if entry.origin not in self.origins:
            self.origins.append(entry.origin)
        self.importable = self.importable or entry.importable


def _copies(entries: List[_Entry]) -> Tuple[VllmCopy, ...]:
    """Group entries holding vllm/ by the files they reach, so no copy is listed twice.

    Two spellings are the same copy when vllm/ has the same (st_dev, st_ino) (symlinks, bind
    mounts) or the same realpath.
    """
    groups: List[_Group] = []
    by_key: Dict[object, _Group] = {}
    for entry in entries:
        package = os.path.join(entry.path, "vllm")
        if not os.path.isfile(os.path.join(package, "__init__.py")):
            continue
        try:
            stat = os.stat(package)
        except OSError:
            continue
        keys = [("inode", stat.st_dev, stat.st_ino), ("realpath", os.path.realpath(package))]
        group = next((by_key[key] for key in keys if key in by_key), None)
        if group is None:
            group = _Group(entry.path)
            groups.append(group)
        for key in keys:
            by_key.setdefault(key, group)
        group.add(entry)
    # Root-only copies go last; within each kind, keep the order they were found in.
    groups.sort(key=lambda group: not group.importable)
    winner = groups[0] if groups and groups[0].importable else None
    return tuple(_copy(group, group is winner) for group in groups)


def _copy(group: _Group, wins: bool) -> VllmCopy:
    version, source = read_version(Path(group.site_dir))
    return VllmCopy(
        site_dir=Path(group.site_dir),
        package_dir=Path(group.site_dir, "vllm"),
        version=version,
        version_source=source,
        found_via=tuple(group.origins),
        aliases=tuple(Path(alias) for alias in group.aliases),
        wins=wins,
        importable=group.importable,
    )


def _site_dir_of(path: str) -> Optional[str]:
    """Return the folder holding vllm/__init__.py for a site dir or a vllm/ folder, else None."""
    if os.path.isfile(os.path.join(path, "vllm", "__init__.py")):
        return path
    if os.path.basename(path) == "vllm" and os.path.isfile(os.path.join(path, "__init__.py")):
        return os.path.dirname(path)
    return None


def _no_vllm_message(given: str) -> str:
    hint = "pass the site-packages folder that holds vllm/, or the vllm/ folder itself"
    if not os.path.exists(given):
        return f'vLLM path "{given}" does not exist; {hint}'
    package = given if os.path.basename(given) == "vllm" else os.path.join(given, "vllm")
    if os.path.isdir(package):
        return (f'"{package}" has no __init__.py, so Python would not import it as vLLM; '
                f"{hint}")
    return f'no vLLM in "{given}": there is no "{package}" folder; {hint}'


# --- versions -------------------------------------------------------------------------------


def _version_from_module(path: Path) -> Optional[str]:
    """Return the string assigned to __version__ or version in a setuptools-scm _version.py.

    The string, not version_tuple: 0.6.3.post1's tuple is (0, 6, 3).
    """
    tree = _parse(str(path))
    for node in tree.body if tree is not None else ():
        value = _assigned(node, {"__version__", "version"})
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def _parse(path: str) -> Optional[ast.Module]:
    try:
        with open(path, "rb") as handle:
            return ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def _assigned(node: ast.stmt, names: set) -> Optional[ast.expr]:
    """Return the value a top-level `a = b = value` or `a: T = value` gives one of `names`."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return None
    if any(isinstance(target, ast.Name) and target.id in names for target in targets):
        return node.value
    return None


def _version_from_metadata(site_dir: Path) -> Optional[Tuple[str, str]]:
    """Return (version, source) from the newest vllm-*.dist-info/METADATA in `site_dir`."""
    try:
        names = os.listdir(site_dir)
    except OSError:
        return None
    found = []
    for name in names:
        if not (name.lower().startswith("vllm-") and name.endswith(".dist-info")):
            continue
        metadata = site_dir / name / "METADATA"
        headers = _headers(metadata)
        # `vllm-flash-attn-2.6.1.dist-info` matches the glob but is another distribution.
        if _normalise(headers.get("name", "")) == "vllm" and headers.get("version"):
            found.append((metadata.stat().st_mtime, name, headers["version"]))
    if not found:
        return None
    # Several only after an interrupted upgrade; pip wrote the newest last.
    _, name, version = max(found)
    return version, f"{name}/METADATA"


def _headers(path: Path) -> Dict[str, str]:
    """Return the lower-cased headers of a METADATA file, stopping at the description."""
    headers: Dict[str, str] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break
                key, sep, value = line.partition(":")
                if sep and not key.startswith((" ", "\t")):
                    headers.setdefault(key.strip().lower(), value.strip())
    except OSError:
        pass
    return headers


def _normalise(name: str) -> str:
    """Normalise a distribution name as PEP 503 does."""
    return re.sub(r"[-_.]+", "-", name).lower()
