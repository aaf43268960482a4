"""Turn a hand edit of installed vLLM files into a patchset, like patch-package or `quilt refresh`.

The edited file is compared with its pristine text (patchops's store, the PyPI wheel of the
copy's exact version checked against RECORD, or a file the user gives). The change becomes
`set-keyword` / `set-default` ops when it is exactly keyword values or defaults, otherwise
one `replace-function` op per changed function (patchops.patchset.edit_ops). Before anything is written the patchset is
loaded back and run on the pristine text: it must give the edited file byte for byte, and
report "already applied" on the edited file. Then the copy's store records the edited file
as patched by the new patchset, so `patchops rollback NAME` restores the pristine file and
`patchops apply NAME` brings the edit back.
"""

from __future__ import annotations

import dataclasses
import tempfile
import textwrap
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import yaml

from patchops.patchset.edit_ops import derive_ops, first_difference
from patchops.core.errors import PatchopsError, PatchsetError
from patchops.lint.vllm.releases import parse_version
from patchops.patchset.ops import Op
from patchops.store.recovery import recover
from patchops.store.site_files import atomic_write
from patchops.store.site_store import Store, sha256
from patchops.store.state import FileEntry

FROM_STORE = "store"
FROM_WHEEL = "wheel"
FROM_BASE = "base"


@dataclass(frozen=True)
class CapturedFile:
    """One edited file and what it became."""

    path: Path
    site_dir: Path
    rel: str                  # relative to the vllm package: engine/arg_utils.py
    version: Optional[str]
    pristine_from: str        # "store", "wheel <file name>", or "base <path>"
    ops: Tuple[Op, ...]


@dataclass(frozen=True)
class CaptureResult:
    """The patchset written and the files it came from."""

    name: str
    path: Path                      # the patchset file
    text: str                       # its YAML
    versions: str
    files: Tuple[CapturedFile, ...]
    recorded: Tuple[Path, ...]      # edited files now recorded in their store as patched by `name`


@dataclass(frozen=True)
class _Edit:
    path: Path
    site_dir: Path
    rel: str
    version: Optional[str]
    pristine: bytes
    edited: bytes
    pristine_from: str
    entry: Optional[FileEntry]      # the store's record when the pristine text came from it


def capture(name: str, files: Sequence[Path], *, base: Optional[Path] = None,
            from_wheel: bool = False, out_dir: Path = Path("patchsets"),
            versions: Optional[str] = None, force: bool = False, record: bool = True) -> CaptureResult:
    """Write `out_dir/NAME.yaml` reproducing the hand edits in `files`; record them unless told not."""
    from patchops.patchset.yaml_format import NAME_RE

    if not NAME_RE.match(name):
        raise PatchsetError(f'patchset name "{name}" is not kebab-case, like "corex-eager-allreduce"')
    if not files:
        raise PatchopsError("name the edited files to capture")
    if base is not None and (from_wheel or len(files) != 1):
        raise PatchopsError("--base gives the pristine text of one file: pass one FILE, without --from-wheel")
    target = Path(out_dir) / f"{name}.yaml"
    if target.exists() and not force:
        raise PatchopsError(f"{target} exists; pass --force to replace it, or choose another name")
    edits = [_read_edit(Path(f), base, from_wheel) for f in files]
    captured: List[CapturedFile] = []
    ops: List[Op] = []
    by_rel: Dict[str, Tuple[Op, ...]] = {}
    for edit in edits:
        file_ops = tuple(derive_ops(edit.pristine.decode("utf-8"), edit.edited.decode("utf-8"),
                                    edit.rel, edit.version, str(edit.path)))
        if edit.rel in by_rel:
            if by_rel[edit.rel] != file_ops:
                raise PatchopsError(f"{edit.path}: edited differently from the other copy of "
                                    f"vllm/{edit.rel} given; capture one of them")
        else:
            by_rel[edit.rel] = file_ops
            ops += file_ops
        captured.append(CapturedFile(edit.path, edit.site_dir, edit.rel, edit.version,
                                     edit.pristine_from, file_ops))
    spec = versions or _default_range([e.version for e in edits])
    text = patchset_yaml(name, spec, ops, edits)
    patchset = _load_text(name, text)
    for edit in edits:
        _check_reproduces(patchset, edit)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, text.encode("utf-8"))
    recorded = tuple(_record(name, edit) for edit in edits) if record else ()
    return CaptureResult(name, target, text, spec, tuple(captured), recorded)


