"""The library API for linting: lint, lint --fix, explain, launch plans, engine checks, rules.

Reached through `patchops.api` (its names load this module on first use). Plain functions
returning plain records (patchops.core.records); nothing here prints.

Over 400 lines because it holds lint's whole flow as `patchops lint` runs it: one input, many,
their fixes, the engine checks after them and the exit code, each a few small functions.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Tuple

from patchops.core.errors import OK, PROBLEMS_FOUND, USAGE_OR_INPUT_ERROR
from patchops.core.records import field, record

if TYPE_CHECKING:  # lint.rule pulls in packaging; nothing is imported until a function runs
    from patchops.api.explaining import EngineCheck
    from patchops.host.hardware import Hardware
    from patchops.lint.rule import Diagnostic, NotRun

STDIN = "-"
LINTABLE_SUFFIXES = (".yaml", ".yml", ".sh", ".md")  # what `lint DIR` picks up, with Dockerfiles


@record(frozen=True)
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
    model_config: Optional[str] = None   # the model's config.json read, None when there was none
    not_run: List["NotRun"] = field(default_factory=list)  # rules not called: what they lacked, what to do
    launch: Optional[str] = None         # which launch of the file ("Deployment/x container vllm")
    notes: List[str] = field(default_factory=list)    # what the input left unknown (a Secret's value)
    no_launch: Optional[str] = None      # the file holds no vLLM launch: what it is instead
    sources: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # other files' lines findings are in

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
         model_config=None, fetch: bool = False, launch: Optional[str] = None,
         loaded=None) -> LintResult:
    """Lint one serve spec, vLLM config or launch script (`path`) or a launch `command`.

    `hardware` (from `--hardware`, the settings file or `hardware.detect()`) fills the
    `hardware:` fields the input leaves unstated; what the input states wins. `text` is the
    content of `path` when it was not read from disk (stdin). Raises LintInputError when the
    input cannot be linted; lint_inputs() reports it instead. `model_config` is what
    `--model-config` says (a FILE, or a list of MODEL=FILE, FILE and DIR values); `fetch`
    lets a hub model's config.json come from the Hub. A file holding several launches (a
    manifest) needs `launch`, the name of one; `loaded` is a ServeConfig already read.
    """
    from patchops.lint.other_release import soften
    from patchops.lint.facts.selection import facts_for_config
    from patchops.lint.runner import run_rules

    if loaded is not None:
        cfg, assumed = loaded, (_assume_hardware(loaded, hardware) if hardware is not None else None)
    else:
        cfg, assumed = load_input(path, command, hardware, text, launch)
    facts = facts_for_config(cfg, vllm_path=vllm_path, vllm_version=vllm_version, python=python)
    run = run_rules(cfg, facts, select=select, ignore=ignore, given=_given(model_config), fetch=fetch)
    source = run.seen.model_source
    diagnostics = soften(cfg, facts, run.diagnostics, select, ignore, model=source)
    # "/site (vouched)": where the facts came from and how they were read (facts/vouch.py)
    origin = f"{facts.origin} ({facts.read})" if facts.read else facts.origin
    return LintResult(path=cfg.path, vllm_version=facts.version, facts_origin=origin,
                      diagnostics=diagnostics, source_lines=tuple(cfg.lines), hardware=assumed,
                      not_run=run.not_run, model_config=source.path if source.facts is not None else None,
                      launch=cfg.launch_name, notes=list(cfg.notes),
                      sources={name: tuple(lines.lines) for name, lines in cfg.sources.items()})


def _given(model_config):
    """Return `--model-config`'s values read (lint/input/model_source.py)."""
    from patchops.lint.input.model_source import parse_given

    if model_config is None:
        return parse_given(())
    values = [model_config] if isinstance(model_config, (str, Path)) else model_config
    return parse_given([str(v) for v in values])


