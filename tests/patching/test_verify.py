"""`patchops verify` on full copies of real vLLM wheels: every file against its RECORD hash."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil

import pytest
from typer.testing import CliRunner

from conftest import NEWEST, vendor_hardcode
from tests.support.full_copy import flip_byte, full_copy, unlink_write
from patchops.core import digest_cache as digest_cache_module
from patchops import patching
from patchops.host import pypi
from patchops.patching import verify
from tests.support import wheelcache
from patchops.cli.app import DRIFTED, OK, USAGE_OR_INPUT_ERROR, app
from patchops.host.locate import locate_site
from patchops.patchset.model import get_patchset

pytestmark = pytest.mark.vllm

RUNNER = "vllm/v1/worker/gpu_model_runner.py"
ARG = "vllm/engine/arg_utils.py"


@pytest.fixture(scope="module")
def record_entries():
    site = wheelcache.site_packages(NEWEST, full=True)
    return verify.read_record(verify.find_record(site, NEWEST))


@pytest.fixture
def site(tmp_path):
    return full_copy(NEWEST, tmp_path / "site-packages")


@pytest.fixture(autouse=True)
def digest_cache(tmp_path, monkeypatch):
    """Keep each test's digest cache to itself (the wheel cache stays shared)."""
    shared = pypi.cache_root()
    monkeypatch.setattr(pypi, "cache_root", lambda: shared)
    monkeypatch.setenv("PATCHOPS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "verify"


def states(result):
    return [(f.path, f.state) for f in result.findings]


def test_record_digest_is_urlsafe_base64_without_padding():
    data = b"\xfb\xff" * 7  # its sha256 has '-' and '_' in urlsafe base64
    raw = hashlib.sha256(data).digest()
    text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert "=" not in text and ("-" in text or "_" in text)
    assert verify.b64_digest_to_hex(text) == hashlib.sha256(data).hexdigest()


def test_read_record_parses_quoted_paths_and_skips_unhashed(tmp_path):
    record = tmp_path / "RECORD"
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"x").digest()).decode().rstrip("=")
    record.write_text(f'"vllm/a,b.py",sha256={digest},1\nvllm/__pycache__/a.pyc,,\n'
                      f"x.dist-info/RECORD,,\n")
    [entry] = verify.read_record(record)
    assert (entry.path, entry.digest, entry.size) == ("vllm/a,b.py", hashlib.sha256(b"x").hexdigest(), 1)
    record.write_text("vllm/a.py,md5,3\n")
    with pytest.raises(verify.PatchopsError, match=r"RECORD:1: hash 'md5' of vllm/a.py"):
        verify.read_record(record)


def test_fresh_full_copy_has_no_difference(site, record_entries):
    result = verify.verify_copy(site, NEWEST)
    assert result.error is None
    assert result.findings == ()
    assert not result.differs
    assert result.listed == len(record_entries) > 5000
    assert result.hashed == result.listed  # every size matched, so every file was hashed


def _largest(entries):
    return max(entries, key=lambda e: e.size)


def _last_binary(entries):
    return [e for e in entries if e.path.endswith(".so")][-1]


def _header(entries):
    return next(e for e in entries if e.path.endswith((".h", ".hpp", ".cuh")))


def _metadata(entries):
    return next(e for e in entries if e.path.endswith(".dist-info/METADATA"))


def _arg_utils(entries):
    return next(e for e in entries if e.path == ARG)


