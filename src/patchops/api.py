"""The library API the CLI calls: plain functions returning plain dataclasses.

Other programs (CI gates, launch scripts) call these directly; nothing here prints.
Over 400 lines because it is the whole public surface, one short function per command; the
work lives in the modules below it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # lint.rule pulls in packaging; locate/status/apply have no use for it
    from patchops.hardware import Hardware
    from patchops.lint.rule import Diagnostic
    from patchops.locate import VllmCopy
    from patchops.patching.status_check import StatusRow


# ---------------------------------------------------------------- lint

STDIN = "-"
LINTABLE_SUFFIXES = (".yaml", ".yml", ".sh")  # what `lint DIR` picks up


@dataclass(frozen=True)
class LintResult:
    """One input's findings and the vLLM facts they were judged against.

    `error` is set when the input could not be linted (unreadable, invalid, no vLLM to judge
    it against); its one finding is then PO003 input-not-linted.
    """

    path: str
    vllm_version: str
    facts_origin: str
    diagnostics: List["Diagnostic"]
    error: Optional[str] = None
    source_lines: Tuple[str, ...] = ()   # the input's text, for snippets
    hardware: Optional[str] = None       # the assumed hardware and its source, when not stated
    model_config: Optional[str] = None   # the model's config.json read, None when not on this machine
    skipped: List[str] = field(default_factory=list)  # rules not run for want of it
    hardware_skipped: Dict[str, List[str]] = field(default_factory=dict)  # unknown hardware.* field -> rules not run

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)


def lint(path: Optional[Path] = None, *, command: Optional[str] = None,
         vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
         python: Optional[str] = None, select: Sequence[str] = (), ignore: Sequence[str] = (),
         hardware: Optional["Hardware"] = None, text: Optional[str] = None,
         model_config: Optional[Path] = None) -> LintResult:
    """Lint one serve spec, vLLM config or launch script (`path`) or a launch `command`.

    `hardware` (from `--hardware`, the settings file or `hardware.detect()`) fills the
    `hardware:` fields the input leaves unstated; what the input states wins. `text` is the
    content of `path` when it was not read from disk (stdin). Raises LintInputError when the
    input cannot be linted; lint_inputs() reports it instead. `model_config` is the model's
    config.json when the model is not on this machine.
    """
    from patchops.lint.model_facts import model_facts_for, read_model_facts
    from patchops.lint.reading import read_as_vllm
    from patchops.lint.rules import ALL_RULES
    from patchops.lint import selectors
    from patchops.lint.runner import lint_config
    from patchops.lint.select import facts_for_config

    cfg, assumed = _load_input(path, command, hardware, text)
    facts = facts_for_config(cfg, vllm_path=vllm_path, vllm_version=vllm_version, python=python)
    seen = read_as_vllm(cfg, facts)
    cfg.model_facts = read_model_facts(Path(model_config)) if model_config is not None \
        else model_facts_for(seen)
    diagnostics = lint_config(cfg, facts, select=select, ignore=ignore)
    skipped = [] if cfg.model_facts is not None or seen.model is None else [
        rule.name for rule in ALL_RULES
        if rule.reads_model and rule.applies_to(facts.version)
        and selectors.is_selected(rule.code, rule.name, selectors.split(select), selectors.split(ignore))]
    hardware_skipped: Dict[str, List[str]] = {}
    for rule in ALL_RULES:
        if rule.applies_to(facts.version) and selectors.is_selected(
                rule.code, rule.name, selectors.split(select), selectors.split(ignore)):
            for key in rule.reads_hardware:
                if key not in cfg.context:
                    hardware_skipped.setdefault(key, []).append(rule.name)
    return LintResult(path=cfg.path, vllm_version=facts.version, facts_origin=facts.origin,
                      diagnostics=diagnostics, source_lines=tuple(cfg.lines), hardware=assumed,
                      skipped=skipped, hardware_skipped=hardware_skipped,
                      model_config=cfg.model_facts.path if cfg.model_facts is not None else None)


def lint_inputs(paths: Sequence[Path] = (), *, command: Optional[str] = None,
                vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
                python: Optional[str] = None, select: Sequence[str] = (),
                ignore: Sequence[str] = (), hardware: Optional["Hardware"] = None,
                settings=None, stdin=None, model_config: Optional[Path] = None,
                cache: bool = False) -> List[LintResult]:
    """Lint every input, going on past those that cannot be linted (each becomes a PO003 finding).

    A folder stands for the YAML and .sh files under it; `-` reads `stdin`. `settings` (a
    patchops.settings.Settings, default: the file found from the current folder) adds its
    select/ignore lists and per-file ignores, and gives the vLLM version, interpreter and
    hardware (when `hardware` is None) for inputs that state none. A bad selector is still a UsageError: it would
    change every result. `cache` answers from lint/result_cache.py when nothing the results
    were computed from has changed (`lint --no-cache` turns it off).
    """
    options = dict(command=command, vllm_path=vllm_path, vllm_version=vllm_version, python=python,
                   select=select, ignore=ignore, hardware=hardware, settings=settings,
                   model_config=model_config)
    if cache:
        from patchops.lint import result_cache

        text = (stdin or sys.stdin).read() if any(str(p) == STDIN for p in paths) else None
        given = {k: _jsonable(v) for k, v in options.items()}
        given.update(paths=[str(p) for p in paths], stdin=text)
        return result_cache.cached(
            given, lambda: _lint_inputs(paths, **options, stdin=_text_stream(text)),
            result_cache.encode_result, lambda data: result_cache.decode_result(LintResult, data))
    return _lint_inputs(paths, **options, stdin=stdin)


def _jsonable(value):
    """Return an option as JSON for the result cache's key (Hardware and Settings by their fields)."""
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def _text_stream(text: Optional[str]):
    import io

    return io.StringIO(text) if text is not None else None