def lint_inputs(paths: Sequence[Path] = (), *, command: Optional[str] = None,
                vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
                python: Optional[str] = None, select: Sequence[str] = (),
                ignore: Sequence[str] = (), hardware: Optional["Hardware"] = None,
                settings=None, stdin=None, model_config=None, fetch: Optional[bool] = None,
                cache: bool = False, sources: Optional[Dict[str, str]] = None) -> List[LintResult]:
    """Lint every input, going on past those that cannot be linted (each becomes a PO003 finding).

    A folder stands for the YAML and .sh files under it; `-` reads `stdin`. `settings` (a
    patchops.core.settings.Settings, default: the file found from the current folder) adds its
    select/ignore lists and per-file ignores, and gives the vLLM version, interpreter and
    hardware (when `hardware` is None) for inputs that state none. A bad selector is still a UsageError: it would
    change every result. `cache` answers from lint/result_cache.py when nothing the results
    were computed from has changed (`lint --no-cache` turns it off). `fetch` None: the
    environment's PATCHOPS_FETCH, else the settings' `fetch`, else on. `sources` are files'
    texts already read, by path (`--fix` reads each file once); a cached run reads them itself,
    so its read log sees them.
    """
    options = dict(command=command, vllm_path=vllm_path, vllm_version=vllm_version, python=python,
                   select=select, ignore=ignore, hardware=hardware, settings=settings,
                   model_config=model_config, fetch=fetch)
    if cache:
        from patchops.lint import result_cache

        text = (stdin or sys.stdin).read() if any(str(p) == STDIN for p in paths) else None
        given = {k: _jsonable(v) for k, v in options.items()}
        given.update(paths=[str(p) for p in paths], stdin=text)
        return result_cache.cached(
            given, lambda: _lint_inputs(paths, **options, stdin=_text_stream(text), sources={}),
            result_cache.encode_result, lambda data: result_cache.decode_result(LintResult, data))
    return _lint_inputs(paths, **options, stdin=stdin, sources=sources or {})


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
                 settings, model_config, fetch, stdin, sources) -> List[LintResult]:
    from patchops.core.errors import LintInputError
    from patchops.lint.runner import read_elsewhere
    from patchops.lint.rules.input_not_linted import InputNotLinted

    choose, select, ignore, found = _lint_options(select, ignore, vllm_path, vllm_version, python,
                                                  hardware, settings, model_config, fetch)
    inputs: List[dict] = [dict(path=p) for p in expand_inputs(paths)]
    if command is not None:
        inputs.append(dict(command=command))
    results = []
    for given in inputs:
        shown = str(given.get("path", "<command>"))
        if shown == STDIN:
            shown = "<stdin>"
            given = dict(path=shown, text=(stdin or sys.stdin).read())
        options = dict(choose, select=select, ignore=[*ignore, *found.ignores_for(shown)])
        try:
            if "command" in given:
                results.append(lint(**given, **options))
            else:
                results.extend(lint_file(given["path"], given.get("text"), options,
                                         source=sources.get(shown)))
        except LintInputError as error:
            text = given.get("text") or given.get("command") or sources.get(shown) or _text_of(given.get("path"))
            results.append(LintResult(shown, "", "", [InputNotLinted.from_error(shown, error)],
                                      error=error.message, source_lines=tuple(text.splitlines())))
    return read_elsewhere(results)


def lint_file(path, text: Optional[str], options: dict, texts: Optional[Dict[str, str]] = None,
              source: Optional[str] = None) -> List[LintResult]:
    """Lint every vLLM launch one file holds (`text`: its content, when not read from disk).

    A file with none (a workflow, a Helm values file) gives one result saying what it is.
    An input that cannot be linted raises LintInputError, as lint() does. `texts` are the
    `--config FILE`s it loads, by path, when not read from disk (`--fix` between passes);
    `source` the file's own content, read already, still loaded as the file it is.
    """
    from patchops.lint.input.loaders import load_file_inputs, load_text_inputs

    loaded = load_text_inputs(text, path=str(path), texts=texts) if text is not None \
        else load_file_inputs(Path(path), source)
    if loaded.skipped is not None:
        return [LintResult(str(path), "", "", [], no_launch=loaded.skipped)]
    return [lint(path, loaded=cfg, **options) for cfg in loaded.configs]


def _lint_options(select, ignore, vllm_path, vllm_version, python, hardware, settings, model_config,
                  fetch=None):
    """Return (lint() keyword arguments, select, ignore, settings) after the settings file."""
    from patchops.core import settings as settings_file
    from patchops.core.errors import UsageError
    from patchops.lint import selectors
    from patchops.lint.input.model_source import fetch_allowed
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
                  model_config=model_config, fetch=fetch_allowed(fetch, found.fetch))
    return choose, select, ignore, found


