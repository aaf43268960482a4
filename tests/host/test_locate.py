"""locate: finding vLLM copies and their versions on real vLLM trees, without importing vLLM."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MID, NEW, OLD
from patchops.core.errors import LocateError
from patchops.host.installed_version import read_version
from patchops.host.locate import locate, locate_site
from patchops.host.search_path import DEFAULT_ROOTS, ROOTS_ENV
from tests.support import wheelcache

vllm = pytest.mark.vllm


def mine(location, tmp_path):
    """Return the copies under `tmp_path`, so whatever this machine has installed is ignored."""
    return [copy for copy in location.copies if tmp_path in copy.site_dir.parents]


def pythonpath(*dirs) -> dict:
    return {"PYTHONPATH": os.pathsep.join(str(folder) for folder in dirs)}


# --- versions -------------------------------------------------------------------------------


@vllm
@pytest.mark.parametrize("version", [OLD, MID, NEW])
def test_version_comes_from_version_py(vllm_site, version):
    assert read_version(vllm_site(version)) == (version, "vllm/_version.py")


@vllm
def test_post_release_keeps_its_suffix(vllm_site):
    # 0.6.3.post1's version_tuple is (0, 6, 3); only the string keeps ".post1".
    assert read_version(vllm_site(OLD))[0] == "0.6.3.post1"


@vllm
def test_version_falls_back_to_metadata(tmp_path):
    site = wheelcache.copy_site_packages(MID, tmp_path / "site", with_flash_attn=False)
    (site / "vllm" / "_version.py").unlink()
    decoy = site / "vllm-flash-attn-2.6.1.dist-info"
    decoy.mkdir()
    (decoy / "METADATA").write_text("Name: vllm-flash-attn\nVersion: 2.6.1\n")
    assert read_version(site) == (MID, f"vllm-{MID}.dist-info/METADATA")


@vllm
def test_version_unknown_without_version_py_and_metadata(tmp_path):
    site = wheelcache.copy_site_packages(MID, tmp_path / "site", with_flash_attn=False)
    (site / "vllm" / "_version.py").unlink()
    shutil.rmtree(site / f"vllm-{MID}.dist-info")
    assert read_version(site) == (None, "unknown")
    assert locate_site(site).version is None


# --- PYTHONPATH, order and identity -----------------------------------------------------------


@vllm
@pytest.mark.parametrize("lib64_first", [False, True])
def test_corex_lib_and_lib64_on_pythonpath_are_two_copies_first_wins(
    corex_tree, tmp_path, lib64_first
):
    _, sites = corex_tree(MID, with_flash_attn=False)
    if lib64_first:
        sites.reverse()
    location = locate(env=pythonpath(*sites), default_roots=())
    copies = mine(location, tmp_path)
    assert [copy.site_dir for copy in copies] == sites
    assert [copy.wins for copy in copies] == [True, False]
    assert location.winner == copies[0]
    assert all(copy.found_via == ("PYTHONPATH",) and copy.version == MID for copy in copies)
    assert [copy.package_dir for copy in copies] == [site / "vllm" for site in sites]


@vllm
def test_lib64_symlinked_to_lib_is_one_copy_with_an_alias(corex_tree, tmp_path):
    root, (lib, lib64) = corex_tree(MID, lib64_symlink=True, with_flash_attn=False)
    location = locate(env=pythonpath(lib, lib64), default_roots=())
    [copy] = mine(location, tmp_path)
    assert (copy.site_dir, copy.aliases, copy.wins) == (lib, (lib64,), True)


@vllm
def test_symlinked_package_dir_is_one_copy(vllm_site, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "vllm").symlink_to(vllm_site(MID) / "vllm")
    location = locate(env=pythonpath(site, vllm_site(MID)), default_roots=())
    [copy] = [copy for copy in location.copies if copy.site_dir in (site, vllm_site(MID))]
    assert (copy.site_dir, copy.aliases) == (site, (vllm_site(MID),))


@vllm
def test_same_inode_under_different_real_paths_is_one_copy(vllm_site, tmp_path, monkeypatch):
    # A bind mount: realpath() cannot tell the spellings apart, only os.stat() can.
    site = tmp_path / "mnt"
    site.mkdir()
    (site / "vllm").symlink_to(vllm_site(MID) / "vllm")
    monkeypatch.setattr("patchops.host.locate.os.path.realpath", lambda path: path)
    location = locate(env=pythonpath(vllm_site(MID), site), default_roots=())
    [copy] = [copy for copy in location.copies if copy.site_dir in (site, vllm_site(MID))]
    assert copy.aliases == (site,)


@vllm
def test_pythonpath_from_env_comes_before_this_interpreters_sys_path(vllm_site, monkeypatch):
    monkeypatch.setattr(sys, "path", sys.path + [str(vllm_site(NEW))])
    location = locate(env=pythonpath(vllm_site(MID)), default_roots=())
    assert location.winner.site_dir == vllm_site(MID)
    assert [copy.wins for copy in location.copies if copy.site_dir == vllm_site(NEW)] == [False]


@vllm
def test_relative_pythonpath_entry_is_resolved_against_cwd(vllm_site, tmp_path, monkeypatch):
    shutil.copytree(vllm_site(MID) / "vllm", tmp_path / "site" / "vllm", symlinks=True,
                    ignore=shutil.ignore_patterns("*.so"))
    monkeypatch.chdir(tmp_path)
    location = locate(env={"PYTHONPATH": "site"}, default_roots=())
    assert location.winner.site_dir == tmp_path / "site"


@vllm
def test_sys_path_of_this_interpreter_is_searched(vllm_site, monkeypatch):
    monkeypatch.setattr(sys, "path", sys.path + [str(vllm_site(NEW))])
    location = locate(env={}, default_roots=())
    assert (str(vllm_site(NEW)), "sys.path") in location.search_path
    assert location.winner.site_dir == vllm_site(NEW)
    assert location.winner.found_via == ("sys.path",)


# --- vendor roots ---------------------------------------------------------------------------


@vllm
def test_root_argument_finds_a_copy_that_does_not_win(vllm_site):
    location = locate(roots=[vllm_site(NEW)], env={}, default_roots=())
    [copy] = [copy for copy in location.copies if copy.site_dir == vllm_site(NEW)]
    assert copy.found_via == (f"root {vllm_site(NEW)}",)
    assert not copy.wins


@vllm
def test_root_given_as_the_vllm_folder_itself(vllm_site):
    location = locate(roots=[vllm_site(NEW) / "vllm"], env={}, default_roots=())
    assert vllm_site(NEW) in [copy.site_dir for copy in location.copies]


@vllm
def test_roots_from_patchops_roots_env(vllm_site):
    env = {ROOTS_ENV: os.pathsep.join([str(vllm_site(OLD)), "/no/such/root", str(vllm_site(NEW))])}
    location = locate(env=env, default_roots=())
    found = {copy.site_dir: copy.version for copy in location.copies if not copy.wins}
    assert found[vllm_site(OLD)] == OLD and found[vllm_site(NEW)] == NEW


@vllm
def test_root_only_copy_is_listed_last_and_does_not_win(vllm_site):
    location = locate(env=pythonpath(vllm_site(MID)), roots=[vllm_site(NEW)], default_roots=())
    sites = [copy.site_dir for copy in location.copies]
    assert sites.index(vllm_site(MID)) < sites.index(vllm_site(NEW))
    assert location.winner.site_dir == vllm_site(MID)
    assert location.search_path[-1] == (str(vllm_site(NEW)), f"root {vllm_site(NEW)}")


@vllm
def test_copy_on_path_and_under_a_root_is_listed_once(vllm_site):
    site = vllm_site(MID)
    location = locate(env=pythonpath(site), roots=[site], default_roots=())
    [copy] = [copy for copy in location.copies if copy.site_dir == site]
    assert copy.found_via == ("PYTHONPATH", f"root {site}")
    assert copy.wins and copy.aliases == ()


@vllm
def test_default_roots_are_searched_when_they_exist(vllm_site, tmp_path):
    location = locate(env={}, default_roots=(str(tmp_path / "absent"), str(vllm_site(MID))))
    assert [copy.site_dir for copy in location.copies] == [vllm_site(MID)]
    assert DEFAULT_ROOTS == ("/usr/local/corex/lib/python3/dist-packages",
                             "/usr/local/corex/lib64/python3/dist-packages")


def test_missing_root_argument_is_an_error(tmp_path):
    with pytest.raises(LocateError, match=r'root ".*absent" is not a folder'):
        locate(roots=[tmp_path / "absent"], env={}, default_roots=())


@vllm
def test_pth_file_in_a_root_adds_a_folder(vllm_site, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    extra = os.path.relpath(vllm_site(NEW), root)
    (root / "corex.pth").write_text(f"# comment\nimport os\n/no/such/dir\n{extra}\n")
    location = locate(roots=[root], env={}, default_roots=())
    [copy] = [copy for copy in location.copies if copy.site_dir == vllm_site(NEW)]
    assert copy.found_via == (f"corex.pth in root {root}",)
    assert not copy.wins


@vllm
def test_pth_file_in_a_pythonpath_folder_is_ignored_as_python_does(vllm_site, tmp_path):
    (tmp_path / "extra.pth").write_text(f"{vllm_site(NEW)}\n")
    location = locate(env=pythonpath(tmp_path), default_roots=())
    assert vllm_site(NEW) not in [copy.site_dir for copy in location.copies]


# --- editable installs ----------------------------------------------------------------------


def editable_install(site: Path, package: Path) -> Path:
    """Write the finder and .pth `pip install -e` of vLLM leaves in `site`; return the finder."""
    finder = site / "__editable___vllm_0_11_0_finder.py"
    finder.write_text(f"MAPPING: dict[str, str] = {{'vllm': {str(package)!r}}}\n"
                      "def install():\n    pass\n")
    pth = f"import {finder.stem}; {finder.stem}.install()\n"
    (site / "__editable__.vllm-0.11.0.pth").write_text(pth)
    return finder


@vllm
@pytest.mark.parametrize("also_on_path", [False, True])
def test_editable_install_wins_only_without_a_copy_on_the_path(
    vllm_site, tmp_path, monkeypatch, also_on_path
):
    site = tmp_path / "site-packages"
    site.mkdir()
    finder = editable_install(site, vllm_site(NEW) / "vllm")
    monkeypatch.setattr(sys, "path", sys.path + [str(site)])
    env = pythonpath(vllm_site(MID)) if also_on_path else {}
    location = locate(env=env, default_roots=())
    [editable] = [copy for copy in location.copies if copy.site_dir == vllm_site(NEW)]
    assert editable.found_via == (f"editable install {finder}",)
    assert editable.version == NEW
    assert editable.wins is not also_on_path


@vllm
def test_editable_finder_in_a_pythonpath_folder_is_ignored(vllm_site, tmp_path):
    # Python runs .pth files, and so installs editable finders, only in site dirs.
    editable_install(tmp_path, vllm_site(NEW) / "vllm")
    location = locate(env=pythonpath(tmp_path), default_roots=())
    assert vllm_site(NEW) not in [copy.site_dir for copy in location.copies]


def test_a_finder_of_another_vllm_named_distribution_is_not_parsed(tmp_path, monkeypatch):
    # vllm-patchops's own editable install writes __editable___vllm_patchops_..._finder.py.
    from patchops.host import search_path

    ours = tmp_path / "__editable___vllm_patchops_0_1_0_finder.py"
    ours.write_text("MAPPING: dict[str, str] = {'patchops': '/src/patchops'}\n")
    vllms = editable_install(tmp_path, tmp_path / "checkout" / "vllm")
    parsed = []
    real_parse = search_path.parse_file
    monkeypatch.setattr(search_path, "parse_file", lambda path: parsed.append(path) or real_parse(path))
    assert search_path._editable_mapping(str(ours)) is None
    assert search_path._editable_mapping(str(vllms)) == str(tmp_path / "checkout" / "vllm")
    assert parsed == [str(vllms)]


# --- another interpreter --------------------------------------------------------------------


@vllm
def test_python_argument_reads_that_interpreters_sys_path(vllm_site):
    location = locate(python=sys.executable, env=pythonpath(vllm_site(MID)), default_roots=())
    assert location.python == sys.executable
    assert location.winner.site_dir == vllm_site(MID)
    assert location.winner.found_via == ("PYTHONPATH",)


@vllm
def test_python_argument_sees_a_venv_this_process_cannot(vllm_site, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    [site] = (venv / "lib").glob("python3*/site-packages")
    (site / "vllm-tree.pth").write_text(f"{vllm_site(NEW)}\n")
    location = locate(python=str(python), env={}, default_roots=())
    assert location.winner.site_dir == vllm_site(NEW)
    assert location.winner.found_via == ("sys.path",)
    assert vllm_site(NEW) not in [copy.site_dir for copy in locate(env={}, default_roots=()).copies]


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-python"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("make, message", [
    (lambda tmp: str(tmp / "no-such-python"), r"could not run python .*no-such-python.* sys\.path"),
    (lambda tmp: _script(tmp, "echo hello"), r'printed "hello" instead of its sys\.path'),
    (lambda tmp: _script(tmp, "echo boom >&2; exit 3"), r"exited with code 3 .*: boom"),
])
def test_bad_python_is_a_clear_error(tmp_path, make, message):
    python = make(tmp_path)
    with pytest.raises(LocateError, match=message) as caught:
        locate(python=python, env={}, default_roots=())
    assert python in caught.value.message


# --- one explicit site dir ------------------------------------------------------------------


@vllm
@pytest.mark.parametrize("given", ["site", "package"])
def test_locate_site_accepts_site_dir_or_vllm_folder(vllm_site, given):
    site = vllm_site(OLD)
    copy = locate_site(site if given == "site" else site / "vllm")
    assert (copy.site_dir, copy.package_dir) == (site, site / "vllm")
    assert (copy.version, copy.version_source) == (OLD, "vllm/_version.py")


@pytest.mark.parametrize("layout, message", [
    ("missing", r'vLLM path ".*missing" does not exist'),
    ("empty", r'no vLLM in ".*empty": there is no ".*empty/vllm" folder'),
    ("no-init", r'".*no-init/vllm" has no __init__\.py'),
])
def test_locate_site_without_vllm_is_a_clear_error(tmp_path, layout, message):
    if layout == "empty":
        (tmp_path / layout).mkdir()
    if layout == "no-init":
        (tmp_path / layout / "vllm").mkdir(parents=True)
    with pytest.raises(LocateError, match=message):
        locate_site(tmp_path / layout)