def _lint_inputs(paths, *, command, vllm_path, vllm_version, python, select, ignore, hardware,
                 settings, model_config, stdin) -> List[LintResult]:
    from patchops.errors import LintInputError
    from patchops.lint.rules.input_not_linted import InputNotLinted

    choose, select, ignore, found = _lint_options(select, ignore, vllm_path, vllm_version, python,
                                                  hardware, settings, model_config)
    inputs: List[dict] = [dict(path=p) for p in expand_inputs(paths)]
    if command is not None:
        inputs.append(dict(command=command))
    results = []
    for given in inputs:
        shown = str(given.get("path", "<command>"))
        if shown == STDIN:
            shown = "<stdin>"
            given = dict(path=shown, text=(stdin or sys.stdin).read())
        try:
            results.append(lint(**given, **choose, select=select,
                                ignore=[*ignore, *found.ignores_for(shown)]))
        except LintInputError as error:
            text = given.get("text") or given.get("command") or _text_of(given.get("path"))
            results.append(LintResult(shown, "", "", [InputNotLinted.from_error(shown, error)],
                                      error=error.message, source_lines=tuple(text.splitlines())))
    return results


def _lint_options(select, ignore, vllm_path, vllm_version, python, hardware, settings, model_config):
    """Return (lint() keyword arguments, select, ignore, settings) after the settings file."""
    from patchops import settings as settings_file
    from patchops.errors import UsageError
    from patchops.lint import selectors
    from patchops.lint.rules import ALL_RULES

    found = settings_file.load() if settings is None else settings
    select = [*found.select, *selectors.split(select)]
    ignore = [*found.ignore, *selectors.split(ignore)]
    for option, given in (("--select", select), ("--ignore", ignore)):
        selectors.check(option, given, ALL_RULES)
    if vllm_path is not None and (vllm_version or python):
        raise UsageError("--vllm names the copy to lint against; drop --vllm-version and --python")
    if vllm_path is None:
        vllm_version, python = vllm_version or found.vllm_version, python or found.python
    if hardware is None and found.hardware:
        hardware = settings_hardware(found)
    choose = dict(vllm_path=vllm_path, vllm_version=vllm_version, python=python, hardware=hardware,
                  model_config=model_config)
    return choose, select, ignore, found


@dataclass(frozen=True)
class FixResult:
    """One file after `lint --fix`: the findings left, how many fixes went in, the texts."""

    result: LintResult
    fixed: int = 0
    before: str = ""
    after: str = ""
    written: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def diff(self) -> str:
        """Return the change as a unified diff with git's `a/` and `b/` paths ("" when none)."""
        from patchops.lint.fixes import unified_diff

        return unified_diff(self.result.path, self.before, self.after) if self.changed else ""


