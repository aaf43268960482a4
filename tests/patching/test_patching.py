"""The patch engine on real vLLM trees: plan, apply, status, rollback, crash recovery."""

from __future__ import annotations

import os
import py_compile
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import MID, NEW, OLD, vendor_hardcode
from patchops import patching
from patchops.store import site_store as store_mod
from patchops.store import transaction
from patchops.core.errors import DriftError, PatchopsError, PatchsetError, StoreError
from patchops.host.locate import locate_site
from patchops.patching import file_rewrites as rewriting
from patchops.patchset.states import REPLACED
from patchops.patchset.model import get_patchset
from patchops.store.site_store import Store, sha256
from patchops.store.transaction import SimulatedCrash

pytestmark = pytest.mark.vllm

NAME = "corex-eager-allreduce"
ARG = "engine/arg_utils.py"
WANTED = (b"enforce_eager=self.enforce_eager", b"disable_custom_all_reduce=self.disable_custom_all_reduce")
HARDCODED = (b"enforce_eager=True,", b"disable_custom_all_reduce=True,")


def corex(corex_tree, version, *, hardcode=True, **kwargs):
    """Build a CoreX root, hardcode its copies like the fork, return (sites, copies)."""
    _, sites = corex_tree(version, **kwargs)
    if hardcode:
        for site in dict.fromkeys(s.resolve() for s in sites):
            vendor_hardcode(site)
    return sites, [locate_site(site) for site in sites]


def arg_utils(site: Path) -> Path:
    return site / "vllm" / ARG


def unchecked_pyc(site: Path) -> Path:
    """Compile arg_utils.py the way some vendor images ship it: a pyc Python never rechecks."""
    return Path(py_compile.compile(str(arg_utils(site)),
                                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH))


def snapshot(sites):
    """Return bytes and mtime of each target file and of everything in each store."""
    seen = {}
    for site in sites:
        paths = [arg_utils(site)]
        store_dir = site / ".patchops"
        if store_dir.exists():
            paths += sorted(p for p in store_dir.rglob("*") if p.is_file())
        for path in paths:
            info = path.stat()
            seen[str(path)] = (path.read_bytes(), info.st_mtime_ns, stat.S_IMODE(info.st_mode))
    return seen


def states(rows):
    return [(row.site_dir, row.patchset, row.state) for row in rows]


# --- the whole flow ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", [OLD, MID, NEW])
def test_apply_reapply_status_rollback(corex_tree, version):
    sites, copies = corex(corex_tree, version)
    vendor = {site: arg_utils(site).read_bytes() for site in sites}
    arg_utils(sites[1]).chmod(0o640)
    pycs = [unchecked_pyc(site) for site in sites]
    patchset = get_patchset(NAME)

    plan = patching.plan_apply(copies, [patchset])
    assert [o.state for o in plan.outcomes] == ["applies", "applies"]
    assert [f.path for f in plan.changes] == [arg_utils(site) for site in sites]
    diff = patching.unified_diff(plan)
    # The two copies hold the same bytes: one diff, site-relative, naming both copies.
    assert diff.count("+++ b/vllm/engine/arg_utils.py\n") == 1 and "self.enforce_eager" in diff
    assert diff.startswith(f"# identical in 2 copies: {sites[0]}, {sites[1]}\n")
    assert all(arg_utils(site).read_bytes() == vendor[site] for site in sites)  # planning writes nothing

    report = patching.commit_apply(plan)
    assert report.written == tuple(arg_utils(site) for site in sites)
    assert report.backups == tuple(Store(s).object_path(sha256(vendor[s])) for s in sites)
    for site in sites:
        text = arg_utils(site).read_bytes()
        assert all(w in text for w in WANTED) and not any(h in text for h in HARDCODED)
        assert Store(site).get_object(sha256(vendor[site])) == vendor[site]  # backup kept
    assert stat.S_IMODE(arg_utils(sites[1]).stat().st_mode) == 0o640
    assert not any(p.exists() for p in pycs)  # stale unchecked pyc removed
    assert set(report.removed_bytecode) == set(pycs)
    compile(arg_utils(sites[0]).read_bytes(), "arg_utils.py", "exec")

    rows = patching.status(copies, [patchset])
    assert [r.state for r in rows] == ["applied", "applied"]
    assert not patching.any_drift(rows)

    # Re-apply: a no-op that keeps every byte and mtime, stores included.
    before = snapshot(sites)
    again = patching.plan_apply(copies, [patchset])
    assert [o.state for o in again.outcomes] == ["applied", "applied"] and not again.changes
    assert not patching.commit_apply(again).changed
    assert snapshot(sites) == before

    pycs = [unchecked_pyc(site) for site in sites]
    back = patching.rollback(copies, [NAME])
    assert back.patchsets == (NAME,) and len(back.restored) == 2
    assert all(arg_utils(site).read_bytes() == vendor[site] for site in sites)
    assert stat.S_IMODE(arg_utils(sites[1]).stat().st_mode) == 0o640
    assert not any(p.exists() for p in pycs)
    assert [r.state for r in patching.status(copies, [patchset])] == ["not-applied", "not-applied"]


