"""Build two-copy vLLM worlds from real vLLM files and judge them after a crash or a fault.

Shared by tests/reliability/ (a fast subset) and `bench/reliability.py` (every point).
A world is a root holding two copies (`lib`, `lib64`, like CoreX images) of real vLLM files,
a folder of test patchsets and an `outside/` folder that nothing may ever touch. Commands run
as `python -m patchops` subprocesses, so a SIGKILL is a real one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
# The patchops the subprocesses run; pointing it at an older tree shows which tests fail there.
SRC = Path(os.environ.get("RELIABILITY_SRC", REPO / "src"))
VERSION = "0.8.5"
# Real vLLM files the test patchsets rewrite, and what a copy needs to be located.
TARGETS = ("logger.py", "sampling_params.py")
SKELETON = ("__init__.py", "_version.py", *TARGETS)
WRITE_STEPS = ("mkdir", "write", "fsync", "rename", "dirsync", "append", "unlink")
TMP_SUFFIX = ".patchops-tmp"

PATCHSETS = {
    # Two files, and a second patchset on one of them: rollback of mark-a re-applies mark-b.
    "mark-a": [("logger.py", "init_logger"), ("sampling_params.py", "SamplingParams")],
    "mark-b": [("logger.py", "_configure_vllm_root_logger")],
    "mark-c": [("sampling_params.py", "SamplingParams")],
}


def patchset_yaml(name: str, ops: Sequence[Tuple[str, str]]) -> str:
    body = "".join(textwrap.dedent(f"""\
          - op: insert-code
            file: {rel}
            marker: {name}-{i}
            before: {before}
            sites: 1
            code: |
              PATCHOPS_{name.upper().replace('-', '_')}_{i} = {i}
        """) for i, (rel, before) in enumerate(ops))
    return (f"name: {name}\nsummary: Mark {', '.join(r for r, _ in ops)} (a test patchset).\n"
            f'vllm: ">=0.6"\nops:\n' + textwrap.indent(body, ""))


@dataclass
class World:
    root: Path
    sites: Tuple[Path, Path]
    patchsets: Path
    outside: Path

    def targets(self) -> List[Path]:
        return [site / "vllm" / rel for site in self.sites for rel in TARGETS]

    def site_args(self) -> List[str]:
        args = []
        for site in self.sites:
            args += ["--site", str(site)]
        return args + ["--patchsets", str(self.patchsets)]


def build_world(root: Path, source: Path) -> World:
    """Make a world under `root` from the real vLLM tree `source` (a site-packages folder)."""
    root.mkdir(parents=True, exist_ok=True)
    sites = (root / "lib" / "site-packages", root / "lib64" / "site-packages")
    for site in sites:
        for rel in SKELETON:
            dest = site / "vllm" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / "vllm" / rel, dest)
        # A stale unchecked-hash pyc, as vendor images ship them: patchops must delete it.
        cache = site / "vllm" / "__pycache__"
        cache.mkdir()
        (cache / "logger.cpython-311.pyc").write_bytes(b"stale bytecode")
    folder = root / "patchsets"
    folder.mkdir()
    for name, ops in PATCHSETS.items():
        (folder / f"{name}.yaml").write_text(patchset_yaml(name, ops))
    outside = root / "outside"
    outside.mkdir()
    (outside / "victim.py").write_text("# a file outside every copy; it must never change\n")
    return World(root, sites, folder, outside)


class Done:
    """A command's exit code and output (the shape of subprocess.CompletedProcess)."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_here(world: World, args: Sequence[str]) -> Done:
    """Run a patchops command in this process (the command after a crash needs no new
    interpreter, and this keeps the matrix fast)."""
    from typer.testing import CliRunner

    from patchops.cli.app import app

    result = CliRunner().invoke(app, [*args, *world.site_args()])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return Done(70, result.stdout, f"{type(result.exception).__name__}: {result.exception}")
    return Done(result.exit_code, result.stdout, result.stderr)