# --- the pristine text ---------------------------------------------------------------------------


def _read_edit(path: Path, base: Optional[Path], from_wheel: bool) -> _Edit:
    from patchops.host.locate import locate_site

    path = Path(path).absolute()
    package = next((p for p in path.parents if p.name == "vllm" and (p / "__init__.py").is_file()), None)
    if package is None or not path.name.endswith(".py"):
        raise PatchopsError(f"{path}: not a .py file inside a vLLM package (no vllm/__init__.py above it)")
    try:
        edited = path.read_bytes()
    except OSError as exc:
        raise PatchopsError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    copy = locate_site(package.parent)
    rel = path.relative_to(package).as_posix()
    entry = None
    if base is not None:
        pristine, source = Path(base).read_bytes(), f"{FROM_BASE} {base}"
    elif from_wheel:
        pristine, wheel = wheel_text(package.parent, copy.version, rel)
        source = f"{FROM_WHEEL} {wheel}"
    else:
        pristine, entry = _stored(package.parent, rel, path, edited)
        source = FROM_STORE
    if pristine == edited:
        raise PatchopsError(f"{path}: nothing to capture: it is the same as its pristine text ({source})")
    for data, what in ((pristine, "pristine text"), (edited, "file")):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise PatchopsError(f"{path}: the {what} is not UTF-8 Python") from None
    return _Edit(path, package.parent, rel, copy.version, pristine, edited, source, entry)


def _stored(site_dir: Path, rel: str, path: Path, edited: bytes) -> Tuple[bytes, Optional[FileEntry]]:
    """Return the bytes patchops last wrote to `rel`: the hand edit is what changed since."""
    store = Store(site_dir)
    entry = store.read_state().files.get(rel) if store.exists() else None
    if entry is None:
        raise PatchopsError(
            f"{path}: patchops has no stored original of this file (it never patched it); pass "
            f"--from-wheel to take the pristine text from the PyPI wheel of this vLLM (checked "
            f"against RECORD), or --base FILE")
    return store.get_object(entry.written), entry


def wheel_text(site_dir: Path, version: Optional[str], rel: str) -> Tuple[bytes, str]:
    """Return vllm/`rel` from the PyPI wheel of `version` (and the wheel's name), if RECORD agrees.

    The wheel is downloaded once into patchops's cache (see patchops.host.pypi).
    """
    from patchops.host import pypi
    from patchops.patching import verify

    member = f"vllm/{rel}"
    entries = {e.path: e for e in verify.read_record(verify.find_record(site_dir, version))}
    entry = entries.get(member)
    if entry is None:
        raise PatchopsError(f"{site_dir}: RECORD does not list {member}: pip did not install it, "
                            f"so no wheel has its pristine text; pass --base FILE")
    if not _is_pypi_release(version):
        raise PatchopsError(f"{site_dir}: vLLM {version or 'of unknown version'} is not a PyPI "
                            f"release, so there is no wheel to take {member} from; pass --base FILE")
    wheel = pypi.vllm_wheel(version)
    try:
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(member)
    except KeyError:
        raise PatchopsError(f"{wheel}: has no {member}, which RECORD lists: this copy was not "
                            f"installed from that wheel; pass --base FILE") from None
    if verify.hash_bytes(entry.algorithm, data) != entry.digest:
        raise PatchopsError(f"{wheel.name}: {member} does not have the hash RECORD lists for it: "
                            f"this copy was not installed from that wheel (a vendor build?); "
                            f"pass --base FILE")
    return data, wheel.name


def _is_pypi_release(version: Optional[str]) -> bool:
    """Say whether `version` is a plain PEP 440 release, without a vendor's local part."""
    from packaging.version import InvalidVersion, Version

    try:
        return version is not None and Version(version).local is None
    except InvalidVersion:
        return False


