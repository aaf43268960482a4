"""Print patchops' reliability report: crashes, I/O faults, races, hostile links, generated input.

Runs the reliability suite's harness (devtools/reliability_harness.py) over every point, not the
sample CI runs: a real SIGKILL at every write step of apply and rollback on two copies of real
vLLM files, ENOSPC and EIO at each of them, every race and hostile-filesystem case, a copy made
unwritable (immutable, read-only folder or mount) between apply's plan and its swap, and
hundreds of generated serve specs, configs, commands and patchsets. Exits 1 if any promise broke.

    python bench/reliability.py               # the full matrix, a few minutes on 2 cores
    python bench/reliability.py --jobs 2      # the same, two points at a time
    python bench/reliability.py --smoke       # a handful of each (the pytest run checks this)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
# devtools/ lives beside src/, not in the package.
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from devtools import reliability_harness as harness  # noqa: E402

# ENOSPC is what a full disk returns to writes and creates; EIO can come from any call.
ENOSPC_STEPS = ("mkdir", "write", "append")


def source_tree() -> Path:
    from devtools.wheelcache import site_packages

    return site_packages(harness.VERSION)


@dataclass
class Tally:
    tried: int = 0
    held: int = 0
    failures: List[str] = field(default_factory=list)

    def add(self, what: str, problems: List[str]) -> None:
        self.tried += 1
        if problems:
            self.failures += [f"{what}: {p}" for p in problems]
        else:
            self.held += 1


@dataclass
class Report:
    kills: Tally = field(default_factory=Tally)
    faults: Tally = field(default_factory=Tally)
    races: Tally = field(default_factory=Tally)
    hostile: Tally = field(default_factory=Tally)
    midway: Tally = field(default_factory=Tally)
    generated: Tally = field(default_factory=Tally)
    lost: int = 0
    half: int = 0
    outside: int = 0

    def problems(self) -> List[str]:
        return [p for t in (self.kills, self.faults, self.races, self.hostile, self.midway,
                          self.generated)
                for p in t.failures]

    def internal_errors(self) -> int:
        return sum("internal error" in p or "Traceback" in p for p in self.problems())


def _point(job: Tuple[str, str, int, str, str, str]) -> Tuple[str, str, int, str, "harness.Verdict"]:
    scenario, step, n, action, base, source = job
    clean = _EXPECTED[scenario]
    root = Path(base) / f"{scenario}-{step}-{n}-{action}"
    _, verdict = harness.interrupt(harness.SCENARIO[scenario], root, Path(source), clean, step, n, action)
    shutil.rmtree(root, ignore_errors=True)
    return scenario, step, n, action, verdict


_EXPECTED: Dict[str, "harness.Expected"] = {}


def crash_matrix(report: Report, base: Path, source: Path, *, smoke: bool, jobs: int) -> None:
    """SIGKILL at every write step, ENOSPC and EIO at each; judge each run."""
    work = []
    scenarios = harness.SCENARIOS[:1] if smoke else harness.SCENARIOS
    for scenario in scenarios:
        _EXPECTED[scenario.name] = harness.expect(scenario, base / f"{scenario.name}-clean", source)
        clean = _EXPECTED[scenario.name]
        every = 10 ** 6 if smoke else 1
        for step, n in harness.points(clean, steps=("rename",) if smoke else harness.WRITE_STEPS, every=every):
            work.append((scenario.name, step, n, "kill"))
            work.append((scenario.name, step, n, "eio"))
            if step in ENOSPC_STEPS or smoke:
                work.append((scenario.name, step, n, "enospc"))
    jobs_args = [(*w, str(base), str(source)) for w in work]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, initializer=_share, initargs=(_EXPECTED,)) as pool:
            results = list(pool.map(_point, jobs_args))
    else:
        results = [_point(job) for job in jobs_args]
    for scenario, step, n, action, verdict in results:
        tally = report.kills if action == "kill" else report.faults
        tally.add(f"{scenario} {step}:{n}:{action}", verdict.problems)
        report.lost += verdict.lost
        report.half += verdict.half
        report.outside += verdict.outside


def _share(expected: Dict[str, "harness.Expected"]) -> None:
    _EXPECTED.update(expected)


def races(report: Report, base: Path, source: Path, *, smoke: bool) -> None:
    for spec in harness.RACES[:1] if smoke else harness.RACES:
        _, _, problems = harness.race(spec, base / f"race-{spec.name}", source)
        report.races.add(spec.name, problems)
        report.half += sum("in one copy and" in p for p in problems)
        report.outside += sum("outside the copies" in p for p in problems)


def hostile(report: Report, base: Path, source: Path, *, smoke: bool) -> None:
    for case in harness.HOSTILE[:1] if smoke else harness.HOSTILE:
        _, _, problems = harness.hostile(case, base / f"hostile-{case.name}", source)
        report.hostile.add(case.name, problems)
        report.outside += sum("outside the copies" in p for p in problems)


def midway(report: Report, base: Path, *, smoke: bool) -> List[str]:
    """Make a copy unwritable between apply's plan and its swap; return the cases not tried."""
    skipped = []
    for case in harness.MIDWAY[:1] if smoke else harness.MIDWAY:
        reason = harness.can(case.needs, base)
        if reason:
            skipped.append(f"{case.name}: {reason}")
            continue
        _, problems = harness.midway(case, base / f"midway-{case.name}", _EXPECTED["apply"])
        report.midway.add(case.name, problems)
        report.half += sum("right after" in p for p in problems)
    return skipped