def fix_inputs(paths: Sequence[Path] = (), *, unsafe: bool = False, write: bool = True,
               vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
               python: Optional[str] = None, select: Sequence[str] = (),
               ignore: Sequence[str] = (), hardware: Optional["Hardware"] = None,
               settings=None, model_config: Optional[Path] = None) -> List[FixResult]:
    """Apply the exact fixes of every input file (`lint --fix`), or only compute them (`write=False`).

    Each file is fixed pass by pass against the same facts and options as lint_inputs() uses,
    then linted once more; `unsafe` also applies fixes that change what vLLM does. Files are
    replaced with store.atomic_write (mode and owner kept, a UTF-8 BOM kept); an input that
    cannot be linted is reported as lint_inputs() reports it and left alone.
    """
    import codecs

    from patchops.errors import UsageError
    from patchops.lint import yamlread
    from patchops.lint.fixes import fix_text
    from patchops.store import atomic_write

    files = expand_inputs(paths)
    if any(str(p) == STDIN for p in files):
        raise UsageError("--fix and --diff rewrite files; they cannot take `-` (stdin)")
    firsts = lint_inputs(files, vllm_path=vllm_path, vllm_version=vllm_version, python=python,
                         select=select, ignore=ignore, hardware=hardware, settings=settings,
                         model_config=model_config)
    choose, select, ignore, found = _lint_options(select, ignore, vllm_path, vllm_version, python,
                                                  hardware, settings, model_config)
    out = []
    for path, first in zip(files, firsts):
        if first.error is not None or not any(d.autofix for d in first.diagnostics):
            out.append(FixResult(first))
            continue
        data = Path(path).read_bytes()
        original = yamlread.decode(data, str(path))
        options = dict(choose, select=select, ignore=[*ignore, *found.ignores_for(str(path))])
        last = {}

        def relint(text: str) -> list:
            last["result"] = lint(path, text=text, **options)
            return last["result"].diagnostics

        fixed = fix_text(original, relint, unsafe=unsafe)
        result = lint(path, text=fixed.text, **options) if fixed.text != original else first
        if write and fixed.text != original:
            bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
            atomic_write(path, bom + fixed.text.encode("utf-8"), what="serve config")
        out.append(FixResult(result, fixed.fixed, original, fixed.text,
                             written=write and fixed.text != original))
    return out


def expand_inputs(paths: Sequence[Path]) -> List[Path]:
    """Return `paths` with each folder replaced by the lintable files under it, sorted."""
    expanded: List[Path] = []
    for path in paths:
        if str(path) != STDIN and Path(path).is_dir():
            expanded.extend(sorted(
                found for found in Path(path).rglob("*")
                if found.suffix in LINTABLE_SUFFIXES and found.is_file()
                and not any(part.startswith(".") for part in found.relative_to(path).parts)))
        else:
            expanded.append(Path(path))
    return expanded


def _text_of(path: Optional[Path]) -> str:
    """Return a file's text for a snippet under its error, or "" when it cannot be read."""
    try:
        with open(path, "rb") as handle:  # type: ignore[arg-type]
            return handle.read(1 << 20).decode("utf-8", "replace")
    except (OSError, TypeError):
        return ""


def settings_hardware(found) -> "Hardware":
    """Return the settings file's `hardware` table as a Hardware naming that file as its source."""
    from patchops.hardware import Hardware

    table = dict(found.hardware)
    if "compute_capability" in table:
        table["compute_capability"] = str(table["compute_capability"])
    for key in ("memory_gib", "host_memory_gib"):
        if key in table:
            table[key] = float(table[key])
    return Hardware(source=str(found.path), **table)


@dataclass(frozen=True)
class ExplainResult:
    """The effective engine settings of one input (lint.explain.Row each) and what judged them."""

    path: str
    vllm_version: str
    facts_origin: str
    rows: list
    hardware: Optional[str] = None