@pytest.mark.parametrize("pick", [_largest, _last_binary, _header, _metadata, _arg_utils])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_one_byte_change_anywhere_is_found(site, record_entries, pick, where):
    entry = pick(record_entries)
    offset = {"first": 0, "middle": entry.size // 2, "last": entry.size - 1}[where]
    flip_byte(site / entry.path, offset)
    result = verify.verify_copy(site, NEWEST)
    assert states(result) == [(entry.path, verify.MODIFIED)]
    assert result.differs
    assert result.hashed == result.listed  # same size: only the hash could tell


def test_a_size_change_needs_no_hash(site):
    path = site / ARG
    unlink_write(path, path.read_bytes() + b"\n")
    result = verify.verify_copy(site, NEWEST)
    assert states(result) == [(ARG, verify.MODIFIED)]
    assert result.hashed == result.listed - 1
    assert "bytes, RECORD says" in result.findings[0].detail


def test_parallel_and_serial_hashing_agree(site, record_entries):
    flip_byte(site / _largest(record_entries).path, 12345)
    flip_byte(site / ARG, 100)
    serial = verify.verify_copy(site, NEWEST, workers=1)
    parallel = verify.verify_copy(site, NEWEST, workers=4)
    assert serial.findings == parallel.findings and len(serial.findings) == 2


def test_a_warm_run_hashes_nothing_and_still_sees_an_in_place_change(tmp_path, monkeypatch, digest_cache):
    # Its own inodes: another run linking the shared cache's files would move their ctime.
    site = full_copy(NEWEST, tmp_path / "own-inodes", link=False)
    target = site / ARG
    # Every file counts as just written (however long a loaded machine took to copy them):
    # too fresh to trust its stamps, so nothing is cached.
    monkeypatch.setattr(digest_cache_module, "RACY_SECONDS", 1e9)
    assert verify.verify_copy(site, NEWEST).hashed > 5000
    assert not digest_cache.exists()
    monkeypatch.setattr(digest_cache_module, "RACY_SECONDS", 0.0)
    assert verify.verify_copy(site, NEWEST).hashed > 5000
    warm = verify.verify_copy(site, NEWEST)
    assert (warm.hashed, warm.findings) == (0, ())

    before = os.stat(target)
    with open(target, "r+b") as handle:  # same inode, same size, mtime put back: only ctime moves
        handle.seek(500)
        byte = handle.read(1)
        handle.seek(500)
        handle.write(bytes([byte[0] ^ 1]))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    changed = verify.verify_copy(site, NEWEST)
    assert states(changed) == [(ARG, verify.MODIFIED)] and changed.hashed == 1
    assert verify.verify_copy(site, NEWEST, cache=False).hashed == changed.listed
    shutil.rmtree(site)  # 840 MB


def test_missing_and_extra_python_files(site):
    (site / "vllm/envs.py").unlink()
    (site / "vllm/engine/hand_added.py").write_text("x = 1\n")
    (site / "vllm/engine/notes.txt").write_text("not python\n")
    (site / "vllm/engine/__pycache__").mkdir(exist_ok=True)
    (site / "vllm/engine/__pycache__/hand_added.cpython-311.pyc").write_bytes(b"\0")
    result = verify.verify_copy(site, NEWEST)
    assert states(result) == [("vllm/engine/hand_added.py", verify.EXTRA),
                              ("vllm/envs.py", verify.MISSING)]


def test_patchops_writes_are_marked_with_their_patchset(site):
    copy = locate_site(site)
    patching.commit_apply(patching.plan_apply([copy], [get_patchset("decode-step-timing")]))
    result = verify.verify_copy(site, NEWEST)
    assert [(f.path, f.state, f.patchsets) for f in result.findings] == [
        (RUNNER, verify.PATCHED, ("decode-step-timing",))]
    assert not result.differs

    path = site / RUNNER
    path.write_bytes(path.read_bytes().replace(b"import os as _patchops_os", b"import os as _patchops_oz"))
    [finding] = verify.verify_copy(site, NEWEST).findings
    assert (finding.state, finding.patchsets) == (verify.MODIFIED, ("decode-step-timing",))
    assert "changed since patchops wrote it" in finding.detail


def test_a_patchops_write_over_a_vendor_edit_still_differs(site):
    path = site / ARG
    unlink_write(path, path.read_bytes())  # its own inode, before the vendor edit writes in place
    vendor_hardcode(site)
    assert states(verify.verify_copy(site, NEWEST)) == [(ARG, verify.MODIFIED)]
    copy = locate_site(site)
    patching.commit_apply(patching.plan_apply([copy], [get_patchset("corex-eager-allreduce")]))
    # Patched back to upstream's bytes, which RECORD has: nothing differs any more.
    assert verify.verify_copy(site, NEWEST).findings == ()

    runner = site / RUNNER
    unlink_write(runner, b"# vendor build 4.2\n" + runner.read_bytes())
    patching.commit_apply(patching.plan_apply([copy], [get_patchset("decode-step-timing")]))
    [finding] = verify.verify_copy(site, NEWEST).findings
    assert (finding.path, finding.state, finding.patchsets) == (
        RUNNER, verify.MODIFIED, ("decode-step-timing",))
    assert "already differed from RECORD" in finding.detail


def test_cli_exit_codes_and_json(site, tmp_path):
    run = CliRunner()
    env = {"PATCHOPS_ROOTS": "", "PYTHONPATH": "", "PATCHOPS_CACHE": str(tmp_path / "cache")}
    clean = run.invoke(app, ["verify", "--site", str(site)], env=env)
    assert clean.exit_code == OK, clean.output
    assert "no difference" in clean.output

    flip_byte(site / ARG, 10)
    changed = run.invoke(app, ["verify", "--site", str(site), "--json"], env=env)
    assert changed.exit_code == DRIFTED
    [copy] = json.loads(changed.output)
    assert copy["differs"] is True and copy["version"] == NEWEST
    assert [(f["path"], f["state"]) for f in copy["files"]] == [(ARG, "modified")]

    bare = tmp_path / "bare"
    (bare / "vllm").mkdir(parents=True)
    (bare / "vllm/__init__.py").write_text("")
    (bare / "vllm/_version.py").write_text("__version__ = '0.33.0'\n")
    unverifiable = run.invoke(app, ["verify", "--site", str(bare)], env=env)
    assert unverifiable.exit_code == USAGE_OR_INPUT_ERROR
    assert "no vllm-*.dist-info/RECORD" in unverifiable.output
