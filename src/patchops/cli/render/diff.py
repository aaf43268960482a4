"""Unified diffs on the terminal: coloured, as `--stat` lines, or byte-exact for pipes."""

from __future__ import annotations

from typing import List

from patchops.cli.output import Line, Output


def colour_diff(console: Output, diff: str) -> None:
    """Print a unified diff, red for removed lines and green for added ones."""
    for line in diff.splitlines():
        style = None
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        console.print(Line(line, style=style or ""))


def diff_stat(diff: str) -> List[str]:
    """Return `git diff --stat` lines for a unified diff: ` vllm/x.py | 4 ++--`, then a total."""
    files: List[List] = []
    copies = 1
    for line in diff.splitlines():
        if line.startswith("# identical in "):
            copies = int(line.split()[3])
        elif line.startswith("# in "):
            copies = 1
        elif line.startswith("+++ "):
            files.append([line[6:], copies, 0, 0])
        elif files and line.startswith("+"):
            files[-1][2] += 1
        elif files and line.startswith("-") and not line.startswith("--- "):
            files[-1][3] += 1
    width = max((len(f[0]) for f in files), default=0)
    rows = [f" {name:<{width}} | {added + removed:>3} {'+' * added}{'-' * removed}"
            + (f"  (x{copies} copies)" if copies > 1 else "") for name, copies, added, removed in files]
    changed = sum(f[1] for f in files)
    added, removed = sum(f[2] * f[1] for f in files), sum(f[3] * f[1] for f in files)
    rows.append(f" {_count(changed, 'file')} changed, {_count(added, 'insertion')}(+), "
                f"{_count(removed, 'deletion')}(-)")   # as git words it
    return rows


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def raw(text: str) -> None:
    """Write text exactly as it is (a patch: rich would re-wrap it and trim trailing spaces)."""
    import sys

    sys.stdout.write(text)
    sys.stdout.flush()


def file_diffs(console: Output, diffs) -> None:
    """Print each diff, coloured on a terminal and byte-exact for pipes; `#` lines name copies."""
    several = len({site for d in diffs for site in d.sites}) > 1
    for d in diffs:
        notes = []
        if several:
            notes.append(f"# {', '.join(map(str, d.sites))}")
        if d.drifted:
            notes.append(f"# {d.path}: changed since patchops wrote it ({', '.join(d.patchsets)})")
        header = "".join(note + "\n" for note in notes)
        if console.is_terminal:
            for note in notes:
                console.print(Line(note, style="dim"))
            colour_diff(console, d.text)
        else:
            raw(header + d.text)
    if not diffs:
        console.print("nothing patched: no file differs from its original")