def explain(path: Optional[Path] = None, *, command: Optional[str] = None,
            vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
            hardware: Optional["Hardware"] = None) -> ExplainResult:
    """Return the settings vLLM will run `path` or `command` with, each with its origin."""
    from patchops.lint.explain import explain as effective
    from patchops.lint.select import facts_for_config

    cfg, assumed = _load_input(path, command, hardware)
    facts = facts_for_config(cfg, vllm_path=vllm_path, vllm_version=vllm_version)
    return ExplainResult(path=cfg.path, vllm_version=facts.version, facts_origin=facts.origin,
                         rows=effective(cfg, facts, _applied_fields(facts)), hardware=assumed)


def _applied_fields(facts) -> dict:
    """Return {field: (patchset, file:line)} for the copy the facts were read from (shipped: {})."""
    from patchops.applied import applied_keywords

    site = Path(facts.origin)
    if not site.is_absolute() or not (site / "vllm").is_dir():
        return {}
    return {found.field: (found.patchset, found.where) for found in applied_keywords(site)}


def _load_input(path, command, hardware, text: Optional[str] = None):
    """Read one input and fill the hardware it leaves unstated; return (cfg, what was assumed).

    `text` is the content of `path` when it was not read from disk (stdin).
    """
    from patchops.lint.loaders import load_command, load_file, load_text

    if (path is None) == (command is None):
        raise ValueError("pass exactly one of path or command")
    if command is not None:
        cfg = load_command(command)
    elif text is not None:
        cfg = load_text(text, path=str(path))
    else:
        cfg = load_file(Path(path))
    return cfg, (_assume_hardware(cfg, hardware) if hardware is not None else None)


def _assume_hardware(cfg, hardware: "Hardware") -> Optional[str]:
    """Add the hardware fields `cfg` does not state; say what was assumed, or None if nothing."""
    from patchops.lint.config import Setting

    added = [key for key in hardware.context() if key not in cfg.context]
    for key in added:
        cfg.context[key] = Setting(key=key, name=key, value=hardware.context()[key], line=0,
                                   column=0, source=hardware.origin_of(key))
    return hardware.describe() if added else None


def plan_launch(path: Optional[Path] = None, *, command: Optional[str] = None,
                python: Optional[str] = None, extra: Sequence[str] = (),
                select: Sequence[str] = (), ignore: Sequence[str] = (),
                hardware: Optional["Hardware"] = None):
    """Lint a config against the copy that will run it; return (LintResult, Launch).

    The interpreter is `python`, else the spec's `vllm.python`, else this one. With `extra`
    arguments the assembled command line is linted, since those arguments override the file.
    """
    _, copy, launch = _launch_of(path, command, python, extra)
    checked = dict(command=launch.as_written()) if extra else dict(path=path, command=command)
    result = lint(**checked, vllm_path=copy.site_dir, select=select, ignore=ignore,
                  hardware=hardware)
    return result, launch


def _launch_of(path, command, python, extra: Sequence[str] = (), config_dir: Optional[Path] = None):
    """Read one input and build its launch under the interpreter that will run it.

    The interpreter is `python`, else the spec's `vllm.python`, else this one; returns
    (cfg, the copy it imports, the Launch). A spec's `args:` go to a `--config` file in
    `config_dir` (default: launching.launch_config_dir()).
    """
    from patchops import launching

    cfg, _ = _load_input(path, command, None)
    stated = cfg.context.get("vllm.python")
    python, copy = launching.winning_copy(python or (str(stated.value) if stated else None))
    return cfg, copy, launching.build_launch(cfg, python, copy.site_dir, extra, config_dir)


@dataclass(frozen=True)
class EngineCheck:
    """vLLM's own verdict on one input beside the static one, and whether the two agree."""

    path: str
    vllm_version: Optional[str]
    python: str
    verdict: "object"            # engine.check.EngineVerdict
    static_errors: int
    profiled_because: Optional[str] = None   # why a declared GPU profile stood in, if one did

    @property
    def agrees(self) -> bool:
        return self.verdict.ok == (self.static_errors == 0)