@record(frozen=True)
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
               settings=None, model_config=None, fetch: Optional[bool] = None) -> List[FixResult]:
    """Apply the exact fixes of every input file (`lint --fix`), or only compute them (`write=False`).

    Each file is fixed pass by pass against the same facts and options as lint_inputs() uses,
    then linted once more; `unsafe` also applies fixes that change what vLLM does. Files are
    replaced with store.atomic_write (mode and owner kept, a UTF-8 BOM kept); an input that
    cannot be linted is reported as lint_inputs() reports it and left alone.
    """
    from patchops.core.errors import LintInputError, UsageError
    from patchops.lint.fixes import fix_input
    from patchops.lint.input.loaders import read_source
    from patchops.store.site_store import atomic_write

    files = expand_inputs(paths)
    if any(str(p) == STDIN for p in files):
        raise UsageError("--fix and --diff rewrite files; they cannot take `-` (stdin)")
    sources = {}
    for path in files:
        try:
            sources[str(path)] = read_source(path)
        except (OSError, LintInputError):
            continue    # lint_inputs says why it cannot be linted
    firsts = lint_inputs(files, vllm_path=vllm_path, vllm_version=vllm_version, python=python,
                         select=select, ignore=ignore, hardware=hardware, settings=settings,
                         model_config=model_config, fetch=fetch,
                         sources={path: text for path, (text, _bom) in sources.items()})
    choose, select, ignore, found = _lint_options(select, ignore, vllm_path, vllm_version, python,
                                                  hardware, settings, model_config, fetch)
    out = []
    for path, first in zip(files, _by_file(files, firsts)):
        if first.error is not None or not any(d.autofix for d in first.diagnostics):
            out.append(FixResult(first))
            continue
        options = dict(choose, select=select, ignore=[*ignore, *found.ignores_for(str(path))])
        original, bom = sources[str(path)]
        done = fix_input(str(path), original, lambda text, texts: [
            d for found in lint_file(path, text, options, texts=texts) for d in found.diagnostics],
            lambda other: read_source(other)[0], unsafe=unsafe)
        fixed = done.own
        result = _one_result(lint_file(path, fixed.text, options, texts=done.texts)) \
            if fixed.text != original or done.texts else first
        if write and fixed.text != original:
            atomic_write(path, bom + fixed.text.encode("utf-8"), what="serve config")
        out.append(FixResult(result, fixed.fixed, original, fixed.text,
                             written=write and fixed.text != original))
        for other, before, after in done.others:     # a `--config FILE` the fixes edited
            if write:
                atomic_write(other, read_source(other)[1] + after.text.encode("utf-8"), what="serve config")
            out.append(FixResult(LintResult(other, result.vllm_version, result.facts_origin, []),
                                 after.fixed, before, after.text, written=write))
    return out


@record(frozen=True)
class LintRun:
    """What `patchops lint` found: each input's result and, when fixing, each file's fixes."""

    results: List[LintResult]
    fixes: Optional[List[FixResult]] = None   # None: no fix asked for
    diff_only: bool = False                   # --diff: the fixes computed, nothing written

    @property
    def fixed(self) -> Optional[int]:
        """Return how many fixes went in, or None when no fix was asked for."""
        return None if self.fixes is None else sum(f.fixed for f in self.fixes)

    @property
    def unlinted(self) -> List[LintResult]:
        return [r for r in self.results if r.error is not None]


def lint_run(paths: Sequence[Path] = (), *, command: Optional[str] = None, fix: bool = False,
             diff: bool = False, unsafe: bool = False, cache: bool = True, **options) -> LintRun:
    """Lint the inputs (`patchops lint`), fixing them first with `fix`, or with `diff` only computing the fixes.

    `options` are what lint_inputs() and fix_inputs() share (vllm_path, select, hardware, ...);
    `cache` answers a repeated lint from lint/result_cache.py. A command has no file to fix.
    """
    from patchops.core.errors import UsageError

    if fix or diff:
        if command is not None:
            raise UsageError("--fix and --diff rewrite files; --cmd has none (put the command in a .sh file)")
        fixes = fix_inputs(paths, unsafe=unsafe, write=not diff, **options)
        return LintRun([f.result for f in fixes], fixes, diff_only=diff)
    return LintRun(lint_inputs(paths, command=command, cache=cache, **options))


def engine_checks(paths: Sequence[Path] = (), *, command: Optional[str] = None,
                  python: Optional[str] = None, hardware: Optional["Hardware"] = None,
                  results: Sequence[LintResult] = ()) -> Iterator["EngineCheck"]:
    """Yield `lint --engine`'s check of each input, in lint's order, as vLLM answers each.

    `hardware` is the stated hardware (None: the input's own, or a default profile where no
    GPU is visible); `results` are lint's, one per input, whose error counts each check keeps.
    """
    from patchops.api.explaining import engine_check
    from patchops.host.hardware import detect

    detected = detect()
    inputs = [dict(path=f) for f in expand_inputs(paths)] + ([dict(command=command)] if command is not None else [])
    for given, result in zip(inputs, results):
        yield engine_check(**given, python=python, hardware=hardware, detected=detected,
                           static_errors=result.errors)


