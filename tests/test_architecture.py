"""ARCHITECTURE.md stays true, and modules stay small or say why they are not."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from patchops.lint.rules import ALL_RULES
from patchops.patchset.ops import ALL_OPS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "patchops"
MAP = ROOT / "ARCHITECTURE.md"

MAX_LINES = 400
REASON = "Over 400 lines because"  # the phrase a long module's docstring opens its reason with


def modules():
    return sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))


def named_paths():
    """Return the paths ARCHITECTURE.md names, each as it resolves from src/patchops/.

    A name in the paragraph of a folder (one opening with **`patching/`**) is that folder's
    where the folder has it (`plan.py`, `ops/base.py`), otherwise from the package root.
    """
    named = set()
    for paragraph in MAP.read_text(encoding="utf-8").split("\n\n"):
        folder = re.match(r"\*\*`([\w/]+/)`\*\*", paragraph)
        for name in re.findall(r"`([\w./-]+(?:\.py|/))`", paragraph):
            local = folder and (PACKAGE / folder.group(1) / name).exists()
            named.add(folder.group(1) + name if local else name)
    return named


def family_members():
    """Modules covered by their folder being named: one rule or op per file, in a registry."""
    found = {cls.__module__ for cls in (*ALL_RULES, *ALL_OPS)}
    return {name.replace("patchops.", "", 1).replace(".", "/") + ".py" for name in found}


def test_every_module_is_named_in_architecture_md():
    named = named_paths()
    families = family_members()
    missing = []
    for rel in modules():
        folder = rel.rpartition("/")[0] + "/" if "/" in rel else ""
        if rel in named:
            continue
        if rel in families and folder in named:
            continue
        if rel.endswith("__init__.py") and folder and folder in named:
            continue  # a package is named by its folder
        missing.append(rel)
    assert not missing, f"ARCHITECTURE.md does not name: {missing}"


def test_every_path_architecture_md_names_exists():
    gone = [p for p in named_paths() if not (PACKAGE / p).exists()
            and not (ROOT / p).exists() and not (ROOT / p.split("/", 1)[-1]).exists()]
    assert not gone, f"ARCHITECTURE.md names paths that do not exist: {sorted(gone)}"


def long_modules():
    """Return {module: line count} for modules over MAX_LINES without a stated reason."""
    out = {}
    for rel in modules():
        text = (PACKAGE / rel).read_text(encoding="utf-8")
        count = len(text.splitlines())
        doc = ast.get_docstring(ast.parse(text)) or ""
        if count > MAX_LINES and REASON not in doc:
            out[rel] = count
    return out


def test_no_module_over_400_lines_without_a_reason_at_its_top():
    unexplained = long_modules()
    assert not unexplained, (f"modules over {MAX_LINES} lines: {unexplained}; split them, or open "
                             f"the module docstring's reason with {REASON!r}")


# The layers of ARCHITECTURE.md by package, top down: a module imports its own layer and those below.
LAYERS = (
    {"cli", "__main__", "fleet"},  # fleet: the api's calls on every node of a cluster
    {"api"},
    {"patching", "lint", "run"},
    {"patchset", "store"},
    {"host"},
    {"core", "__init__"},
)
# Versions are compared with the one tolerant parser, lint/vllm/releases.py, on both sides.
VERSION_PARSER = "patchops.lint.vllm.releases"
LOOSE = {"__init__.py", "__main__.py"}  # everything else lives in a package


def part_of(module: str) -> str:
    """Name the package of patchops a dotted module belongs to: "lint", "store", "api", ..."""
    parts = module.split(".")[1:] or ["__init__"]
    return "__init__" if parts[0] == "__version__" else parts[0]


def imports():
    """Yield (importing package, imported dotted module) for every patchops import in the package."""
    for rel in modules():
        here = part_of("patchops." + rel[:-3].replace("/", "."))
        for node in ast.walk(ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "patchops":
                targets = [node.module] if node.module != "patchops" else \
                    [f"patchops.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "patchops"]
            else:
                continue
            for target in targets:
                yield here, target


def rank(part: str) -> int:
    for index, layer in enumerate(LAYERS):
        if part in layer:
            return index
    raise AssertionError(f"{part} is in no layer; add it to LAYERS where ARCHITECTURE.md puts it")


def test_at_most_two_modules_sit_loose_in_the_package():
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert loose <= LOOSE, sorted(loose - LOOSE)


def test_every_package_is_in_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert all(rank(name) >= 0 for name in packages)


def test_imports_point_down_the_layers():
    up = sorted({(here, target) for here, target in imports()
                 if rank(part_of(target)) < rank(here) and target != VERSION_PARSER})
    assert not up, f"imports against the layers of ARCHITECTURE.md: {up}"


def test_patching_and_lint_meet_only_at_the_version_parser():
    patching_side = {"patching", "patchset", "store"}
    crossing = sorted({(here, target) for here, target in imports()
                       if (here in patching_side and part_of(target) == "lint" and target != VERSION_PARSER)
                       or (here == "lint" and part_of(target) in patching_side)})
    assert not crossing, crossing


def test_layer_check_sees_an_upward_import():
    assert rank(part_of("patchops.api")) < rank(part_of("patchops.lint.runner"))
    assert rank(part_of("patchops.store.site_store")) < rank(part_of("patchops.core.errors"))
    assert part_of("patchops.patchset.ops.base") == "patchset" and part_of("patchops") == "__init__"


def imports_module(test: Path, module: str) -> bool:
    """Return whether the test file imports patchops.lint.vllm.<module> itself."""
    dotted = f"patchops.lint.vllm.{module}"
    for node in ast.walk(ast.parse(test.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module == dotted or (
                node.module == "patchops.lint.vllm" and any(a.name == module for a in node.names))):
            return True
        if isinstance(node, ast.Import) and any(a.name == dotted for a in node.names):
            return True
    return False


def test_every_lint_vllm_module_has_a_test_file_by_its_name_that_imports_it():
    """The release knowledge is tested module by module: lint/vllm/x.py by tests/lint/vllm/test_x.py."""
    tests = ROOT / "tests" / "lint" / "vllm"
    modules = sorted(p.stem for p in (PACKAGE / "lint" / "vllm").glob("*.py") if p.name != "__init__.py")
    untested = [m for m in modules if not (tests / f"test_{m}.py").exists()
                or not imports_module(tests / f"test_{m}.py", m)]
    assert not untested, f"lint/vllm modules without a tests/lint/vllm/test_<module>.py importing them: {untested}"


def test_architecture_md_stays_short():
    assert len(MAP.read_text(encoding="utf-8").splitlines()) < 120


# Tests mirror the package: src/patchops/<pkg>/<module>.py is tested in tests/<pkg>/test_<module>.py.
# These test the project as a whole (its map, README, wheel, fast loop, startup imports and the
# facts script), so they sit at the top of tests/.
WHOLE_PROJECT_TESTS = {"test_architecture.py", "test_readme.py", "test_packaging.py",
                       "test_offline_loop.py", "test_startup_imports.py", "test_generate_facts.py"}
# Suites that span every layer: real vLLM judging the rules' examples, and the store and
# patching under crashes, races and hostile file systems.
CROSS_LAYER_SUITES = {"conformance", "reliability"}


def misplaced_tests(tests: list) -> list:
    """Return the test files (paths relative to tests/) in no folder mirroring a source package."""
    out = []
    for rel in tests:
        folder, _, name = rel.rpartition("/")
        if not folder:
            if name not in WHOLE_PROJECT_TESTS:
                out.append(rel)
        elif folder.split("/")[0] not in CROSS_LAYER_SUITES and not (PACKAGE / folder / "__init__.py").exists():
            out.append(rel)
    return out


def all_test_files():
    tests = ROOT / "tests"
    return sorted(p.relative_to(tests).as_posix() for p in tests.rglob("test_*.py"))


def test_every_test_file_sits_in_a_folder_mirroring_a_source_package():
    stray = misplaced_tests(all_test_files())
    assert not stray, (f"tests outside a folder mirroring src/patchops/ (tests/<package>/test_<module>.py): "
                       f"{stray}; move them, or name a whole-project test in WHOLE_PROJECT_TESTS")


def test_the_mirror_check_sees_a_stray_test():
    assert misplaced_tests(["test_store.py", "engine/test_x.py", "lint/vllm/test_routing.py",
                            "test_readme.py", "conformance/test_conformance.py"]) == \
        ["test_store.py", "engine/test_x.py"]


def test_test_file_names_are_unique():
    """Test folders have no __init__.py, so pytest imports each test file by its bare name."""
    names = [rel.rpartition("/")[2] for rel in all_test_files()]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


# The conformance suite's own command line: it records and compares tests/conformance/'s verdicts.
SCRIPTS_OF_A_SUITE = {"scripts/conformance.py"}


def test_scripts_and_bench_do_not_import_tests():
    """Their dev helpers live in devtools/; tests are free to change without breaking them."""
    importing = []
    for path in sorted([*(ROOT / "scripts").glob("*.py"), *(ROOT / "bench").glob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        names = {alias.name for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Import)
                 for alias in node.names}
        names |= {node.module for node in ast.walk(ast.parse(text))
                  if isinstance(node, ast.ImportFrom) and node.module}
        on_path = '"tests"' in text   # ROOT / "tests" put on sys.path
        if rel not in SCRIPTS_OF_A_SUITE and (on_path or any(n.split(".")[0] == "tests" for n in names)):
            importing.append(rel)
    assert not importing, f"import tests (move what they need to devtools/): {importing}"


def test_comments_give_reasons_not_pointers_to_issues_or_outside_documents():
    """A comment says the reason itself: "issue 11" or "reference §5" means nothing to a reader."""
    pointer = re.compile(r"\b[Ii]ssue[ -]\d+|§ ?\d|shared/reference/")
    found = []
    for folder in ("src", "tests", "scripts", "bench", "devtools"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".yaml", ".md") and "__pycache__" not in path.parts:
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if pointer.search(line) and path.name != "test_architecture.py":
                        found.append(f"{path.relative_to(ROOT)}:{number}")
    assert not found, f"comments pointing at issues or outside documents: {found}"