def engine_check(path: Optional[Path] = None, *, command: Optional[str] = None,
                 python: Optional[str] = None, hardware: Optional["Hardware"] = None,
                 detected: Optional["Hardware"] = None, static_errors: int = 0) -> EngineCheck:
    """Ask the vLLM that `python` imports for its verdict on the input, up to its engine config.

    `detected` is this box's hardware: without it (no GPU visible) vLLM answers a declared GPU
    profile built from `hardware` (the input's, `--hardware`, or a default), and says so.
    A spec's `args:` go to vLLM as a `--config` file in a folder deleted afterwards.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="patchops-engine-args-") as scratch:
        return _engine_check(path, command, python, hardware, detected, static_errors, Path(scratch))


def _engine_check(path, command, python, hardware, detected, static_errors, scratch: Path) -> EngineCheck:
    """engine_check() with a spec's `--config` file written to `scratch` (deleted after)."""
    from patchops.engine import check
    from patchops.errors import UsageError
    from patchops.hardware import Hardware

    cfg, copy, launch = _launch_of(path, command, python, config_dir=scratch)
    if cfg.entrypoint != "serve":
        raise UsageError(f"{cfg.path}: lint --engine runs `vllm serve`; this input starts the "
                         "api_server module")
    profile = why = None
    if detected is None:
        from_input = {k.split(".", 1)[1]: s.value for k, s in cfg.context.items()
                      if k.startswith("hardware.")}
        given = hardware or (Hardware(**from_input, source=cfg.path) if from_input else None)
        profile = check.profile_from(_as_hardware(given))
        why = "no GPU is visible here"
    result = check.run(launch.python, copy.site_dir, ["serve", *launch.args], launch.env,
                       cwd=Path(cfg.path).parent if path is not None else None, profile=profile,
                       architectures=_architectures(cfg))
    return EngineCheck(cfg.path, copy.version, launch.python, result, static_errors, why)


def _as_hardware(given):
    """Return `given` with a compute capability spelled "8.0" (spec values may be numbers)."""
    if given is None or given.compute_capability is None:
        return given
    import dataclasses

    from patchops.lint.config import parse_compute_capability

    number = parse_compute_capability(given.compute_capability)
    return dataclasses.replace(given, compute_capability=None if number is None else f"{number:.1f}")


def _architectures(cfg) -> List[str]:
    """Return the model's architectures when its config.json is local (vLLM inspects them)."""
    import json

    if cfg.model is None:
        return []
    found = Path(str(cfg.model.value)) / "config.json"
    try:
        return list(json.loads(found.read_text()).get("architectures") or [])
    except (OSError, ValueError):
        return []


def rules(code: Optional[str] = None):
    """Return every rule class, or those `code` names: a code, prefix, name or comma list of them."""
    from patchops.errors import UsageError
    from patchops.lint import selectors
    from patchops.lint.rules import ALL_RULES

    if code is None:
        return list(ALL_RULES)
    wanted = selectors.split([code])
    match = [rule for rule in ALL_RULES if any(selectors.matches(s, rule.code, rule.name)
                                               for s in wanted)]
    if not match:
        raise UsageError(f"no rule {code!r}; `patchops rules` lists them all")
    return match


# ---------------------------------------------------------------- locate and patch

def locate(*, python: Optional[str] = None, roots: Sequence[Path] = ()):
    """Return every vLLM copy `python` could import plus vendor-root copies (a Location)."""
    from patchops import locate as locating

    return locating.locate(python=python, roots=roots)


def patchsets(patchset_dirs: Sequence[Path] = ()):
    """Return every known patchset (shipped, $PATCHOPS_PATCHSETS, `patchset_dirs`), by name."""
    from patchops.patchset import find_patchsets

    return sorted(find_patchsets(patchset_dirs).values(), key=lambda p: p.name)


def patchset(name: str, patchset_dirs: Sequence[Path] = ()):
    """Return the patchset called `name` (or at path `name`)."""
    from patchops.patchset import get_patchset

    return get_patchset(name, patchset_dirs)


@dataclass(frozen=True)
class Targets:
    """The copies a patch command works on, and which copy `import vllm` loads."""

    python: str
    copies: Tuple["VllmCopy", ...]
    winner: Optional["VllmCopy"]   # None when no copy is on the interpreter's import path
    explicit: bool = False         # chosen with --site rather than located

    def notes(self) -> List[str]:
        """Say when a copy named with --site is not the one `import vllm` loads."""
        if not self.explicit:
            return []
        loads = (f"`import vllm` in {self.python} loads {self.winner.package_dir}"
                 if self.winner else f"{self.python} imports no vLLM copy")
        return [f"{copy.site_dir} is {'shadowed' if copy.importable else 'not on the import path'}"
                f": {loads}; patching it changes nothing when vLLM runs with that interpreter "
                "(pass --python for another one)"
                for copy in self.copies if not copy.wins]