def lint_exit_code(run: LintRun, *, strict: bool = False, exit_zero: bool = False,
                   engines: Sequence["EngineCheck"] = ()) -> int:
    """Return `patchops lint`'s exit code for `run` and the engine checks that followed it.

    With --diff, PROBLEMS_FOUND when a fix would change a file. An input not linted, or an
    engine check vLLM could not run (no verdict on the config), is USAGE_OR_INPUT_ERROR. Else
    PROBLEMS_FOUND for errors (warnings too when `strict`) or a refusal, unless `exit_zero`.
    """
    if run.diff_only:
        return PROBLEMS_FOUND if any(f.changed for f in run.fixes or ()) else OK
    if run.unlinted or any(not found.verdict.ran for found in engines):
        return USAGE_OR_INPUT_ERROR
    failing = sum(r.errors + (r.warnings if strict else 0) for r in run.results)
    failing += sum(not found.verdict.ok for found in engines)
    return PROBLEMS_FOUND if failing and not exit_zero else OK


def _by_file(files: Sequence[Path], results: List[LintResult]) -> List[LintResult]:
    """Return one result per file: a file's launches (a manifest's containers) merged in one."""
    merged = []
    index = 0
    for path in files:
        group = []
        while index < len(results) and results[index].path == str(path):
            group.append(results[index])
            index += 1
        merged.append(_one_result(group) if group else LintResult(str(path), "", "", []))
    return merged


def _one_result(results: List[LintResult]) -> LintResult:
    """Return the results of one file's launches as one result holding all their findings."""
    from patchops.core import records

    if len(results) == 1:
        return results[0]
    first = results[0]
    return records.replace(first, diagnostics=[d for r in results for d in r.diagnostics],
                           launch=None, notes=[n for r in results for n in r.notes],
                           not_run=[n for r in results for n in r.not_run])


def expand_inputs(paths: Sequence[Path]) -> List[Path]:
    """Return `paths` with each folder replaced by the lintable files under it, sorted."""
    from patchops.lint.input.dockerfile import is_dockerfile

    expanded: List[Path] = []
    for path in paths:
        if str(path) != STDIN and Path(path).is_dir():
            expanded.extend(sorted(
                found for found in Path(path).rglob("*")
                if (found.suffix in LINTABLE_SUFFIXES or is_dockerfile(found.name)) and found.is_file()
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
    from patchops.host.hardware import Hardware

    table = dict(found.hardware)
    if "compute_capability" in table:
        table["compute_capability"] = str(table["compute_capability"])
    for key in ("memory_gib", "host_memory_gib"):
        if key in table:
            table[key] = float(table[key])
    return Hardware(source=str(found.path), **table)


def load_input(path, command, hardware, text: Optional[str] = None, launch: Optional[str] = None):
    """Read one input and fill the hardware it leaves unstated; return (cfg, what was assumed).

    `text` is the content of `path` when it was not read from disk (stdin); `launch` names
    one launch of a file that holds several.
    """
    from patchops.lint.input.loaders import load_command, load_file_inputs, load_text_inputs, only_launch

    if (path is None) == (command is None):
        raise ValueError("pass exactly one of path or command")
    if command is not None:
        cfg = load_command(command)
    elif text is not None:
        cfg = only_launch(load_text_inputs(text, path=str(path)), launch)
    else:
        cfg = only_launch(load_file_inputs(Path(path)), launch)
    return cfg, (_assume_hardware(cfg, hardware) if hardware is not None else None)


def _assume_hardware(cfg, hardware: "Hardware") -> Optional[str]:
    """Add the hardware fields `cfg` does not state; say what was assumed, or None if nothing."""
    from patchops.lint.input.serve_config import Setting

    added = [key for key in hardware.context() if key not in cfg.context]
    for key in added:
        cfg.context[key] = Setting(key=key, name=key, value=hardware.context()[key], line=0,
                                   column=0, source=hardware.origin_of(key))
    return hardware.describe() if added else None


def renamed_codes(selectors: Sequence[str] = (), settings=None) -> List[Tuple[str, str]]:
    """Return (old, new) for each old rule code among `selectors` and, given, a settings file's lists.

    An old code acts as its new one everywhere (lint/codes.py); the CLI says so once, as ruff does.
    """
    from patchops.lint import codes, selectors as selector_lists

    given = list(selectors)
    if settings is not None:
        given += [*settings.select, *settings.ignore, *(s for _, listed in settings.per_file_ignores for s in listed)]
    return codes.redirects_in(selector_lists.split(given))


def rules(code: Optional[str] = None):
    """Return every rule class, or those `code` names: a code, prefix, name or comma list of them."""
    from patchops.core.errors import UsageError
    from patchops.lint import selectors
    from patchops.lint.rules import ALL_RULES

    if code is None:
        return list(ALL_RULES)
    wanted = selectors.split([code])
    match = [rule for rule in ALL_RULES if any(selectors.matches(s, rule.code, rule.name)
                                               for s in wanted)]
    if not match:
        raise UsageError(f"no rule {code!r}{selectors.did_you_mean(code, ALL_RULES)}; "
                         "`patchops rules` lists them all")
    return match
