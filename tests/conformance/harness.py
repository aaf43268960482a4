"""Record real vLLM's configuration-time verdicts on the corpus, one file per version.

`record(version, cases)` installs (or reuses) the version's venv, materializes the cases,
runs `probe.py` there (vLLM imported once, one forked child per case) and merges the results
into `verdicts/<version>.json`. A verdict carries the case's key, so a changed case shows up
as stale. Messages are stored with the model folder written as `{model}`, so the files are
the same on every machine.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, List, Optional

from conformance import venvs
from patchops.run import stand_in
from conformance.cases import DEFAULT_GPU, DEFAULT_GPUS, Case, MODELS, gpu_profiles

HERE = Path(__file__).resolve().parent
VERDICTS = HERE / "verdicts"
PROBE = stand_in.PROBE_SCRIPT
# The versions `record` re-records by default: one V0-capable release and the newest.
DEFAULT_VERSIONS = ("0.8.5", "0.33.0")
# Every version with recorded verdicts (the normal test run compares patchops against each).
VERSIONS = ("0.6.3.post1", "0.8.5", "0.9.2", "0.10.1.1", "0.15.0", "0.25.0", "0.32.0", "0.33.0")
# Versions that record the stated subset of the corpus (`in_subset`), not all of it: on the
# shared 2-core box the whole corpus costs 25-40 minutes per version.
SUBSET_VERSIONS = ("0.6.3.post1",)
# The subset: every hand-written case, seed and rule example, and of each seeded draw
# (gen/NNN, gen/serve-NNN, ...) the cases whose number is a multiple of SAMPLE_EVERY.
SAMPLE_EVERY = 5
CASE_TIMEOUT = 180


# String hashes fixed, so orders built from sets of strings stay the same between re-records.
# It does not fix 0.8.5's --guided-decoding-backend choices: one Literal of a Union is taken
# from a set, and a Literal's hash mixes hash(type(value)), an address (five runs of 0.8.5's
# parser with seed 2 gave 5, 3, 3, 3, 5 choices). compare.py judges those cases either way.
HASH_SEED = "2"


def versions_to_record(asked: Optional[List[str]], every: bool = False) -> tuple:
    """The versions `record` runs: those asked for, else all of VERSIONS or the default two."""
    return tuple(asked) if asked else VERSIONS if every else DEFAULT_VERSIONS


_DRAWN = re.compile(r"gen/(?:[a-z]+-)?(\d+)")


def in_subset(case: Case) -> bool:
    """Return whether a subset version records `case` (see SUBSET_VERSIONS)."""
    drawn = _DRAWN.fullmatch(case.id)
    return drawn is None or int(drawn.group(1)) % SAMPLE_EVERY == 0


def cases_for(version: str, cases: Iterable[Case]) -> List[Case]:
    """Return the cases `version` records: the subset for SUBSET_VERSIONS, else all."""
    return [c for c in cases if version not in SUBSET_VERSIONS or in_subset(c)]


def verdict_path(version: str) -> Path:
    return VERDICTS / f"{version}.json"


def load_verdicts(version: str) -> dict:
    path = verdict_path(version)
    if not path.exists():
        return {"vllm": version, "cases": {}}
    return json.loads(path.read_text())


def save_verdicts(version: str, data: dict) -> None:
    """Write one case per line, sorted by id, so a re-recording diffs case by case."""
    VERDICTS.mkdir(exist_ok=True)
    head = {k: v for k, v in data.items() if k != "cases"}
    lines = [json.dumps(head)[:-1] + ', "cases": {']
    rows = sorted(data["cases"].items())
    for index, (case_id, verdict) in enumerate(rows):
        comma = "," if index < len(rows) - 1 else ""
        lines.append(f" {json.dumps(case_id)}: {json.dumps(verdict, sort_keys=True)}{comma}")
    lines.append("}}")
    verdict_path(version).write_text("\n".join(lines) + "\n")


def stale(cases: Iterable[Case], version: str) -> List[Case]:
    """Return the cases without a verdict for their current key."""
    recorded = load_verdicts(version)["cases"]
    return [c for c in cases if recorded.get(c.id, {}).get("key") != c.key()]


# --------------------------------------------------------------------------- messages

_PYDANTIC = re.compile(r"^\s*(?:Value|Assertion) error, (.*?)(?: \[type=[^\]]*\])?$", re.M)
_PYDANTIC_FIELD = re.compile(r"^(\S.*)\n\s+(.*?) \[type=[^\]]*", re.M)


def normalize(message: str, case: Case, workdir: Path) -> str:
    """Return vLLM's message without machine paths and pydantic's input dumps."""
    text = message.replace(str(MODELS / case.model), "{model}").replace(str(workdir), "{case}")
    text = text.replace(str(MODELS), "{models}")
    if "validation error" in text and "[type=" in text:
        inner = _PYDANTIC.findall(text)
        if not inner:  # a field error: "field\n  Input should be ... [type=...]"
            inner = [f"{field}: {why}" for field, why in _PYDANTIC_FIELD.findall(text)]
        if inner:
            text = "; ".join(inner)
    text = re.sub(r"input_value=.*?(?=, input_type|\])", "input_value=...", text)
    return text.strip()


# --------------------------------------------------------------------------- recording

@dataclass
class RecordReport:
    version: str
    cases: int
    seconds: float
    venv_seconds: float
    venv_gib: float


def record(version: str, cases: List[Case], *, log: Callable[[str], None] = print,
           keep_logs: Optional[Path] = None) -> RecordReport:
    """Run `cases` on real vLLM `version` and merge their verdicts into its file."""
    started = time.monotonic()
    venv = venvs.ensure(version, log=log)
    venv_seconds = time.monotonic() - started
    data = load_verdicts(version)
    scratch = Path(tempfile.mkdtemp(prefix=f"patchops-conformance-{version}-"))
    try:
        log_dir = keep_logs or scratch / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        jobs, folders = [], {}
        for case in cases:
            folder = folders[case.id] = case.materialize(scratch / "cases")
            jobs.append({"id": case.id, "argv": case.argv(), "cwd": str(folder),
                         "env": dict(case.env, PATCHOPS_GPU_PROFILE=json.dumps(case.profile(),
                                                                               sort_keys=True))})
        job = {"results": str(scratch / "results.jsonl"), "log_dir": str(log_dir),
               "timeout": CASE_TIMEOUT, "cases": jobs,
               "architectures": sorted({_architecture(c.model) for c in cases})}
        (scratch / "job.json").write_text(json.dumps(job))
        parent = dict(gpu_profiles()[DEFAULT_GPU], count=DEFAULT_GPUS, host_ram_gib=512)
        # A home kept with the venv: vLLM 0.10+ caches its model-class inspections there.
        env = venvs.environment(venv, parent, venv.root / "patchops-home")
        env["PYTHONHASHSEED"] = HASH_SEED
        log(f"vllm {version}: {len(cases)} cases")
        run_started = time.monotonic()
        done = subprocess.run([str(venv.python), str(PROBE), str(scratch / "job.json")], env=env,
                              cwd=str(scratch), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        results = {}
        if (scratch / "results.jsonl").exists():
            for line in (scratch / "results.jsonl").read_text().splitlines():
                row = json.loads(line)
                results[row.pop("id")] = row
        by_id = {c.id: c for c in cases}
        for case_id, row in results.items():
            case = by_id[case_id]
            row.pop("seconds", None)
            if "message" in row:
                row["message"] = normalize(row["message"], case, folders[case_id])
            data["cases"][case_id] = {"key": case.key(), **row}
        data["vllm"] = version
        data["recorded"] = dt.date.today().isoformat()
        data["exclude_newer"] = json.loads((venv.root / venvs.MARKER).read_text())["exclude_newer"]
        data["environment"] = venvs.installed(venv)  # what compare tells lint was beside vLLM
        save_verdicts(version, data)      # keep what was recorded, even if the probe died
        seconds = time.monotonic() - run_started
        if done.returncode != 0 or len(results) != len(cases):
            raise RuntimeError(f"vllm {version}: the probe stopped after {len(results)} of "
                               f"{len(cases)} cases (exit {done.returncode}):\n"
                               + done.stdout[-4000:])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return RecordReport(version=version, cases=len(cases), seconds=seconds,
                        venv_seconds=venv_seconds, venv_gib=_size_gib(venv.root))


def prune(version: str, cases: List[Case]) -> List[str]:
    """Drop verdicts of cases no longer in the corpus; return their ids."""
    data = load_verdicts(version)
    wanted = {c.id for c in cases}
    gone = [case_id for case_id in data["cases"] if case_id not in wanted]
    for case_id in gone:
        del data["cases"][case_id]
    if gone:
        save_verdicts(version, data)
    return gone


def _architecture(model: str) -> str:
    return json.loads((MODELS / model / "config.json").read_text())["architectures"][0]


def _size_gib(path: Path) -> float:
    out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True).stdout
    return round(int(out.split()[0]) / (1 << 30), 1) if out else 0.0

