"""The fast loop's marker derivation and wheel ban (tests/support/offline_loop.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from tests.support import offline_loop, wheelcache

ROOT = Path(__file__).resolve().parents[1]


def _unpack_085():
    return wheelcache.site_packages("0.8.5")


def _indirect():
    return _unpack_085()


def _pure():
    return 1 + 1


def _item(function, fixturenames=(), fixtures=None):
    info = SimpleNamespace(name2fixturedefs={n: [SimpleNamespace(func=f)] for n, f in (fixtures or {}).items()})
    return SimpleNamespace(function=function, fixturenames=list(fixturenames), _fixtureinfo=info)


def test_a_test_calling_a_helper_two_calls_from_the_cache_is_vllm():
    def test_body():
        _indirect()

    assert offline_loop.reads_wheels(_item(test_body))


def test_a_test_that_never_reaches_the_cache_is_not_vllm():
    def test_body():
        _pure()

    assert not offline_loop.reads_wheels(_item(test_body))


def test_a_fixture_that_builds_a_tree_makes_its_tests_vllm():
    def test_body(tree):
        return tree

    def tree():
        return _unpack_085()

    assert offline_loop.reads_wheels(_item(test_body, ["tree"], {"tree": tree}))
    assert offline_loop.reads_wheels(_item(test_body, ["vllm_site"]))
    assert not offline_loop.reads_wheels(_item(test_body, ["tmp_path"], {"tmp_path": _pure}))


def test_library_code_is_not_followed():
    # patchops.lint.facts.cache reads copies, not wheels: following the library would mark
    # every lint test.
    from patchops.lint.facts.cache import facts_for_copy

    assert not offline_loop._ours(facts_for_copy)
    assert offline_loop._ours(_indirect)


def test_fast_loop_is_named_by_the_marker_expression_or_the_switch(monkeypatch):
    monkeypatch.delenv(offline_loop.SWITCH, raising=False)
    assert offline_loop.wanted("not vllm")
    assert offline_loop.wanted("not  vllm and not ray")
    assert not offline_loop.wanted("vllm")
    assert not offline_loop.wanted("")
    monkeypatch.setenv(offline_loop.SWITCH, "1")
    assert offline_loop.wanted("")


def test_under_the_switch_every_way_to_a_wheel_raises():
    script = ("from tests.support import offline_loop, wheelcache\n"
              "from patchops.host import pypi\n"
              "offline_loop.forbid_wheels()\n"
              "for call in (lambda: wheelcache.site_packages('0.8.5'), lambda: pypi.vllm_wheel('0.8.5'),\n"
              "             lambda: wheelcache.copy_site_packages('0.8.5', '/nonexistent')):\n"
              "    try:\n"
              "        call()\n"
              "    except offline_loop.WheelsForbidden:\n"
              "        print('refused')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT}:{ROOT / 'src'}",
                               "PATCHOPS_CACHE": "/nonexistent-cache"})
    assert done.stdout.split() == ["refused"] * 3, done.stderr


def test_collection_marks_the_real_tree_tests_of_this_suite():
    done = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider",
                           "-m", "vllm", "tests/patchset/ops/test_replace_function.py"],
                          cwd=ROOT, capture_output=True, text=True)
    selected = [line for line in done.stdout.splitlines() if "::" in line]
    # The three tests that unpack real model runners, and none of the tests on inline sources.
    assert len(selected) == 3, done.stdout
    assert all("real" in line for line in selected)
