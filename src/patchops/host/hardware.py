"""The accelerators a config will run on: stated with `--hardware`, or read off this box.

vLLM's defaults (batch sizes by memory tier, attention backend by compute capability, custom
all-reduce by platform) depend on the GPU, and a config seldom states it. When lint runs on the
very box that will serve, the vendor tools already know: `nvidia-smi`, Iluvatar's `ixsmi`,
`rocm-smi`/`amd-smi`, Ascend's `npu-smi`, or `/proc/driver/nvidia`. None of this imports torch,
which on these boxes needs the accelerator (or minutes) to load.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from patchops.core.errors import UsageError
from patchops.core.records import field_names, record, replace

# A tool runner takes an argv and returns its stdout, or None when the tool is absent or fails.
ToolRunner = Callable[[Sequence[str]], Optional[str]]

MIB_PER_GIB = 1024
TOOL_TIMEOUT_S = 10
PLATFORMS = ("cuda", "corex", "rocm", "ascend", "cpu")
_NVIDIA_QUERY = ("--query-gpu=name,memory.total,compute_cap", "--format=csv,noheader,nounits")
# Older drivers (before 510) and vendor clones refuse `compute_cap` as a field.
_NVIDIA_QUERY_NO_CC = ("--query-gpu=name,memory.total", "--format=csv,noheader,nounits")
# Asked apart, so a tool that refuses the field still answers the others.
_NVIDIA_FREE = ("--query-gpu=memory.free", "--format=csv,noheader,nounits")


class HardwareError(UsageError):
    """A `--hardware` value that names no GPU profile patchops can read."""


@record(frozen=True)
class Hardware:
    """What the GPUs of one node are, and where that knowledge came from."""

    gpus: Optional[int] = None
    memory_gib: Optional[float] = None
    compute_capability: Optional[str] = None   # "8.0", as vLLM's DeviceCapability prints it
    platform: Optional[str] = None
    name: Optional[str] = None
    host_memory_gib: Optional[float] = None    # the node's RAM: 0.8-0.15 weigh swap space against it
    free_memory_gib: Optional[float] = None    # the least free GPU now (detected): another process may hold it
    source: str = "unknown"                    # "--hardware", "nvidia-smi", "ixsmi", ...
    host_memory_source: Optional[str] = None   # where host_memory_gib came from, when not `source`

    def context(self) -> Dict[str, object]:
        """Return the stated fields keyed as a serve spec's `hardware:` section is."""
        return {f"hardware.{name}": getattr(self, name) for name in field_names(self)
                if name not in _ORIGINS and getattr(self, name) is not None}

    def origin_of(self, key: str) -> str:
        """Return where the `hardware.<field>` value `key` came from."""
        if key == "hardware.host_memory_gib" and self.host_memory_source:
            return self.host_memory_source
        return self.source

    def describe(self) -> str:
        """Return one line for the output, e.g. `4 x Iluvatar BI-V100, 32 GiB, cc 7.5, corex (ixsmi)`."""
        parts = []
        if self.name or self.gpus:
            parts.append(f"{self.gpus or '?'} x {self.name or 'GPU'}")
        if self.memory_gib is not None:
            parts.append(f"{self.memory_gib:g} GiB")
        if self.compute_capability:
            parts.append(f"cc {self.compute_capability}")
        if self.platform:
            parts.append(self.platform)
        if self.free_memory_gib is not None:
            parts.append(f"{self.free_memory_gib:g} GiB free now")
        gpus = f"{', '.join(parts)} ({self.source})" if parts else ""
        if self.host_memory_gib is None:
            return gpus or f"nothing known ({self.source})"
        host = f"host {self.host_memory_gib:g} GiB ({self.host_memory_source or self.source})"
        return f"{gpus}; {host}" if gpus else host


_ORIGINS = ("source", "host_memory_source")


# --------------------------------------------------------------------------- --hardware

# Patterns, not compiled at import: `re` compiles them on first use, and detection (every
# lint run, cached results too) uses none of them.
_PROFILE = r"(?i)(?:(?P<count>\d+)\s*[x*]\s*)?(?P<name>[^:]*)$"
_MEMORY = r"(?i)(?P<size>\d+(?:\.\d+)?)\s*(?P<unit>gib|gb|g|mib|mb|m)$"
_HOST = r"(?i)(?:host|ram)(?P<size>\d+(?:\.\d+)?)\s*(?P<unit>gib|gb|g|mib|mb|m)$"
_CC = r"(?i)(?:cc|sm_?)(?P<major>\d+)(?:\.(?P<minor>\d+))?$"


