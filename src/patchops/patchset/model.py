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
      - op: set-keyword                  # one of patchops.patchset.ops.OPS
        file: engine/arg_utils.py        # relative to the vllm package
        sites: 1                         # or ">=1", "<=2": how many sites it must match
        vllm: "<0.11"                    # optional: run this op only on these versions
        ...                              # the op's own parameters

The YAML is read and checked by `patchops.patchset.yaml_format`; this module, which finds patchsets
by name, imports neither yaml nor the ops, and nothing here or there imports libcst: the
status path loads patchsets and answers from hashes alone.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Tuple, Union

from patchops.core.errors import PatchsetError
from patchops.core.records import field, record

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

    from patchops.patchset.ops import Op

ENV_VAR = "PATCHOPS_PATCHSETS"
# Editable install or source checkout: <repo>/patchsets next to src/.
SHIPPED_DIR = Path(__file__).resolve().parents[3] / "patchsets"
# Wheel install: the same files packaged as patchops/patchsets/ (pyproject.toml maps
# patchsets/ to that package); absent in a checkout.
PACKAGED_DIR = Path(__file__).resolve().parents[1] / "patchsets"

_SUFFIXES = (".yaml", ".yml")


@record(frozen=True)
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
        from patchops.patchset.ops.base import version_in

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


def read_patchset_file(path: Path) -> str:
    """Return a patchset file's text; PatchsetError naming the file when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise PatchsetError(f"{path}: cannot read patchset: {reason}") from None


def load_patchset(path: Union[str, Path]) -> Patchset:
    """Read and check one patchset file."""
    path = Path(path)
    return load_patchset_text(read_patchset_file(path), path)


def load_patchset_text(text: str, path: Path) -> Patchset:
    """Check a patchset's YAML `text` as if read from `path` (a copy the store kept)."""
    from patchops.patchset.yaml_format import Loader

    return Loader(Path(path), text).load()


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
    return load_patchset(patchset_file(name, dirs))


def patchset_file(name: str, dirs: Iterable[Union[str, Path]] = ()) -> Path:
    """Return the file of the patchset called `name`, or `name` if it is a path to one."""
    if name.endswith(_SUFFIXES) and Path(name).is_file():
        return Path(name)
    dirs = tuple(dirs)
    files = patchset_files(dirs)
    if name in files:
        return files[name]
    hint = did_you_mean(name, files)
    known = ", ".join(files) or "none"
    searched = ", ".join(str(d) for d in patchset_dirs(dirs)) or "nowhere"
    raise UnknownPatchset(f'unknown patchset "{name}"{hint}; known patchsets: {known}; '
                        f"searched: {searched}")


def did_you_mean(word: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""