def find_targets(*, python: Optional[str] = None, roots: Sequence[Path] = (),
            sites: Sequence[Path] = ()) -> Targets:
    """Return the copies to work on: `sites` if given, else every located copy, flagged with
    whether `import vllm` loads them."""
    import dataclasses
    import os

    from patchops import locate as locating
    from patchops.errors import LocateError

    location = locating.locate(python=python, roots=roots)
    if sites:
        located = {os.path.realpath(c.package_dir): c for c in location.copies}
        chosen = []
        for site in sites:
            copy = locating.locate_site(site)
            known = located.get(os.path.realpath(copy.package_dir))
            chosen.append(dataclasses.replace(copy, wins=known.wins if known else False,
                                              importable=known.importable if known else False))
        return Targets(location.python, tuple(chosen), location.winner, explicit=True)
    if not location.copies:
        own = " (patchops's own interpreter)" if python is None else ""
        raise LocateError(f"no vLLM copy found on the import path of {location.python}{own} or "
                          "under the vendor roots; pass --python with the interpreter that runs "
                          "vLLM, point PYTHONPATH at its site-packages, or pass --root DIR or "
                          "--site DIR")
    return Targets(location.python, location.copies, location.winner)


def target_copies(*, python: Optional[str] = None, roots: Sequence[Path] = (),
                  sites: Sequence[Path] = ()):
    """Return the copies a patch command works on: `sites` if given, else every located copy."""
    return list(find_targets(python=python, roots=roots, sites=sites).copies)


def plan_apply(names: Sequence[str], *, python: Optional[str] = None, roots: Sequence[Path] = (),
               sites: Sequence[Path] = (), patchset_dirs: Sequence[Path] = (), force: bool = False,
               check: bool = True, targets: Optional[Targets] = None):
    """Compute, in memory, what applying patchsets `names` to every copy changes (an ApplyPlan).

    With check=False a plan with drift is returned (its `problems` say where) instead of
    raising DriftError, so --dry-run can show both the diff and the problems. `targets`
    (from find_targets()) saves locating again.
    """
    from patchops import patching, patchset_index

    wanted = [patchset_index.get(name, patchset_dirs) for name in dict.fromkeys(names)]
    copies = (targets or find_targets(python=python, roots=roots, sites=sites)).copies
    return patching.plan_apply(copies, wanted, force=force, check=check)


def diff(plan) -> str:
    """Return a plan's changes as a unified diff."""
    from patchops import patching

    return patching.unified_diff(plan)


def mismatches(plan):
    """Return, for a plan with drift, where each drifted op comes closest (Mismatch list)."""
    from patchops import mismatch

    return mismatch.mismatches(plan)


def commit_apply(plan):
    """Write a plan to every copy as one transaction, backing up originals (an ApplyReport)."""
    from patchops import patching

    return patching.commit_apply(plan)


@dataclass(frozen=True)
class StatusReport:
    """Status rows per copy and patchset, the copies they describe, and what was skipped."""

    targets: Targets
    rows: Tuple["StatusRow", ...]
    notes: Tuple[str, ...] = ()   # patchset files that could not be loaded, skipped


def status_report(names: Optional[Sequence[str]] = None, *, python: Optional[str] = None,
                  roots: Sequence[Path] = (), sites: Sequence[Path] = (),
                  patchset_dirs: Sequence[Path] = ()) -> StatusReport:
    """Return a StatusRow per copy and patchset, with the copies and which one `import vllm` loads.

    Without names: the patchsets patchops recorded in the copies' stores, answered from
    hashes alone; if none is recorded anywhere, every known patchset (a patchset file that
    cannot be loaded is then a note, not an error: one broken file in PATCHOPS_PATCHSETS
    must not hide the status of the rest).
    """
    from patchops import patching, patchset_index
    from patchops.errors import PatchopsError
    from patchops.patchset import patchset_files

    chosen = find_targets(python=python, roots=roots, sites=sites)
    notes: List[str] = []
    recorded = [] if names else _recorded_patchsets(chosen.copies)
    if names or recorded:   # a recorded patchset may be known only from the YAML its store kept
        wanted = patching.load_patchsets(chosen.copies, names or recorded, patchset_dirs)
    else:
        wanted = []
        for path in patchset_files(patchset_dirs).values():
            try:
                wanted.append(patchset_index.load(path))
            except PatchopsError as error:
                notes.append(f"skipped: {error.message}")
    rows = patching.status(chosen.copies, wanted)
    return StatusReport(chosen, tuple(rows), (*notes, *rows.notes))