# --- libcst stays unimported when hashes answer -------------------------------------------------

NO_LIBCST = textwrap.dedent("""
    import sys
    from patchops import patching
    from patchops.host.locate import locate_site
    from patchops.patchset.model import get_patchset
    copies = [locate_site(p) for p in sys.argv[1:]]
    patchset = get_patchset("corex-eager-allreduce")
    plan = patching.plan_apply(copies, [patchset])
    report = patching.commit_apply(plan)
    rows = patching.status(copies, [patchset])
    assert not plan.changes and not report.changed, plan
    assert [r.state for r in rows] == [EXPECTED] * len(rows), rows
    print("libcst" in sys.modules)
""")


@pytest.mark.parametrize("hardcode,expected", [(True, "applied"), (False, "satisfied")])
def test_noop_reapply_and_status_do_not_import_libcst(corex_tree, hardcode, expected):
    sites, copies = corex(corex_tree, MID, hardcode=hardcode)
    patching.commit_apply(patching.plan_apply(copies, [get_patchset(NAME)]))
    code = NO_LIBCST.replace("EXPECTED", repr(expected))
    done = subprocess.run([sys.executable, "-c", code, *map(str, sites)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# --- drift -------------------------------------------------------------------------------------


def test_hand_edit_is_drift_rollback_refuses_and_force_keeps_the_edit(corex_tree):
    sites, copies = corex(corex_tree, NEW)
    vendor = arg_utils(sites[1]).read_bytes()
    patchset = get_patchset(NAME)
    patching.commit_apply(patching.plan_apply(copies, [patchset]))
    edited = arg_utils(sites[1]).read_bytes() + b"# tuned by hand\n"
    arg_utils(sites[1]).write_bytes(edited)
    patched = arg_utils(sites[0]).read_bytes()

    rows = patching.status(copies, [patchset])
    assert [r.state for r in rows] == ["applied", "drifted"]
    assert patching.any_drift(rows)
    assert "hand-edited" in rows[1].detail and "patch is still present" in rows[1].detail
    assert sha256(edited)[:12] in rows[1].detail and rows[1].file_states[0].current_sha == sha256(edited)

    with pytest.raises(DriftError) as info:
        patching.rollback(copies, [NAME])
    message = str(info.value)
    assert str(arg_utils(sites[1])) in message and sha256(edited)[:12] in message
    assert "--force" in message
    assert arg_utils(sites[0]).read_bytes() == patched  # nothing written, not even the clean copy
    assert arg_utils(sites[1]).read_bytes() == edited

    with pytest.raises(DriftError, match="changed since patchops wrote it"):
        patching.plan_apply(copies, [patchset])

    report = patching.rollback(copies, [NAME], force=True)
    assert arg_utils(sites[1]).read_bytes() == vendor
    forced = [f for f in report.files if f.forced]
    assert len(forced) == 1 and forced[0].saved.read_bytes() == edited
    assert Store(sites[1]).get_object(sha256(edited)) == edited


def test_reinstall_is_reported_and_apply_patches_again(corex_tree):
    sites, copies = corex(corex_tree, MID)
    vendor = arg_utils(sites[0]).read_bytes()
    patchset = get_patchset(NAME)
    patching.commit_apply(patching.plan_apply(copies, [patchset]))
    arg_utils(sites[0]).write_bytes(vendor)  # pip reinstalls the vendor wheel

    [row, other] = patching.status(copies, [patchset])
    assert (row.state, other.state) == ("drifted", "applied")
    assert REPLACED in row.detail

    plan = patching.plan_apply(copies, [patchset])
    assert [f.path for f in plan.changes] == [arg_utils(sites[0])]
    assert any("patching it again" in note for note in plan.notes)
    patching.commit_apply(plan)
    assert [r.state for r in patching.status(copies, [patchset])] == ["applied", "applied"]
    patching.rollback(copies, [NAME])
    assert arg_utils(sites[0]).read_bytes() == vendor


def test_rollback_of_a_reinstalled_file_writes_nothing(corex_tree):
    sites, copies = corex(corex_tree, MID)
    vendor = arg_utils(sites[0]).read_bytes()
    patching.commit_apply(patching.plan_apply(copies, [get_patchset(NAME)]))
    arg_utils(sites[0]).write_bytes(vendor)
    mtime = arg_utils(sites[0]).stat().st_mtime_ns
    report = patching.rollback(copies, None)
    assert report.restored == (arg_utils(sites[1]),)
    assert arg_utils(sites[0]).stat().st_mtime_ns == mtime


def test_apply_force_takes_a_changed_file_as_the_new_original(corex_tree):
    sites, copies = corex(corex_tree, MID)
    vendor = arg_utils(sites[0]).read_bytes()
    patchset = get_patchset(NAME)
    patching.commit_apply(patching.plan_apply(copies, [patchset]))
    upgraded = vendor + b"# vendor hotfix 2\n"  # e.g. a newer vendor build, still hardcoded
    arg_utils(sites[0]).write_bytes(upgraded)
    with pytest.raises(DriftError, match="apply --force"):
        patching.plan_apply(copies, [patchset])
    plan = patching.plan_apply(copies, [patchset], force=True)
    assert [f.path for f in plan.changes] == [arg_utils(sites[0])]
    patching.commit_apply(plan)
    assert [r.state for r in patching.status(copies, [patchset])] == ["applied", "applied"]
    patching.rollback(copies, [NAME])
    assert arg_utils(sites[0]).read_bytes() == upgraded
    assert Store(sites[0]).get_object(sha256(vendor)) == vendor  # the old original stays


def test_status_reports_an_unparsable_file_instead_of_failing(corex_tree):
    sites, copies = corex(corex_tree, MID)
    arg_utils(sites[1]).write_text("def broken(:\n")
    rows = patching.status(copies, [get_patchset(NAME)])
    assert [r.state for r in rows] == ["not-applied", "drifted"]
    assert "cannot parse" in rows[1].detail
    with pytest.raises(PatchsetError, match="cannot parse"):
        patching.plan_apply(copies, [get_patchset(NAME)])


def test_unknown_code_at_the_site_is_refused_naming_file_and_line(corex_tree):
    sites, copies = corex(corex_tree, MID)
    path = arg_utils(sites[1])
    path.write_bytes(path.read_bytes().replace(b"enforce_eager=True,", b"enforce_eager=False,"))
    with pytest.raises(DriftError) as info:
        patching.plan_apply(copies, [get_patchset(NAME)])
    message = str(info.value)
    assert f"{path}:" in message and "Nothing was written" in message
    assert "\n" not in message.strip()
    assert not (sites[0] / ".patchops").exists()
    plan = patching.plan_apply(copies, [get_patchset(NAME)], check=False)
    assert plan.problems
    with pytest.raises(DriftError):
        patching.commit_apply(plan)
    assert b"enforce_eager=True," in arg_utils(sites[0]).read_bytes()


# --- upstream, symlinks, not applied ------------------------------------------------------------


def test_upstream_vllm_is_satisfied_and_nothing_is_written(corex_tree):
    sites, copies = corex(corex_tree, OLD, hardcode=False)
    before = {site: (arg_utils(site).read_bytes(), arg_utils(site).stat().st_mtime_ns) for site in sites}
    patchset = get_patchset(NAME)
    plan = patching.plan_apply(copies, [patchset])
    assert [o.state for o in plan.outcomes] == ["satisfied", "satisfied"] and not plan.changes
    report = patching.commit_apply(plan)
    assert not report.changed and not report.backups
    for site in sites:
        assert (arg_utils(site).read_bytes(), arg_utils(site).stat().st_mtime_ns) == before[site]
        # No file backup needed: objects/ keeps only the patchset's YAML, for status.
        kept = [p.read_bytes() for p in (site / ".patchops" / "objects").iterdir()]
        assert kept == [patchset.path.read_bytes()]
        assert NAME in Store(site).read_state().satisfied
    assert [r.state for r in patching.status(copies, [patchset])] == ["satisfied", "satisfied"]
    with pytest.raises(PatchopsError, match="satisfied upstream"):
        patching.rollback(copies, [NAME])


def test_lib64_symlinked_to_lib_is_patched_once(corex_tree):
    sites, copies = corex(corex_tree, MID, lib64_symlink=True)
    vendor = arg_utils(sites[0]).read_bytes()
    plan = patching.plan_apply(copies, [get_patchset(NAME)])
    assert len(plan.copies) == 1 and len(plan.changes) == 1
    patching.commit_apply(plan)
    assert all(w in arg_utils(sites[1]).read_bytes() for w in WANTED)
    assert len(patching.status(copies, [get_patchset(NAME)])) == 1
    assert len(patching.rollback(copies, [NAME]).restored) == 1
    assert arg_utils(sites[1]).read_bytes() == vendor


def test_rolling_back_what_is_not_applied_is_a_clear_no_op(corex_tree):
    sites, copies = corex(corex_tree, MID)
    with pytest.raises(PatchopsError, match="nothing to roll back"):
        patching.rollback(copies, [NAME])
    with pytest.raises(PatchopsError, match="nothing to roll back"):
        patching.rollback(copies, None)
    assert not any((site / ".patchops").exists() for site in sites)


def test_rolling_back_a_misspelt_name_says_which_was_meant(corex_tree):
    sites, copies = corex(corex_tree, MID)
    with pytest.raises(PatchopsError, match=f'did you mean "{NAME}"'):
        patching.rollback(copies, [NAME.replace("allreduce", "alreduce")])
    patching.commit_apply(patching.plan_apply(copies, [get_patchset(NAME)]))
    with pytest.raises(PatchopsError) as refused:      # the applied names are the ones offered
        patching.rollback(copies, [NAME[:-1]])
    assert f'did you mean "{NAME}"' in str(refused.value)
    with pytest.raises(PatchopsError) as refused:
        patching.rollback(copies, ["zzz-unrelated"])
    assert "did you mean" not in str(refused.value)


def test_not_applicable_version(corex_tree, tmp_path):
    sites, copies = corex(corex_tree, MID)
    custom = write_patchset(tmp_path, "only-new", ">=0.10")
    [row, _] = patching.status(copies, [custom])
    assert row.state == "not-applicable" and MID in row.detail
    plan = patching.plan_apply(copies, [custom])
    assert [o.state for o in plan.outcomes] == ["not-applicable"] * 2 and not plan.changes


# --- two patchsets on one file -----------------------------------------------------------------


def write_patchset(folder: Path, name: str, versions: str):
    """Write and load a small patchset that inserts a marker line into engine/arg_utils.py."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(TEST_PATCHSET.format(name=name, versions=versions))
    return get_patchset(name, dirs=(folder,))


TEST_PATCHSET = textwrap.dedent("""\
    name: {name}
    summary: Mark arg_utils.py (a test patchset).
    vllm: "{versions}"
    ops:
      - op: insert-code
        file: engine/arg_utils.py
        marker: {name}
        before: EngineArgs
        sites: 1
        code: |
          PATCHOPS_TEST_MARKER = "{name}"
    """)


@pytest.mark.parametrize("version", [OLD, NEW])
def test_rolling_back_one_of_two_patchsets_on_a_file_keeps_the_other(corex_tree, tmp_path, version):
    sites, copies = corex(corex_tree, version)
    vendor = arg_utils(sites[0]).read_bytes()
    folder = tmp_path / "patchsets"
    marker = write_patchset(folder, "test-marker", ">=0.6")
    main = get_patchset(NAME)
    patching.commit_apply(patching.plan_apply(copies, [main]))
    patching.commit_apply(patching.plan_apply(copies, [marker]))
    text = arg_utils(sites[0]).read_bytes()
    assert b"PATCHOPS_TEST_MARKER" in text and all(w in text for w in WANTED)
    assert Store(sites[0]).read_state().files[ARG].patchsets == [NAME, "test-marker"]

    report = patching.rollback(copies, [NAME], patchsets_dirs=(folder,))
    assert all(f.kept == ("test-marker",) for f in report.files)
    for site in sites:
        text = arg_utils(site).read_bytes()
        assert b"PATCHOPS_TEST_MARKER" in text and b"enforce_eager=True," in text
    rows = patching.status(copies, [main, marker])
    assert [r.state for r in rows] == ["not-applied", "applied"] * 2

    patching.rollback(copies, ["test-marker"], patchsets_dirs=(folder,))
    assert all(arg_utils(site).read_bytes() == vendor for site in sites)


# --- transactions across copies ----------------------------------------------------------------


def test_crash_after_the_first_swap_is_recovered_on_the_next_run(corex_tree, monkeypatch):
    sites, copies = corex(corex_tree, MID)
    vendor = [arg_utils(site).read_bytes() for site in sites]
    patchset = get_patchset(NAME)
    plan = patching.plan_apply(copies, [patchset])
    monkeypatch.setattr(transaction, "crash_at", ("swap", 1))
    with pytest.raises(SimulatedCrash):
        patching.commit_apply(plan)
    monkeypatch.setattr(transaction, "crash_at", None)
    assert arg_utils(sites[0]).read_bytes() != vendor[0]  # half done: lib patched, lib64 not
    assert arg_utils(sites[1]).read_bytes() == vendor[1]

    rows = patching.status(copies, [patchset])  # recovers first
    assert [r.state for r in rows] == ["not-applied", "not-applied"]
    assert [arg_utils(site).read_bytes() for site in sites] == vendor
    assert Store(sites[0]).read_journal()[-1]["op"] == "abort"
    patching.commit_apply(patching.plan_apply(copies, [patchset]))
    assert [r.state for r in patching.status(copies, [patchset])] == ["applied", "applied"]


def test_crash_mid_rollback_is_recovered_by_the_next_apply(corex_tree, monkeypatch):
    sites, copies = corex(corex_tree, OLD)
    patchset = get_patchset(NAME)
    patching.commit_apply(patching.plan_apply(copies, [patchset]))
    patched = [arg_utils(site).read_bytes() for site in sites]
    monkeypatch.setattr(transaction, "crash_at", ("swap", 1))
    with pytest.raises(SimulatedCrash):
        patching.rollback(copies, [NAME])
    monkeypatch.setattr(transaction, "crash_at", None)
    plan = patching.plan_apply(copies, [patchset])  # recovery puts the patched bytes back
    assert any("recovered an interrupted rollback" in note for note in plan.notes)
    assert [arg_utils(site).read_bytes() for site in sites] == patched
    assert not plan.changes


def test_failure_mid_apply_puts_every_copy_back(corex_tree, monkeypatch):
    sites, copies = corex(corex_tree, MID)
    vendor = [arg_utils(site).read_bytes() for site in sites]
    plan = patching.plan_apply(copies, [get_patchset(NAME)])
    real = store_mod.atomic_write
    failed = []

    def full_disk(path, data):  # once: putting the file back must still work
        if (not failed and str(path).endswith(ARG)
                and Path(os.path.realpath(path)).parent.parent.parent == sites[1]):
            failed.append(path)
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(store_mod, "atomic_write", full_disk)
    with pytest.raises(OSError, match="No space"):
        patching.commit_apply(plan)
    assert [arg_utils(site).read_bytes() for site in sites] == vendor
    assert Store(sites[0]).read_state().files == {}


def test_second_patchops_is_refused(corex_tree):
    sites, copies = corex(corex_tree, MID)
    plan = patching.plan_apply(copies, [get_patchset(NAME)])
    with Store(sites[1]).lock():
        with pytest.raises(StoreError, match="another patchops"):
            patching.commit_apply(plan)
    assert b"enforce_eager=True," in arg_utils(sites[0]).read_bytes()


def test_a_plan_beside_another_patchops_reads_a_clean_copy_and_waits_on_a_crashed_one(corex_tree, monkeypatch):
    # Fleet nodes that share a copy plan it at the same moment: one holding its lock while it
    # checks for a crash must not make the others refuse. A copy a crash left does need it.
    sites, copies = corex(corex_tree, MID)
    patchset = get_patchset(NAME)
    patching.commit_apply(patching.plan_apply(copies, [patchset]))
    with Store(sites[1]).lock():
        plan = patching.plan_apply(copies, [patchset])
    assert not plan.changes and not plan.problems
    monkeypatch.setattr(transaction, "crash_at", ("swap", 1))
    with pytest.raises(SimulatedCrash):
        patching.rollback(copies, [NAME])
    monkeypatch.setattr(transaction, "crash_at", None)
    with Store(sites[1]).lock():
        with pytest.raises(StoreError, match="another patchops is working on"):
            patching.plan_apply(copies, [patchset])


def test_corrupted_backup_is_refused_and_nothing_restored(corex_tree):
    sites, copies = corex(corex_tree, MID)
    vendor = arg_utils(sites[0]).read_bytes()
    patching.commit_apply(patching.plan_apply(copies, [get_patchset(NAME)]))
    patched = [arg_utils(site).read_bytes() for site in sites]
    Store(sites[1]).object_path(sha256(vendor)).write_bytes(b"bit rot")
    with pytest.raises(StoreError, match="fails its hash check"):
        patching.rollback(copies, [NAME])
    assert [arg_utils(site).read_bytes() for site in sites] == patched


def test_invalid_python_is_refused(tmp_path):
    with pytest.raises(PatchsetError, match=r"arg_utils.py:2: .*invalid Python"):
        rewriting.check_compiles(b"x = 1\ndef (:\n", tmp_path / "arg_utils.py", ["p"])


def test_transformer_with_list_params_on_identical_copies(corex_tree, tmp_path, monkeypatch):
    # Identical copies share one rewrite per process; op parameters may hold lists, so that
    # memo must not hash the patchset.
    module = tmp_path / "mods" / "eager_keywords.py"
    module.parent.mkdir()
    module.write_text(textwrap.dedent('''
        import libcst as cst
        from libcst.metadata import PositionProvider
        from patchops.patchset.ops import site_for

        class MarkKeywords(cst.CSTTransformer):
            METADATA_DEPENDENCIES = (PositionProvider,)

            def __init__(self, names):
                super().__init__()
                self.names, self.sites = list(names), []

            def leave_Arg(self, original, updated):
                if original.keyword is not None and original.keyword.value in self.names:
                    wanted = "self." + original.keyword.value
                    current = cst.Module([]).code_for_node(original.value)
                    state = "satisfied" if current == wanted else "pristine"
                    self.sites.append(site_for(self, original.value, state))
                    if state == "pristine":
                        return updated.with_changes(value=cst.parse_expression(wanted))
                return updated
    '''))
    monkeypatch.syspath_prepend(str(module.parent))
    (tmp_path / "ps").mkdir()
    (tmp_path / "ps" / "eager-by-transformer.yaml").write_text(textwrap.dedent('''
        name: eager-by-transformer
        summary: The corex fix, as a user transformer taking a list.
        vllm: ">=0.6.3"
        ops:
          - op: transformer
            file: engine/arg_utils.py
            callable: eager_keywords:MarkKeywords
            params: {names: [enforce_eager, disable_custom_all_reduce]}
            sites: ">=2"
    '''))
    _, sites = corex_tree(MID)
    for site in sites:
        vendor_hardcode(site)
    copies = [locate_site(site) for site in sites]
    plan = patching.plan_apply(copies, [get_patchset("eager-by-transformer", [tmp_path / "ps"])])
    assert len(plan.changes) == 2
    assert all(b"enforce_eager=self.enforce_eager," in change.new for change in plan.changes)


# --- mutations of the code that no test used to catch --------------------------------------------------


def test_a_patchset_producing_code_that_does_not_compile_is_refused_at_plan(corex_tree, tmp_path):
    # `return` at module level parses (ast, libcst) but does not compile: only the compile
    # check in plan_apply stands between this patchset and a vLLM that fails to import.
    sites, copies = corex(corex_tree, MID)
    folder = tmp_path / "ps"
    folder.mkdir()
    (folder / "returns-at-top.yaml").write_text(TEST_PATCHSET.format(name="returns-at-top", versions=">=0.6")
                                                .replace('PATCHOPS_TEST_MARKER = "returns-at-top"', "return 1"))
    before = [arg_utils(site).read_bytes() for site in sites]
    with pytest.raises(PatchsetError, match=r"arg_utils.py:\d+: patchset returns-at-top would produce "
                                            r"invalid Python \('return' outside function\)"):
        patching.plan_apply(copies, [get_patchset("returns-at-top", [folder])])
    assert [arg_utils(site).read_bytes() for site in sites] == before
    assert not (sites[0] / ".patchops").exists()


def test_drift_in_identical_copies_names_each_copy_in_its_own_message(corex_tree):
    sites, copies = corex(corex_tree, MID)
    for site in sites:  # the same edit in both: the second copy's rewrite comes from the memo
        path = arg_utils(site)
        path.write_bytes(path.read_bytes().replace(b"enforce_eager=True,", b"enforce_eager=False,"))
    plan = patching.plan_apply(copies, [get_patchset(NAME)], check=False)
    assert len(plan.problems) == 2
    for problem, site, other in zip(plan.problems, sites, reversed(sites)):
        assert f"{arg_utils(site)}:" in problem and str(arg_utils(other)) not in problem
