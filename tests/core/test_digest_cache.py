"""The digest cache trusts a file's stamp only as git's index does, and answers only its own scope;
the verdict cache answers only the key it was written for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchops.core import digest_cache
from patchops.patching import status_cache as verdicts
from patchops.core.digest_cache import DigestCache, sha256


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCHOPS_CACHE", str(tmp_path / "cache"))


def hashed(cache: DigestCache, path: Path) -> str:
    info = os.stat(path)
    return cache.sha256(str(path), path.read_bytes(), info)


@pytest.fixture
def old_file(tmp_path, monkeypatch):
    monkeypatch.setattr(digest_cache, "RACY_SECONDS", -3600.0)  # as if written an hour ago
    path = tmp_path / "arg_utils.py"
    path.write_bytes(b"enforce_eager = True\n")
    return path


def test_a_digest_is_kept_for_the_next_run_and_answered_without_hashing(old_file, monkeypatch):
    first = DigestCache("/site", "targets")
    assert hashed(first, old_file) == sha256(old_file.read_bytes())
    first.save()
    monkeypatch.setattr(digest_cache, "sha256", lambda data: pytest.fail("hashed a file whose stamp is known"))
    assert hashed(DigestCache("/site", "targets"), old_file) == first.new[str(old_file)][6]


def test_an_edit_in_place_that_keeps_size_and_mtime_is_hashed_again(old_file):
    first = DigestCache("/site", "targets")
    hashed(first, old_file)
    first.save()
    before = os.stat(old_file)
    old_file.write_bytes(b"enforce_eager = None\n"[:before.st_size].ljust(before.st_size, b"\n"))
    os.utime(old_file, ns=(before.st_atime_ns, before.st_mtime_ns))  # only ctime moved
    assert hashed(DigestCache("/site", "targets"), old_file) == sha256(old_file.read_bytes())


def test_a_file_written_within_the_margin_is_not_kept(tmp_path):
    path = tmp_path / "fresh.py"
    path.write_bytes(b"x = 1\n")
    cache = DigestCache("/site", "targets")
    hashed(cache, path)
    cache.save()
    assert cache.new == {} and not cache.path.exists()


def test_another_scope_and_a_damaged_file_are_only_slower(old_file):
    first = DigestCache("/site", "targets")
    hashed(first, old_file)
    first.save()
    assert DigestCache("/other-site", "targets").old == {}
    first.path.write_text("{not json")
    assert DigestCache("/site", "targets").old == {}
    # A cache file of another scope under this scope's name (a crc collision) is not read.
    first.path.write_text('{"version": 2, "site": "/elsewhere", "files": {"x": []}}')
    assert DigestCache("/site", "targets").old == {}


class _Patchset:
    def __init__(self, text):
        self.text = text


def test_a_verdict_answers_only_its_own_key(tmp_path):
    target = tmp_path / "arg_utils.py"
    key = verdicts.key("ab" * 32, "engine/arg_utils.py", [_Patchset("name: a\n")], "0.8.5")
    verdicts.put(key, target, {"a": ("not-applied", f"{target}: not applied")})
    assert verdicts.get(key, tmp_path / "b.py") == {"a": ("not-applied", f"{tmp_path / 'b.py'}: not applied")}
    other_text = verdicts.key("ab" * 32, "engine/arg_utils.py", [_Patchset("name: a\n# edited\n")], "0.8.5")
    assert other_text != key and verdicts.get(other_text, target) is None
    # Another key whose crc names the same entry file is not answered from it.
    verdicts._entry(other_text).write_text(verdicts._entry(key).read_text())
    assert verdicts.get(other_text, target) is None
