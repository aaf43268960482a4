#!/usr/bin/env python3
"""Real vLLM as the judge of `patchops lint`: record verdicts, compare, inspect one case.

    python scripts/conformance.py compare [--version V]...        # the table (no vLLM needed)
    python scripts/conformance.py record [--version V]... [--all-versions] [--all] [--only GLOB]
    python scripts/conformance.py show CASE_ID                    # the case, findings, verdicts
    python scripts/conformance.py baseline                        # accept today's numbers

`record` installs each version into ~/.cache/patchops/vllm-venvs/<version> when absent and
re-runs the cases whose verdict is missing or stale (all of them with --all); by default it
records 0.8.5 and the newest release, with --all-versions every recorded one (harness.VERSIONS).
A version in harness.SUBSET_VERSIONS records the stated subset of the corpus (harness.in_subset).
See tests/conformance/README.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]  # the suite it drives; devtools/ beside src/

from conformance import compare, harness  # noqa: E402
from conformance.cases import all_cases  # noqa: E402


def _select(cases, only):
    if not only:
        return cases
    return [c for c in cases if any(fnmatch.fnmatchcase(c.id, pattern) for pattern in only)]


def cmd_record(args) -> int:
    every_case = all_cases()
    for version in harness.versions_to_record(args.version, args.all_versions):
        cases = _select(harness.cases_for(version, every_case), args.only)
        todo = cases if args.all or args.only else harness.stale(cases, version)
        gone = harness.prune(version, harness.cases_for(version, every_case))
        if gone:
            print(f"vllm {version}: dropped {len(gone)} verdicts of removed cases")
        if not todo:
            print(f"vllm {version}: every verdict is current")
            continue
        started = time.monotonic()
        report = harness.record(version, todo, keep_logs=args.keep_logs and
                                Path(args.keep_logs) / version)
        print(f"vllm {version}: recorded {report.cases} cases in {report.seconds:.0f} s "
              f"(venv ready in {report.venv_seconds:.0f} s, {report.venv_gib} GiB; "
              f"{time.monotonic() - started:.0f} s in all)")
    return 0


def cmd_compare(args) -> int:
    versions = args.version or harness.VERSIONS
    cases = all_cases()
    results = compare.compare_all(versions, cases)
    print(compare.table(results, len(cases)))
    if args.verbose:
        print(compare.details(results))
    return 0


def cmd_show(args) -> int:
    print(compare.show(args.case, args.version or harness.VERSIONS))
    return 0


def cmd_baseline(args) -> int:
    cases = all_cases()
    results = compare.compare_all(harness.VERSIONS, cases)
    compare.write_baseline(results)
    print(compare.table(results, len(cases)))
    print(f"wrote {compare.BASELINE}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run real vLLM on missing or stale cases")
    rec.add_argument("--version", action="append", help="a vLLM release (repeatable)")
    rec.add_argument("--all-versions", action="store_true", help="every version with recorded verdicts")
    rec.add_argument("--all", action="store_true", help="re-record every case")
    rec.add_argument("--only", action="append", help="case id glob (repeatable)")
    rec.add_argument("--keep-logs", metavar="DIR", help="keep each case's vLLM log under DIR")
    rec.set_defaults(run=cmd_record)
    cmp_ = sub.add_parser("compare", help="print the agreement table per version")
    cmp_.add_argument("--version", action="append")
    cmp_.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    cmp_.set_defaults(run=cmd_compare)
    show = sub.add_parser("show", help="one case: files, patchops findings, vLLM verdicts")
    show.add_argument("case")
    show.add_argument("--version", action="append")
    show.set_defaults(run=cmd_show)
    base = sub.add_parser("baseline", help="write today's disagreements as the known baseline")
    base.set_defaults(run=cmd_baseline)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
