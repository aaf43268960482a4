"""A wheel holds every subpackage, the shipped facts and the shipped patchsets, and no test helper."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_code_facts_and_patchsets(tmp_path):
    # Build from a copy: an in-tree build/ keeps files a move left behind and ships them.
    tree = tmp_path / "tree"
    for name in ("pyproject.toml", "README.md", "src", "patchsets"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            tree.mkdir(exist_ok=True)
            shutil.copy2(source, tree / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path),
                            str(tree)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    [wheel] = tmp_path.glob("vllm_patchops-*.whl")  # distribution vllm-patchops, package patchops
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {f"patchops/{p.relative_to(ROOT / 'src' / 'patchops').as_posix()}"
               for p in (ROOT / "src" / "patchops").rglob("*.py")}
    assert sources <= names, sorted(sources - names)
    shipped_code = {name for name in names if name.endswith(".py")}
    assert shipped_code == sources, sorted(shipped_code - sources)  # e.g. tests/support/*
    facts = sorted((ROOT / "src" / "patchops" / "lint" / "facts" / "shipped").glob("*.json*"))
    assert len(facts) > 10   # index.json and a pack per minor series
    for path in facts:
        assert f"patchops/lint/facts/shipped/{path.name}" in names
    assert wheel.stat().st_size < 5 * 2 ** 20   # facts of every release since 0.6.0 included
    for reads in (ROOT / "src" / "patchops" / "lint" / "facts" / "reads").glob("*.json.gz"):
        assert f"patchops/lint/facts/reads/{reads.name}" in names   # facts/vouch.py reads them
    for patchset in (ROOT / "patchsets").glob("*.yaml"):
        assert f"patchops/patchsets/{patchset.name}" in names