def parse_hardware(text: str, *, source: str = "--hardware") -> Hardware:
    """Read `4xBI-V100:32GiB:cc7.5:corex:host512GiB`, or a mapping such as `{gpus: 4, memory_gib: 32}`."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return _from_mapping(stripped, source)
    head, *rest = stripped.split(":")
    profile = re.match(_PROFILE, head.strip())
    if not stripped or profile is None:
        raise HardwareError(f"{source}: {text!r} is not a GPU profile; write e.g. "
                            "`4xBI-V100:32GiB:cc7.5:corex` or `{{gpus: 4, memory_gib: 32}}`")
    found: Dict[str, object] = {"name": profile.group("name").strip() or None,
                                "gpus": int(profile.group("count")) if profile.group("count") else None}
    for part in (p.strip() for p in rest):
        memory, cc, host = re.match(_MEMORY, part), re.match(_CC, part), re.match(_HOST, part)
        if host:
            found["host_memory_gib"] = _gib(float(host.group("size")), host.group("unit"))
        elif memory:
            found["memory_gib"] = _gib(float(memory.group("size")), memory.group("unit"))
        elif cc:
            found["compute_capability"] = _cc_text(cc.group("major"), cc.group("minor"))
        elif part.lower() in PLATFORMS:
            found["platform"] = part.lower()
        else:
            raise HardwareError(f"{source}: {part!r} in {text!r} is neither a memory size (32GiB), "
                                f"a host memory size (host512GiB), a compute capability (cc7.5) "
                                f"nor a platform ({', '.join(PLATFORMS)})")
    if found["gpus"] is None and found["name"]:
        found["gpus"] = 1
    return Hardware(source=source, **found)


def _from_mapping(text: str, source: str) -> Hardware:
    import yaml  # only a `{gpus: 4, ...}` profile needs a parser; lint's cached results need none

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise HardwareError(f"{source}: cannot read {text!r} as YAML or JSON: "
                            f"{str(exc).splitlines()[0]}") from None
    known = set(field_names(Hardware)) - set(_ORIGINS)
    if not isinstance(data, dict) or not set(data) <= known:
        raise HardwareError(f"{source}: a mapping takes only {', '.join(sorted(known))}; got {text!r}")
    try:
        return Hardware(
            gpus=None if data.get("gpus") is None else int(data["gpus"]),
            memory_gib=None if data.get("memory_gib") is None else float(data["memory_gib"]),
            compute_capability=_mapping_cc(data.get("compute_capability")),
            platform=None if data.get("platform") is None else str(data["platform"]).lower(),
            name=None if data.get("name") is None else str(data["name"]),
            host_memory_gib=None if data.get("host_memory_gib") is None else float(data["host_memory_gib"]),
            free_memory_gib=None if data.get("free_memory_gib") is None else float(data["free_memory_gib"]),
            source=source)
    except (TypeError, ValueError):
        raise HardwareError(f"{source}: gpus, memory_gib, host_memory_gib, free_memory_gib and compute_capability must be "
                            "numbers; "
                            f"got {text!r}") from None


def _mapping_cc(value: object) -> Optional[str]:
    if value is None:
        return None
    match = re.match(_CC, str(value).strip())
    if match:
        return _cc_text(match.group("major"), match.group("minor"))
    return _cc_text(*f"{float(value):.1f}".split("."))


def _gib(size: float, unit: str) -> float:
    return size / MIB_PER_GIB if unit.lower().startswith("m") else size


def _cc_text(major: str, minor: Optional[str]) -> str:
    if minor is None and len(major) >= 2:           # "sm_90", "cc75"
        major, minor = major[:-1], major[-1]
    return f"{int(major)}.{int(minor or 0)}"


# --------------------------------------------------------------------------- detection

def run_tool(argv: Sequence[str]) -> Optional[str]:
    """Run a vendor tool if it is on PATH; None when absent, failing or hanging."""
    import shutil

    if shutil.which(argv[0]) is None:
        return None
    import subprocess  # only where a tool is present: on most boxes none of the five is

    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def detect(run: ToolRunner = run_tool, proc: Path = Path("/proc")) -> Optional[Hardware]:
    """Return this box's GPUs from the first vendor tool that answers, and its RAM; or None.

    The RAM comes with GPUs only: a box without accelerators (a laptop, CI) will not serve,
    so its memory says nothing about the node that will.
    """
    found = _gpus(run, proc)
    host = _proc_meminfo(proc) if found is not None else None
    if host is None:
        return found
    return replace(found, host_memory_gib=host, host_memory_source=str(proc / "meminfo"))


def _gpus(run: ToolRunner, proc: Path) -> Optional[Hardware]:
    for probe in (_nvidia_like("nvidia-smi", "cuda"), _nvidia_like("ixsmi", "corex"),
                  _rocm_smi, _amd_smi, _npu_smi):
        found = probe(run)
        if found is not None:
            return found
    return _proc_nvidia(proc)


def _proc_meminfo(proc: Path) -> Optional[float]:
    """Return MemTotal in GiB, which is what psutil.virtual_memory().total (vLLM's get_cpu_memory) reads."""
    try:
        text = (proc / "meminfo").read_text(errors="replace")
    except OSError:
        return None
    match = re.search(r"^MemTotal:\s*(\d+)\s*kB", text, re.MULTILINE)
    return round(int(match.group(1)) / 2**20, 2) if match else None


def _nvidia_like(tool: str, platform: str) -> Callable[[ToolRunner], Optional[Hardware]]:
    """nvidia-smi and Iluvatar's ixsmi share the `--query-gpu` CSV interface."""

    def probe(run: ToolRunner) -> Optional[Hardware]:
        out = run((tool, *_NVIDIA_QUERY)) or run((tool, *_NVIDIA_QUERY_NO_CC))
        rows = [[c.strip() for c in line.split(",")] for line in (out or "").splitlines() if line.strip()]
        if not rows:
            return None
        name, memory = rows[0][0], _number(rows[0][1]) if len(rows[0]) > 1 else None
        cc = rows[0][2] if len(rows[0]) > 2 and _number(rows[0][2]) is not None else None
        free = [_number(line) for line in (run((tool, *_NVIDIA_FREE)) or "").splitlines() if line.strip()]
        least_free = min(free) if free and None not in free else None
        return Hardware(gpus=len(rows), name=name, platform=platform, source=tool,
                        memory_gib=None if memory is None else round(memory / MIB_PER_GIB, 2),
                        compute_capability=None if cc is None else _cc_text(*cc.split(".")),
                        free_memory_gib=None if least_free is None else round(least_free / MIB_PER_GIB, 2))

    return probe


def _rocm_smi(run: ToolRunner) -> Optional[Hardware]:
    out = run(("rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"))
    try:
        cards = {k: v for k, v in json.loads(out or "").items() if k.startswith("card")}
    except (ValueError, AttributeError):
        return None
    if not cards:
        return None
    first = next(iter(cards.values()))
    total = _number(first.get("VRAM Total Memory (B)"))
    return Hardware(gpus=len(cards), name=first.get("Card Series") or first.get("Card series"),
                    platform="rocm", source="rocm-smi",
                    memory_gib=None if total is None else round(total / 2**30, 2))


def _amd_smi(run: ToolRunner) -> Optional[Hardware]:
    out = run(("amd-smi", "static", "--asic", "--vram", "--json"))
    try:
        data = json.loads(out or "")
    except ValueError:
        return None
    gpus: List[dict] = data if isinstance(data, list) else data.get("gpu_data", []) if isinstance(data, dict) else []
    if not gpus:
        return None
    first = gpus[0]
    size = (first.get("vram") or {}).get("size")
    memory = None
    if isinstance(size, dict):
        memory = _number(size.get("value"))
        memory = None if memory is None else _gib(memory, str(size.get("unit", "MB")))
    return Hardware(gpus=len(gpus), name=(first.get("asic") or {}).get("market_name"),
                    platform="rocm", source="amd-smi",
                    memory_gib=None if memory is None else round(memory, 2))


# `| 0     910B3               | OK            | 93.4        41                0    / 0  |`
_NPU_ROW = r"^\|\s*(\d+)\s+(\S+)\s+\|\s*\w+\s*\|"
# `| 0                         | 0000:C1:00.0  | 0           0    / 0          3393 / 65536   |`
_NPU_HBM = r"(\d+)\s*/\s*(\d+)\s*\|\s*$"


def _npu_smi(run: ToolRunner) -> Optional[Hardware]:
    out = run(("npu-smi", "info")) or ""
    lines = out.splitlines()
    names = []
    memory = None
    for i, line in enumerate(lines):
        row = re.match(_NPU_ROW, line)
        if row is None:
            continue
        names.append(row.group(2))
        hbm = re.search(_NPU_HBM, lines[i + 1]) if i + 1 < len(lines) else None
        if hbm and memory is None:
            memory = round(int(hbm.group(2)) / MIB_PER_GIB, 2)
    if not names:
        return None
    return Hardware(gpus=len(names), name=f"Ascend {names[0]}", memory_gib=memory,
                    platform="ascend", source="npu-smi")


def _proc_nvidia(proc: Path) -> Optional[Hardware]:
    """The driver's own files: device count and model, no memory or capability."""
    folder = proc / "driver" / "nvidia" / "gpus"
    try:
        infos = sorted(p / "information" for p in folder.iterdir())
    except OSError:
        return None
    models = []
    for info in infos:
        try:
            text = info.read_text(errors="replace")
        except OSError:
            continue
        match = re.search(r"^Model:\s*(.+)$", text, re.MULTILINE)
        models.append(match.group(1).strip() if match else None)
    if not models:
        return None
    return Hardware(gpus=len(models), name=models[0], platform="cuda",
                    source=str(folder))


def _number(text: object) -> Optional[float]:
    try:
        return float(str(text).strip())
    except ValueError:
        return None