# --- the patchset file ---------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Write multi-line strings (function code) as literal blocks, keys in insertion order."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(OrderedDict, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v.items()))


def patchset_yaml(name: str, spec: str, ops: Sequence[Op], edits: Sequence[_Edit]) -> str:
    """Return the patchset file for `ops`, with a description of where they came from."""
    files = ", ".join(dict.fromkeys(f"vllm/{e.rel}" for e in edits))
    shown = ", ".join(dict.fromkeys(f"{e.version or 'unknown'}" for e in edits))
    sources = "; ".join(dict.fromkeys(f"vllm/{e.rel}: {e.pristine_from}" for e in edits))
    doc = OrderedDict()
    doc["name"] = name
    doc["summary"] = f"Captured from a hand edit of {files} (vLLM {shown})."
    doc["description"] = textwrap.fill(
        f"Written by `patchops capture` from the edited file, against its pristine text "
        f"({sources}). Each op says what it expects to find, so `patchops apply` refuses a "
        f"vLLM where the code differs. Edit the summary and this text to say why.", 96) + "\n"
    doc["vllm"] = spec
    doc["ops"] = [_op_dict(op) for op in ops]
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True)


def _op_dict(op: Op) -> "OrderedDict[str, Any]":
    out: "OrderedDict[str, Any]" = OrderedDict(op=op.name)
    for f in op.param_fields():
        value = getattr(op, f.name)
        if f.default is not dataclasses.MISSING and value == f.default:
            continue
        if f.name == "sites":
            value = value.low if value.low == value.high else str(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif not isinstance(value, (str, int)):
            value = str(value)
        out[f.name] = value
    return out


def _default_range(versions: Sequence[Optional[str]]) -> str:
    """Return ">=" the oldest copy's release: the fingerprints guard the rest."""
    parsed = [parse_version(v) for v in versions if v]
    known = [p for p in parsed if p is not None]
    return f">={min(known).public}" if known else ""


def _load_text(name: str, text: str):
    from patchops.patchset.model import load_patchset

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            return load_patchset(path)
        except PatchsetError as exc:  # pragma: no cover - a bug in patchset_yaml
            raise PatchsetError(f"capture wrote a patchset it cannot read back: {exc}") from None


def _check_reproduces(patchset, edit: _Edit) -> None:
    """Refuse unless the patchset turns the pristine file into the edit and then stays put."""
    from patchops.patchset.states import PatchState
    from patchops.patchset.rewrite import rewrite_source

    pristine, edited = edit.pristine.decode("utf-8"), edit.edited.decode("utf-8")
    done = rewrite_source(pristine, edit.rel, [patchset], edit.version)
    if done.new_source != edited:
        raise PatchopsError(f"{edit.path}:{first_difference(done, edited)}: the captured patchset "
                            f"does not reproduce the edit byte for byte; nothing was written")
    again = rewrite_source(edited, edit.rel, [patchset], edit.version)
    if [r.state for r in again.results] != [PatchState.SATISFIED]:
        raise PatchopsError(f"{edit.path}: the captured patchset does not report the edited file "
                            f"as already applied ({again.results[0].message}); nothing was written")


def _record(name: str, edit: _Edit) -> Path:
    """Record the edited file in its store as patched by `name`, keeping the pristine bytes."""
    store = Store(edit.site_dir)
    with store.lock():
        recover(store)
        state = store.read_state()
        current = state.files.get(edit.rel)
        if current is not None and current != edit.entry:
            raise PatchopsError(f"{edit.path}: patchops state changed while capturing; run it again")
        store.put_object(edit.pristine)
        store.put_object(edit.edited)
        if current is not None:
            names = [n for n in current.patchsets if n != name] + [name]
            state.files[edit.rel] = FileEntry(current.original, sha256(edit.edited), names)
        else:
            state.files[edit.rel] = FileEntry(sha256(edit.pristine), sha256(edit.edited), [name])
        store.write_state(state)
    return edit.path