def status(names: Optional[Sequence[str]] = None, *, python: Optional[str] = None,
           roots: Sequence[Path] = (), sites: Sequence[Path] = (),
           patchset_dirs: Sequence[Path] = ()):
    """Return a StatusRow per copy and patchset (status_report() also says which copy wins)."""
    return list(status_report(names, python=python, roots=roots, sites=sites,
                              patchset_dirs=patchset_dirs).rows)


def _recorded_patchsets(copies) -> List[str]:
    from patchops.store import Store

    names: List[str] = []
    for copy in copies:
        store = Store(copy.site_dir)
        if store.exists():
            state = store.read_state()
            for entry in state.files.values():
                names.extend(entry.patchsets)
            names.extend(state.satisfied)
    return list(dict.fromkeys(names))


def any_drift(rows) -> bool:
    """Return whether any status row is drifted."""
    from patchops import patching

    return patching.any_drift(rows)


def rollback(names: Optional[Sequence[str]] = None, *, force: bool = False,
             python: Optional[str] = None, roots: Sequence[Path] = (), sites: Sequence[Path] = (),
             patchset_dirs: Sequence[Path] = ()):
    """Restore originals for `names` (None: all) in every copy, keeping other patchsets.

    `--all` with nothing applied anywhere returns an empty report, as a repeated apply does;
    naming a patchset that is applied nowhere is still an error (a typo must not pass).
    """
    from patchops import patching
    from patchops.errors import PatchopsError

    copies = target_copies(python=python, roots=roots, sites=sites)
    try:
        return patching.rollback(copies, names, force=force, patchsets_dirs=patchset_dirs)
    except PatchopsError as error:
        # Raised after recovery, so an interrupted transaction was already repaired.
        if names is None and error.message.startswith("nothing to roll back"):
            return patching.RollbackReport((), (), (), None, (error.message,))
        raise


# ---------------------------------------------------------------- verify, diff, export, capture

def verify(*, python: Optional[str] = None, roots: Sequence[Path] = (), sites: Sequence[Path] = ()):
    """Check every file of every copy against its RECORD (a CopyVerification per copy)."""
    from patchops import verify as verifying

    return verifying.verify(target_copies(python=python, roots=roots, sites=sites))


def any_difference(results) -> bool:
    """Return whether any copy differs from its RECORD in a way patchops did not write."""
    return any(result.differs for result in results)


def capture(name: str, files: Sequence[Path], *, base: Optional[Path] = None, from_wheel: bool = False,
            out_dir: Path = Path("patchsets"), versions: Optional[str] = None, force: bool = False,
            record: bool = True):
    """Write patchsets/NAME.yaml reproducing hand edits of `files` (a CaptureResult)."""
    from patchops import capture as capturing

    return capturing.capture(name, files, base=base, from_wheel=from_wheel, out_dir=out_dir,
                             versions=versions, force=force, record=record)


def file_diffs(target: Optional[str] = None, *, python: Optional[str] = None,
               roots: Sequence[Path] = (), sites: Sequence[Path] = ()):
    """Return recorded files (of patchset or file `target`) diffed against their stored originals."""
    from patchops import diffs

    return diffs.diff(target_copies(python=python, roots=roots, sites=sites), target)


def export(name: str, *, python: Optional[str] = None, roots: Sequence[Path] = (),
           sites: Sequence[Path] = (), patchset_dirs: Sequence[Path] = ()) -> str:
    """Return what patchset `name` does to the copies' pristine files, as a `patch -p1` patch."""
    from patchops import diffs
    from patchops.patchset import get_patchset

    patchset = get_patchset(name, patchset_dirs)
    return diffs.export(target_copies(python=python, roots=roots, sites=sites), patchset)


def write_text(path: Path, text: str) -> None:
    """Write an output file (a patch) atomically."""
    from patchops.site_files import atomic_write

    atomic_write(path, text.encode("utf-8"))