def run(world: World, args: Sequence[str], *, fault: Optional[str] = None,
        trace: Optional[Path] = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `python -m patchops ARGS` on the world's two copies."""
    return subprocess.run([sys.executable, "-m", "patchops", *args, *world.site_args()],
                          env=_env(fault, trace), capture_output=True, text=True, timeout=timeout)


def start(world: World, args: Sequence[str], *, fault: Optional[str] = None) -> subprocess.Popen:
    """Start `python -m patchops ARGS` without waiting (race tests)."""
    return subprocess.Popen([sys.executable, "-m", "patchops", *args, *world.site_args()],
                            env=_env(fault, None), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


# The caller's settings a command here keeps: where caches go (the fast loop's own folder, not
# ~/.cache/patchops) and whether lint may ask the Hub. No other PATCHOPS_ setting leaks in.
KEPT_SETTINGS = ("PATCHOPS_CACHE", "PATCHOPS_FETCH")


def _env(fault: Optional[str], trace: Optional[Path]) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHOPS_") or k in KEPT_SETTINGS}
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    if fault:
        env["PATCHOPS_FAULT"] = fault
    if trace:
        env["PATCHOPS_FAULT_TRACE"] = str(trace)
    return env


def wait_stopped(process: subprocess.Popen, timeout: float = 60) -> bool:
    """Wait until `process` stopped itself (the `stop` fault action); False if it exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            state = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state == "T":
            return True
        time.sleep(0.02)
    raise TimeoutError(f"process {process.pid} never reached its stop point")


def resume(process: subprocess.Popen) -> None:
    os.kill(process.pid, signal.SIGCONT)


# --- scenarios -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A command to interrupt, and what to run first to set its world up."""

    name: str
    args: Tuple[str, ...]
    setup: Tuple[Tuple[str, ...], ...] = ()


SCENARIOS = (
    Scenario("apply", ("apply", "mark-a", "mark-b", "--yes")),
    Scenario("rollback", ("rollback", "mark-a"), setup=(("apply", "mark-a", "mark-b", "--yes"),)),
    Scenario("rollback-all", ("rollback", "--all"), setup=(("apply", "mark-a", "mark-b", "--yes"),)),
)
SCENARIO = {scenario.name: scenario for scenario in SCENARIOS}


@dataclass
class Expected:
    """A scenario's files before and after a clean run, and the steps that run reached."""

    before: Dict[str, bytes]
    after: Dict[str, bytes]
    steps: Counter
    template: World        # the starting world, to copy for each interrupted run
    visits: List[Tuple[str, str]] = field(default_factory=list)  # (step, file) in order

    def visit(self, step: str, ends_with: str, *, nth: int = 1) -> int:
        """Return n such that `step:n` is the nth visit of `step` to a file ending so."""
        count = found = 0
        for name, path in self.visits:
            if name == step:
                count += 1
                if path.endswith(ends_with):
                    found += 1
                    if found == nth:
                        return count
        raise LookupError(f"no {step} of *{ends_with} in the clean run")


def prepare(scenario: Scenario, root: Path, source: Path, template: Optional[World] = None) -> World:
    """Build the scenario's starting world (copying `template`, a prepared one, if given)."""
    if template is not None:
        shutil.copytree(template.root, root, symlinks=True)
        return _as_world(root, template)
    world = build_world(root, source)
    for args in scenario.setup:
        done = run_here(world, args)
        if done.returncode != 0:
            raise RuntimeError(f"setup {args} failed: {done.stderr}")
    return world


def expect(scenario: Scenario, root: Path, source: Path) -> Expected:
    """Run the scenario once cleanly, tracing every fault point it reaches.

    Keeps its starting world in `root/template`, which `interrupt` copies for each run.
    """
    template = prepare(scenario, root / "template", source)
    world = prepare(scenario, root / "clean", source, template)
    before = files_of(world)
    trace = root / "trace.txt"
    done = run(world, scenario.args, trace=trace)
    if done.returncode != 0:
        raise RuntimeError(f"{scenario.args} failed: {done.stderr}")
    visits = [tuple(line.split(" ", 1)) for line in trace.read_text().splitlines()]
    return Expected(before, files_of(world), Counter(step for step, _ in visits), template,
                    [(step, path) for step, path in visits])


def _as_world(root: Path, like: World) -> World:
    return World(root, tuple(root / s.relative_to(like.root) for s in like.sites),
                 root / "patchsets", root / "outside")


def points(expected: Expected, steps: Sequence[str] = WRITE_STEPS, every: int = 1) -> List[Tuple[str, int]]:
    """Return (step, n) for each visit the clean run made; with every > 1, a sample that
    keeps the first and last visit of each step."""
    found = []
    for step in steps:
        count = expected.steps.get(step, 0)
        chosen = [n for n in range(1, count + 1) if every == 1 or n in (1, count) or n % every == 0]
        found += [(step, n) for n in chosen]
    return found


def files_of(world: World) -> Dict[str, bytes]:
    """Return every target file's bytes, keyed by its path inside the world."""
    return {str(path.relative_to(world.root)): path.read_bytes() for path in world.targets()}


def tree_digest(folder: Path) -> Dict[str, str]:
    """Return relative path -> sha256 (or link target) of everything under `folder`."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            seen[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            seen[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


# --- judging ---------------------------------------------------------------------------------


@dataclass
class Verdict:
    """What one interrupted run left, after the next command ran."""

    lost: int = 0                   # files neither before nor after, or a backup gone
    half: int = 0                   # transactions left applied in some files and not others
    outside: int = 0                # files outside the copies that changed
    temps: int = 0                  # temp files left after the next command
    problems: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def judge(world: World, expected: Expected, outside_before: Dict[str, str]) -> Verdict:
    """Run the next command (status, which repairs) and check every file of both copies."""
    verdict = Verdict()
    verdict.problems += status_problems(world)
    now = files_of(world)
    kinds = []
    for path, data in now.items():
        if data == expected.before[path]:
            kinds.append("before")
        elif data == expected.after[path]:
            kinds.append("after")
        else:
            verdict.lost += 1
            verdict.problems.append(f"{path} is neither its old nor its new bytes")
    # A file the command leaves alone is "before" and "after" at once.
    moving = [k for path, k in zip(now, kinds) if expected.before[path] != expected.after[path]]
    if len(set(moving)) > 1:
        verdict.half += 1
        verdict.problems.append(f"half-applied transaction: {list(zip(now, kinds))}")
    verdict.lost += _check_backups(world, verdict.problems)
    temps = [p for p in world.root.rglob(f"*{TMP_SUFFIX}")]
    verdict.temps = len(temps)
    if temps:
        verdict.problems.append(f"temp files left: {temps}")
    if tree_digest(world.outside) != outside_before:
        verdict.outside += 1
        verdict.problems.append("a file outside the copies changed")
    return verdict


_LOADED: Dict[str, list] = {}


def status_problems(world: World) -> List[str]:
    """Run status (which repairs an interrupted transaction) through the library; return what
    is wrong: an error, a drifted row, a patchset in a different state in the two copies.

    The patchsets are loaded once per process, so identical files are parsed once (see
    patching/file_rewrites.py) and a matrix of hundreds of runs stays fast.
    """
    from patchops import patching
    from patchops.core.errors import PatchopsError
    from patchops.host.locate import locate_site
    from patchops.patchset.model import load_patchset

    if "all" not in _LOADED:
        _LOADED["all"] = [load_patchset(world.patchsets / f"{name}.yaml") for name in PATCHSETS]
    try:
        rows = patching.status([locate_site(site) for site in world.sites], _LOADED["all"])
    except PatchopsError as exc:
        return [f"status after the interruption failed: {exc}"]
    problems = [f"{row.site_dir}: {row.patchset} drifted: {row.detail}" for row in rows
                if row.state == "drifted"]
    for name in PATCHSETS:
        seen = {row.state for row in rows if row.patchset == name}
        if len(seen) > 1:
            problems.append(f"{name} is {' in one copy and '.join(sorted(seen))} in the other")
    return problems


def _check_backups(world: World, problems: List[str]) -> int:
    """Count recorded files whose original backup is gone or corrupt, or whose bytes drifted."""
    sys.path.insert(0, str(REPO / "src"))
    from patchops.store.site_store import Store, sha256

    lost = 0
    for site in world.sites:
        store = Store(site)
        if not store.exists():
            continue
        for rel, entry in store.read_state().files.items():
            if not store.has_object(entry.original):
                lost += 1
                problems.append(f"{site}: backup of {rel}'s original is missing or corrupt")
            current = store.path(rel).read_bytes()
            if sha256(current) != entry.written:
                lost += 1
                problems.append(f"{site}: {rel} does not match what state.json says was written")
    return lost


def finish(world: World, scenario: Scenario, expected: Expected, verdict: Verdict) -> None:
    """Run the interrupted command again: it must finish, leaving the clean run's bytes."""
    again = run_here(world, scenario.args)
    # rollback of what the interrupted run already rolled back says "nothing to roll back" (2).
    if again.returncode not in (0, 2) or (again.returncode == 2 and "nothing to roll back" not in again.stderr):
        verdict.problems.append(f"the command run again exited {again.returncode}: {again.stderr.strip()}")
    if files_of(world) != expected.after:
        verdict.lost += 1
        verdict.problems.append("running the command again did not reach the clean run's bytes")


def interrupt(scenario: Scenario, root: Path, source: Path, expected: Expected, step: str, n: int,
              action: str) -> Tuple[subprocess.CompletedProcess, Verdict]:
    """Run the scenario with one fault, then judge and finish it."""
    world = prepare(scenario, root, source, expected.template)
    outside = tree_digest(world.outside)
    done = run(world, scenario.args, fault=f"{step}:{n}:{action}")
    verdict = Verdict()
    if action == "kill" and done.returncode != -signal.SIGKILL:
        verdict.problems.append(f"{step}:{n} was never reached (exit {done.returncode})")
    if action in ("enospc", "eio"):
        _judge_fault_exit(done, verdict)
    judged = judge(world, expected, outside)
    verdict.problems += judged.problems
    verdict.lost += judged.lost
    verdict.half += judged.half
    verdict.outside += judged.outside
    verdict.temps += judged.temps
    finish(world, scenario, expected, verdict)
    return done, verdict


def _judge_fault_exit(done: subprocess.CompletedProcess, verdict: Verdict) -> None:
    """An injected ENOSPC/EIO: exit 5 naming a real file, or exit 0 with a warning after the
    commit point; never a traceback, an internal error or a temp file's name."""
    if "Traceback" in done.stderr or done.returncode == 70:
        verdict.problems.append(f"internal error: {done.stderr.strip()}")
    elif done.returncode == 0:
        if "is complete" not in done.stdout and "is complete" not in done.stderr:
            verdict.problems.append("a fault was injected but the command said nothing")
    elif done.returncode != 5:
        verdict.problems.append(f"exit {done.returncode} for an I/O error: {done.stderr.strip()}")
    elif TMP_SUFFIX in done.stderr or "cannot" not in done.stderr:
        verdict.problems.append(f"the I/O error does not name the file: {done.stderr.strip()}")


def matrix(scenarios: Sequence[Scenario], base: Path, source: Path, *, every: int,
           actions: Sequence[str], report: Callable[[str, str, int, str, Verdict], None]) -> None:
    """Interrupt each scenario at each chosen point with each action; `report` each verdict."""
    for scenario in scenarios:
        expected = expect(scenario, base / f"{scenario.name}-clean", source)
        for step, n in points(expected, every=every):
            for action in actions:
                root = base / f"{scenario.name}-{step}-{n}-{action}"
                _, verdict = interrupt(scenario, root, source, expected, step, n, action)
                report(scenario.name, step, n, action, verdict)
                shutil.rmtree(root, ignore_errors=True)


# --- races -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Race:
    """Hold `first` at a named fault point, run `second` to its end, then let `first` go on."""

    name: str
    setup: Tuple[Tuple[str, ...], ...]
    first: Tuple[str, ...]
    hold: str                       # PATCHOPS_FAULT point, with the `stop` action
    second: Tuple[str, ...]
    allowed: Tuple[Tuple[int, int], ...]   # (first's exit, second's exit) that are correct


RACES = (
    # A defect found in review: apply of two patchsets on different files while a rollback of one
    # runs between planning the first and the second copy.
    Race("apply-vs-rollback", (("apply", "mark-b", "--yes"),),
         ("apply", "mark-b", "mark-c", "--yes"), "plan-copy:2", ("rollback", "mark-b"),
         ((4, 0),)),
    # Planned, not yet locked: another apply commits first.
    Race("apply-vs-apply", (), ("apply", "mark-a", "--yes"), "commit:1",
         ("apply", "mark-a", "mark-b", "--yes"), ((4, 0),)),
    # A rollback holding its locks mid-write: the apply must be refused, not interleaved.
    Race("rollback-holding-locks-vs-apply", (("apply", "mark-a", "mark-b", "--yes"),),
         ("rollback", "mark-a"), "write:1", ("apply", "mark-c", "--yes"), ((0, 4),)),
    # An apply holding its locks mid-swap: status reads without waiting, and says so.
    Race("apply-holding-locks-vs-status", (), ("apply", "mark-a", "mark-b", "--yes"),
         "rename:3", ("status", "mark-a", "mark-b"), ((0, 0), (0, 3))),
)


def race(spec: Race, root: Path, source: Path) -> Tuple[Done, Done, List[str]]:
    """Run one race; return both commands' results and what is wrong afterwards."""
    world = build_world(root, source)
    for args in spec.setup:
        run_here(world, args)
    outside = tree_digest(world.outside)
    first = start(world, spec.first, fault=f"{spec.hold}:stop")
    problems = []
    try:
        if not wait_stopped(first):
            out, err = first.communicate()
            return Done(first.returncode, out, err), Done(-1, "", ""), [
                f"{spec.first} never reached {spec.hold}: {err.strip()}"]
        second = run(world, spec.second)
    finally:
        resume(first)
    out, err = first.communicate(timeout=120)
    first_done = Done(first.returncode, out, err)
    if (first_done.returncode, second.returncode) not in spec.allowed:
        problems.append(f"exits {first_done.returncode}, {second.returncode} (allowed "
                        f"{spec.allowed}): {first_done.stderr.strip()} / {second.stderr.strip()}")
    problems += status_problems(world)
    problems += [f"temp file left: {p}" for p in world.root.rglob(f"*{TMP_SUFFIX}")]
    if tree_digest(world.outside) != outside:
        problems.append("a file outside the copies changed")
    return first_done, second, problems


# --- hostile filesystems ---------------------------------------------------------------------


@dataclass(frozen=True)
class Hostile:
    """A link planted where patchops would write; the command must refuse, naming it."""

    name: str
    setup: Tuple[Tuple[str, ...], ...]
    plant: Callable[[World], Path]          # plants the link, returns its path
    args: Tuple[str, ...]


def _store(world: World) -> Path:
    return world.sites[0] / ".patchops"


def _link(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists() or link.is_symlink():
        shutil.move(str(link), str(target)) if not target.exists() else link.unlink()
    link.symlink_to(target)
    return link


def _object_of_original(world: World) -> Path:
    data = (world.sites[0] / "vllm" / "logger.py").read_bytes()
    return _link(_store(world) / "objects" / hashlib.sha256(data).hexdigest(), world.outside / "victim.py")


def _evil_folder(world: World) -> Path:
    (world.outside / "evil").mkdir()
    (world.outside / "evil" / "mod.py").write_text("class Thing:\n    pass\n")
    (world.patchsets / "mark-evil.yaml").write_text(patchset_yaml("mark-evil", [("evil/mod.py", "Thing")]))
    return _link(world.sites[0] / "vllm" / "evil", world.outside / "evil")


def _pycache(world: World) -> Path:
    cache = world.sites[0] / "vllm" / "__pycache__"
    shutil.rmtree(cache)
    (world.outside / "pycache").mkdir()
    (world.outside / "pycache" / "logger.cpython-311.pyc").write_bytes(b"someone else's file")
    return _link(cache, world.outside / "pycache")


def _target_file(world: World) -> Path:
    shutil.copyfile(world.sites[0] / "vllm" / "logger.py", world.outside / "logger.py")
    (world.sites[0] / "vllm" / "logger.py").unlink()
    return _link(world.sites[0] / "vllm" / "logger.py", world.outside / "logger.py")


APPLY = ("apply", "mark-a", "mark-b", "--yes")
APPLIED = (APPLY,)
HOSTILE = (
    Hostile("object-link", (), _object_of_original, APPLY),
    Hostile("state-link", (), lambda w: _link(_store(w) / "state.json", w.outside / "victim.py"), APPLY),
    Hostile("journal-link", (), lambda w: _link(_store(w) / "journal.jsonl", w.outside / "victim.py"), APPLY),
    Hostile("dangling-lock-link", (), lambda w: _link(_store(w) / "lock", w.outside / "created"), APPLY),
    Hostile("store-link", (), lambda w: _link(_store(w), _mkdir(w.outside / "store")), APPLY),
    Hostile("objects-link", (), lambda w: _link(_store(w) / "objects", _mkdir(w.outside / "objs")), APPLY),
    Hostile("target-file-link", (), _target_file, APPLY),
    Hostile("target-folder-link", (), _evil_folder, ("apply", "mark-evil", "--yes")),
    Hostile("pycache-link", (), _pycache, APPLY),
    Hostile("journal-link-at-rollback", APPLIED,
            lambda w: _link(_store(w) / "journal.jsonl", w.outside / "journal.jsonl"), ("rollback", "mark-a")),
    Hostile("state-link-at-rollback", APPLIED,
            lambda w: _link(_store(w) / "state.json", w.outside / "state.json"), ("rollback", "--all")),
    Hostile("object-link-at-rollback", APPLIED,
            lambda w: _link(next((_store(w) / "objects").iterdir()), w.outside / "object"), ("rollback", "--all")),
    Hostile("store-link-at-status", APPLIED,
            lambda w: _link(_store(w), w.outside / "store"), ("status", "mark-a")),
)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def hostile(case: Hostile, root: Path, source: Path) -> Tuple[Done, Path, List[str]]:
    """Run one hostile case; return the result, the planted link and what is wrong."""
    world = build_world(root, source)
    for args in case.setup:
        run_here(world, args)
    link = case.plant(world)
    outside = tree_digest(world.outside)
    inside = {str(p): p.read_bytes() for p in world.targets() if not p.is_symlink()}
    done = run(world, case.args)
    problems = []
    if done.returncode != 4 or "symbolic link" not in done.stderr or str(link) not in done.stderr:
        problems.append(f"not refused naming {link}: exit {done.returncode}: {done.stderr.strip()}")
    if "Traceback" in done.stderr:
        problems.append("traceback")
    if tree_digest(world.outside) != outside:
        problems.append("a file outside the copies changed")
    if {str(p): p.read_bytes() for p in world.targets() if not p.is_symlink()} != inside:
        problems.append("a target file changed although the command was refused")
    return done, link, problems


# --- a copy made unwritable while apply is between planning and its swap --------------------


@dataclass(frozen=True)
class Midway:
    """Stop apply at `stop`, make part of a copy unwritable, let it go on: it must fail, and
    leave every file as it was except those it names (`stuck`)."""

    name: str
    sabotage: Callable[[World, int], None]    # (world, pid of the stopped apply)
    heal: Callable[[World], None]             # make it writable again
    needs: str                                # a `can()` kind
    wrap: Tuple[str, ...] = ()                # command prefix the apply runs under
    stop: Callable[[Expected], str] = lambda expected: "commit:1"
    stuck: Tuple[str, ...] = ()               # files (inside the world) left patched, named


LAST = "lib64/site-packages/vllm"   # the copy transact swaps second
FIRST_TARGET = "lib/site-packages/vllm/logger.py"


def _chattr(flag: str, *paths: Path) -> None:
    subprocess.run(["chattr", flag, *map(str, paths)], check=True, capture_output=True)


def _ro_mount(world: World, pid: int) -> None:
    folder = world.root / LAST
    subprocess.run(["nsenter", "-t", str(pid), "-m", "mount", "--bind", "-o", "ro", str(folder),
                    str(folder)], check=True, capture_output=True)


# Without CAP_DAC_OVERRIDE root obeys mode bits, as any owner does: a 0o555 folder refuses it.
NO_OVERRIDE = ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--")
MIDWAY = (
    Midway("immutable-file", lambda w, pid: _chattr("+i", w.root / LAST / "logger.py"),
           lambda w: _chattr("-i", w.root / LAST / "logger.py"), "chattr"),
    Midway("immutable-folder", lambda w, pid: _chattr("+i", w.root / LAST),
           lambda w: _chattr("-i", w.root / LAST), "chattr"),
    Midway("read-only-folder", lambda w, pid: (w.root / LAST).chmod(0o555),
           lambda w: (w.root / LAST).chmod(0o755), "setpriv", wrap=NO_OVERRIDE),
    Midway("read-only-bind-mount", _ro_mount, lambda w: None, "unshare",
           wrap=("unshare", "-m", "--propagation", "private")),
    # The last swap fails and a file already swapped cannot be put back: it is named.
    Midway("unrestorable-file",
           lambda w, pid: _chattr("+i", w.root / LAST / "sampling_params.py", w.root / FIRST_TARGET),
           lambda w: _chattr("-i", w.root / LAST / "sampling_params.py", w.root / FIRST_TARGET),
           "chattr", stop=lambda e: f"rename:{e.visit('rename', LAST + '/sampling_params.py')}",
           stuck=(FIRST_TARGET,)),
)


def can(kind: str, root: Path) -> Optional[str]:
    """Return why this box cannot set up a `kind` case under `root`, None when it can."""
    probe = root / f"probe-{kind}"
    probe.mkdir(parents=True, exist_ok=True)
    commands = {
        "chattr": ["sh", "-c", f"chattr +i {probe} && ! touch {probe}/x 2>/dev/null; "
                               f"s=$?; chattr -i {probe}; exit $s"],
        "setpriv": ["sh", "-c", f"chmod 555 {probe}; {' '.join(NO_OVERRIDE)} sh -c "
                                f"'! touch {probe}/x 2>/dev/null'; s=$?; chmod 755 {probe}; exit $s"],
        "unshare": ["unshare", "-m", "--propagation", "private", "sh", "-c",
                    f"mount --bind -o ro {probe} {probe} && ! touch {probe}/x 2>/dev/null"],
    }
    try:
        done = subprocess.run(commands[kind], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        return f"{kind} is not available here ({exc})"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return None if done.returncode == 0 else f"{kind} does not work here: {done.stderr.strip()}"


def midway(case: Midway, root: Path, expected: Expected) -> Tuple[Done, List[str]]:
    """Run apply with `case`'s sabotage; return its result and what is wrong right after it
    (the copies' bytes) and after the next command, once the copy is writable again."""
    world = prepare(SCENARIO["apply"], root, Path(), expected.template)
    outside = tree_digest(world.outside)
    process = subprocess.Popen([*case.wrap, sys.executable, "-m", "patchops", *APPLY,
                                *world.site_args()],
                               env=_env(f"{case.stop(expected)}:stop", None),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if not wait_stopped(process):
            out, err = process.communicate()
            return Done(process.returncode, out, err), [f"apply never stopped: {err.strip()}"]
        case.sabotage(world, process.pid)
        resume(process)
        out, err = process.communicate(timeout=120)
        done = Done(process.returncode, out, err)
        problems = _midway_problems(case, world, expected, done)
    finally:
        if process.poll() is None:
            process.kill()
        case.heal(world)
    problems += status_problems(world)
    if files_of(world) != expected.before:
        problems.append("the next command did not restore the files left changed")
    if tree_digest(world.outside) != outside:
        problems.append("a file outside the copies changed")
    return done, problems


def _midway_problems(case: Midway, world: World, expected: Expected, done: Done) -> List[str]:
    problems = []
    if done.returncode not in (4, 5) or "Traceback" in done.stderr:
        problems.append(f"exit {done.returncode}: {done.stderr.strip()}")
    now = files_of(world)
    for path, data in now.items():
        want = expected.after[path] if path in case.stuck else expected.before[path]
        if data != want:
            problems.append(f"right after the failed apply {path} is "
                            f"{'patched' if data == expected.after[path] else 'not as it was'}")
    for path in case.stuck:
        if str(world.root / path) not in done.stderr:
            problems.append(f"the error does not name {path}, left patched: {done.stderr.strip()}")
    if not case.stuck and "nothing was changed" not in done.stderr:
        problems.append(f"the error does not say every file is as before: {done.stderr.strip()}")
    problems += [f"temp file left: {p}" for p in world.root.rglob(f"*{TMP_SUFFIX}")]
    return problems
