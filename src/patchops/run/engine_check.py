"""Run one launch through real vLLM up to its engine config, in the interpreter that runs vLLM.

`lint --engine` is the answer in seconds instead of the minutes a launch spends loading a
35B model before vLLM rejects a flag: no weights, no GPU memory, no server. On a box whose
GPUs the driver cannot show (a CI runner, a laptop), vLLM answers a declared GPU profile
instead, and the verdict says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from patchops.core.cache import cache_root
from patchops.run import stand_in
from patchops.core.errors import UsageError

TIMEOUT_S = 600
# The profile used when a GPU-less box does not say what the config will run on: a common
# data-centre card, stated in the output.
DEFAULT_PROFILE = {"name": "NVIDIA A100-SXM4-80GB", "capability": [8, 0], "memory_gib": 80,
                   "sms": 108, "count": 8, "host_ram_gib": 512}


PROBE_FAILED = "ProbeFailed"   # the interpreter could not import vLLM's CLI (no torch, a broken copy)


@dataclass(frozen=True)
class EngineVerdict:
    """What vLLM said: ok with the values it resolved, or the stage, exception and message."""

    ok: bool
    seconds: float
    resolved: Dict[str, Any] = field(default_factory=dict)
    stage: Optional[str] = None          # parse | serve | engine-config | timeout | crash
    error_type: Optional[str] = None
    message: Optional[str] = None
    profile: Optional[Dict[str, Any]] = None   # the declared GPU profile, None on real GPUs
    log: Optional[str] = None            # vLLM's own output, kept when it failed

    @property
    def ran(self) -> bool:
        """Return whether vLLM answered at all: False when its CLI could not even be imported."""
        return self.error_type != PROBE_FAILED


def profile_from(hardware) -> Dict[str, Any]:
    """Return a GPU profile for the shim from a Hardware, the defaults filling what it lacks."""
    profile = dict(DEFAULT_PROFILE)
    if hardware is None:
        return profile
    if hardware.name:
        profile["name"] = hardware.name
    if hardware.compute_capability:
        profile["capability"] = [int(p) for p in hardware.compute_capability.split(".")]
    if hardware.memory_gib is not None:
        profile["memory_gib"] = hardware.memory_gib
    if hardware.gpus is not None:
        profile["count"] = hardware.gpus
    if hardware.host_memory_gib is not None:
        profile["host_ram_gib"] = hardware.host_memory_gib
    return profile


def run(python: str, site_dir: Path, argv: Sequence[str], env: Dict[str, str], *,
        cwd: Optional[Path] = None, profile: Optional[Dict[str, Any]] = None,
        architectures: Sequence[str] = (), timeout: float = TIMEOUT_S) -> EngineVerdict:
    """Run `vllm ARGV` (argv after `vllm`) with `python` until its engine config exists.

    With `profile`, vLLM runs on the stand-in driver and answers that GPU profile.
    """
    scratch = Path(tempfile.mkdtemp(prefix="patchops-engine-"))
    try:
        job = {"results": str(scratch / "results.jsonl"), "log_dir": str(scratch), "timeout": timeout,
               "architectures": list(architectures),
               "cases": [{"id": "engine", "argv": list(argv), "cwd": str(cwd or Path.cwd()),
                          "env": dict(env)}]}
        (scratch / "job.json").write_text(json.dumps(job))
        started = time.monotonic()
        done = subprocess.run([python, str(stand_in.PROBE_SCRIPT), str(scratch / "job.json")],
                              env=_environment(python, site_dir, profile), cwd=str(scratch),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout + 120)
        seconds = round(time.monotonic() - started, 1)
        results = (scratch / "results.jsonl")
        if not results.exists():
            return EngineVerdict(False, seconds, stage="crash", error_type=PROBE_FAILED,
                                 message=f"{python} could not run vLLM's CLI: "
                                 + (done.stdout.strip().splitlines() or ["no output"])[-1],
                                 profile=profile, log=done.stdout[-4000:])
        row = json.loads(results.read_text().splitlines()[0])
        log_file = scratch / "engine.log"
        log = log_file.read_text(errors="replace")[-4000:] if log_file.exists() else None
        if row.get("verdict") == "ok":
            return EngineVerdict(True, seconds, resolved=row.get("resolved", {}), profile=profile)
        return EngineVerdict(False, seconds, stage=row.get("stage"), error_type=row.get("type"),
                             message=row.get("message"), profile=profile, log=log)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _environment(python: str, site_dir: Path, profile: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """The user's environment (vLLM runs as it would), plus the stand-in when profiled."""
    env = dict(os.environ)
    env.setdefault("VLLM_NO_USAGE_STATS", "1")
    if profile is None:
        return env
    home = _stand_in_home(python, site_dir)
    env.update(stand_in.profile_env(profile, site_dir))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(home / "shim"), env.get("PYTHONPATH")) if p)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(home / "driver"), env.get("LD_LIBRARY_PATH"))
                                             if p)
    return env


def _stand_in_home(python: str, site_dir: Path) -> Path:
    """Build (once per copy) the shim and the stand-in driver under patchops's cache."""
    key = hashlib.sha256(f"{python}\0{site_dir}".encode()).hexdigest()[:16]
    home = cache_root() / "engine" / key
    stand_in.write_shim(home / "shim")
    if not (home / "driver" / "libcuda.so.1").exists():
        if shutil.which("cc") is None:
            raise UsageError("lint --engine on a machine without a GPU builds a stand-in CUDA driver "
                             "and needs a C compiler (`cc`); install gcc, or run it on the GPU box")
        stand_in.build_driver(site_dir, home / "driver")
    return home
