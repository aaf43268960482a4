"""A wheel holds every subpackage, the shipped facts and the shipped patchsets."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_code_facts_and_patchsets(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path),
                            str(ROOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    [wheel] = tmp_path.glob("vllm_patchops-*.whl")  # distribution vllm-patchops, package patchops
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {f"patchops/{p.relative_to(ROOT / 'src' / 'patchops').as_posix()}"
               for p in (ROOT / "src" / "patchops").rglob("*.py")}
    assert sources <= names, sorted(sources - names)
    for facts in (ROOT / "src" / "patchops" / "data" / "facts").glob("*.json"):
        assert f"patchops/data/facts/{facts.name}" in names
    for patchset in (ROOT / "patchsets").glob("*.yaml"):
        assert f"patchops/patchsets/{patchset.name}" in names
