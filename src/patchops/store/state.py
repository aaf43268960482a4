"""The content of a store's state.json: what patchops did to each file and found per patchset."""

from __future__ import annotations

import json
from typing import Dict, List, Mapping, Optional

from patchops.core.records import field, record

STATE_VERSION = 1

@record
class FileEntry:
    """What patchops did to one file: its original, what it last wrote, which patchsets."""

    original: str                                   # sha of the bytes before patchops; in objects/
    written: str                                    # sha of the bytes patchops last wrote
    patchsets: List[str] = field(default_factory=list)  # applied, in order

    def to_json(self) -> dict:
        return {"original": self.original, "written": self.written, "patchsets": list(self.patchsets)}

    @classmethod
    def from_json(cls, data: Mapping) -> "FileEntry":
        return cls(str(data["original"]), str(data["written"]), [str(p) for p in data.get("patchsets", [])])


@record
class SatisfiedRecord:
    """A patchset found already in its wanted state, before patchops touched the files."""

    files: Dict[str, str]        # rel path -> sha when it was found satisfied
    version: Optional[str] = None
    recorded: str = ""           # ISO time

    def to_json(self) -> dict:
        return {"files": dict(self.files), "version": self.version, "recorded": self.recorded}

    @classmethod
    def from_json(cls, data: Mapping) -> "SatisfiedRecord":
        return cls({str(k): str(v) for k, v in dict(data.get("files", {})).items()},
                   data.get("version"), str(data.get("recorded", "")))


@record
class PatchsetSource:
    """Where an applied patchset came from and its YAML bytes (kept in objects/ as `sha`).

    So `status` and `rollback` can load a patchset applied from `--patchsets DIR` without
    being given that folder again, even after the folder is gone.
    """

    path: str
    sha: str

    def to_json(self) -> dict:
        return {"path": self.path, "sha": self.sha}

    @classmethod
    def from_json(cls, data: Mapping) -> "PatchsetSource":
        return cls(str(data["path"]), str(data["sha"]))


@record
class State:
    """The content of state.json: per file entries keyed by path relative to the package."""

    files: Dict[str, FileEntry] = field(default_factory=dict)
    satisfied: Dict[str, SatisfiedRecord] = field(default_factory=dict)
    patchsets: Dict[str, PatchsetSource] = field(default_factory=dict)
    txn: Optional[str] = None    # last committed transaction this state reflects

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "txn": self.txn,
            "files": {rel: entry.to_json() for rel, entry in sorted(self.files.items())},
            "satisfied": {name: rec.to_json() for name, rec in sorted(self.satisfied.items())},
            "patchsets": {name: src.to_json() for name, src in sorted(self.patchsets.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping) -> "State":
        return cls(
            files={str(rel): FileEntry.from_json(e) for rel, e in dict(data.get("files", {})).items()},
            satisfied={str(n): SatisfiedRecord.from_json(r)
                       for n, r in dict(data.get("satisfied", {})).items()},
            patchsets={str(n): PatchsetSource.from_json(r)
                       for n, r in dict(data.get("patchsets", {})).items()},
            txn=data.get("txn"),
        )

    def copy(self) -> "State":
        return State.from_json(json.loads(json.dumps(self.to_json())))
