"""A copy patchops cannot write is named at planning, with the cause and the fix that fits it:
`apply --dry-run` and `status` say so, `apply` refuses before printing a plan or writing."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Tuple

import pytest

from devtools import reliability_harness as harness
from reliability_fixtures import source  # noqa: F401 (fixtures)

COPY = harness.LAST     # the lib64 copy is made unwritable; lib stays writable


@dataclass(frozen=True)
class Blocked:
    name: str
    needs: str
    block: Callable[[harness.World], None]
    heal: Callable[[harness.World], None]
    says: Tuple[str, ...]                   # the cause and the fix, in the error
    wrap: Tuple[str, ...] = ()


CASES = (
    # Mounted inside the command's own mount namespace (see _wrap).
    Blocked("read-only-mount", "unshare", lambda w: None, lambda w: None,
            ("is on a read-only filesystem (mounted at", "read-write (root does not help")),
    Blocked("immutable-file", "chattr", lambda w: harness._chattr("+i", w.root / COPY / "logger.py"),
            lambda w: harness._chattr("-i", w.root / COPY / "logger.py"),
            ("logger.py is immutable (chattr +i)", "`chattr -i ")),
    Blocked("read-only-folder", "setpriv", lambda w: (w.root / COPY).chmod(0o555),
            lambda w: (w.root / COPY).chmod(0o755),
            ("vllm is read-only (mode 0o555)", "`chmod u+w "), harness.NO_OVERRIDE),
    Blocked("not-the-owner", "setpriv", lambda w: os.chown(w.root / COPY, 12345, 12345),
            lambda w: os.chown(w.root / COPY, 0, 0),
            ("vllm belongs to uid 12345 (mode 0o755), not to uid 0", "run patchops as its owner"),
            harness.NO_OVERRIDE),
)


def _wrap(case: Blocked, world: harness.World):
    if case.name != "read-only-mount":
        return case.wrap
    folder = world.root / COPY
    return ("unshare", "-m", "--propagation", "private", "sh", "-c",
            f'mount --bind -o ro {folder} {folder} && exec "$@"', "sh")


def patchops(case, world, *args):
    return subprocess.run([*_wrap(case, world), sys.executable, "-m", "patchops", *args,
                           *world.site_args()], env=harness._env(None, None), capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_unwritable_copy_is_named_with_its_cause_before_planning(case, source, tmp_path):
    reason = harness.can(case.needs, tmp_path)
    if reason:
        pytest.skip(reason)
    world = harness.build_world(tmp_path / "world", source)
    before = harness.files_of(world)
    case.block(world)
    try:
        dry = patchops(case, world, "apply", "--dry-run", *harness.APPLY[1:-1])
        real = patchops(case, world, *harness.APPLY)
        status = patchops(case, world, "status", *harness.APPLY[1:-1])
    finally:
        case.heal(world)
    copy = str(world.root / COPY.rsplit("/", 1)[0])
    for done, out in ((dry, dry.stderr), (real, real.stderr), (status, status.stdout)):
        assert f"cannot write the vLLM copy in {copy}" in out, out
        for words in case.says:
            assert words in out, out
        assert "Traceback" not in done.stderr
    assert dry.returncode == 5 and real.returncode == 5 and status.returncode == 0
    assert "applies" not in real.stdout          # refused before the plan was printed
    assert harness.files_of(world) == before
    assert not (world.root / "lib" / "site-packages" / ".patchops").exists()


def test_hint_names_the_copy_python_imports_when_another_cannot_be_written(source, tmp_path):
    reason = harness.can("chattr", tmp_path)
    if reason:
        pytest.skip(reason)
    world = harness.build_world(tmp_path / "world", source)
    imported = world.root / "lib" / "site-packages"
    env = harness._env(None, None)
    env["PYTHONPATH"] += os.pathsep + str(imported)     # `import vllm` loads the lib copy
    harness._chattr("+i", world.root / COPY / "logger.py")
    try:
        done = subprocess.run([sys.executable, "-m", "patchops", "apply", "--dry-run",
                               *harness.APPLY[1:-1], *world.site_args()], env=env,
                              capture_output=True, text=True, timeout=120)
    finally:
        harness._chattr("-i", world.root / COPY / "logger.py")
    assert done.returncode == 5, done.stderr
    assert f"or pass --site {imported} to patch only the copy `import vllm` loads" in done.stderr