def generated_inputs(report: Report, base: Path, source: Path, *, examples: int) -> None:
    """Run each generator `examples` times, counting every input (no shrinking, no stop)."""
    from devtools import generated_inputs as generated

    world = harness.build_world(base / "generated-world", source)
    kinds = [
        ("serve spec", generated.SPEC_TEXT, lambda x: generated.check_lint(base / "gen", x)),
        ("vllm config", generated.CONFIG_TEXT,
         lambda x: generated.check_lint(base / "gen", x, kind="config.yaml")),
        ("command", generated.COMMAND, lambda x: generated.check_command(base / "gen", x)),
        ("patchset", generated.PATCHSET_TEXT, lambda x: generated.check_patchset(world, x)),
    ]
    for name, strategy, check in kinds:
        _generate(report, name, strategy, check, examples)


def _generate(report: Report, name: str, strategy, check, examples: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings

    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value):
        report.generated.add(f"{name} {value!r:.80}", check(value))

    run()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a handful of each, for the test suite")
    parser.add_argument("--jobs", type=int, default=1, help="crash points run at once")
    parser.add_argument("--examples", type=int, default=None, help="generated inputs per kind")
    args = parser.parse_args()
    examples = args.examples or (5 if args.smoke else 300)
    for key in [k for k in os.environ if k.startswith("PATCHOPS_")]:
        del os.environ[key]
    os.environ["PATCHOPS_ROOTS"] = ""
    source = source_tree()
    report = Report()
    started = time.perf_counter()
    # A private cache (facts of the copies it builds, about 1 GB), removed with the run.
    with tempfile.TemporaryDirectory(prefix="patchops-reliability-") as tmp, \
            tempfile.TemporaryDirectory(prefix="patchops-cache-") as cache:
        os.environ["PATCHOPS_CACHE"] = cache
        base = Path(tmp)
        crash_matrix(report, base, source, smoke=args.smoke, jobs=args.jobs)
        races(report, base, source, smoke=args.smoke)
        hostile(report, base, source, smoke=args.smoke)
        skipped = midway(report, base, smoke=args.smoke)
        generated_inputs(report, base, source, examples=examples)
    elapsed = time.perf_counter() - started
    print_report(report, elapsed, skipped)
    return 1 if report.problems() or report.lost else 0


def print_report(report: Report, elapsed: float, skipped: List[str]) -> None:
    rows = [
        ("kill points (SIGKILL at a write step)", report.kills, "survived"),
        ("faults injected (ENOSPC, EIO)", report.faults, "undone or completed"),
        ("races (one held at a named point)", report.races, "consistent"),
        ("hostile filesystem cases", report.hostile, "refused"),
        ("unwritable between plan and swap", report.midway, "undone in-process"),
        ("generated inputs", report.generated, "kept the promise"),
    ]
    print(f"| {'measure':<40} | {'tried':>6} | {'held':>6} | meaning of held |")
    print(f"| {'-' * 40} | {'-' * 6} | {'-' * 6} | --- |")
    for label, tally, meaning in rows:
        print(f"| {label:<40} | {tally.tried:>6} | {tally.held:>6} | {meaning} |")
    for label, value in (("files lost", report.lost), ("half-applied transactions", report.half),
                         ("writes outside a copy", report.outside),
                         ("internal errors", report.internal_errors())):
        print(f"| {label:<40} | {value:>6} | {'':>6} | must be 0 |")
    print(f"\n{elapsed:.0f} s")
    for case in skipped:
        print("NOT TRIED", case)
    for problem in report.problems()[:50]:
        print("FAILED", problem)


if __name__ == "__main__":
    sys.exit(main())
