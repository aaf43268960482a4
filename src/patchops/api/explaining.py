"""The library API past the lint verdict: explain, launch plans, and vLLM's own engine check.

Reached through `patchops.api` (its names load this module on first use). Plain functions
returning plain dataclasses; nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence

from patchops.api.linting import lint, load_input

if TYPE_CHECKING:
    from patchops.host.hardware import Hardware


@dataclass(frozen=True)
class ExplainResult:
    """The effective engine settings of one input (lint.explain.Row each) and what judged them."""

    path: str
    vllm_version: str
    facts_origin: str
    rows: list
    hardware: Optional[str] = None
    errors: tuple = ()          # lint's errors (Diagnostic): the config will not start as it is


def explain(path: Optional[Path] = None, *, command: Optional[str] = None,
            vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
            hardware: Optional["Hardware"] = None, launch: Optional[str] = None,
            text: Optional[str] = None) -> ExplainResult:
    """Return the settings vLLM will run `path` or `command` with, each with its origin.

    `launch` names one launch of a file that holds several (a manifest's containers); `text`
    is the content of `path` when it was not read from disk (stdin).
    """
    from patchops.lint.explain import explain as effective
    from patchops.lint.facts.selection import facts_for_config

    from patchops.lint.input.model_source import GivenConfigs, choose
    from patchops.lint.reading import read_as_vllm

    cfg, assumed = load_input(path, command, hardware, text, launch=launch)
    facts = facts_for_config(cfg, vllm_path=vllm_path, vllm_version=vllm_version)
    # The model folder's config.json, as lint reads it: max_model_len is derived from it.
    model = choose(read_as_vllm(cfg, facts), GivenConfigs(), fetch=False)
    # A clean table for a config vLLM refuses would mislead: lint the same input, as read once.
    verdict = lint(path, command=command, vllm_path=vllm_path, vllm_version=vllm_version,
                   hardware=hardware, launch=launch, text=text, loaded=cfg)
    return ExplainResult(path=cfg.path, vllm_version=facts.version, facts_origin=facts.origin,
                         rows=effective(cfg, facts, _applied_fields(facts), model), hardware=assumed,
                         errors=tuple(d for d in verdict.diagnostics if d.severity == "error"))


def _applied_fields(facts) -> dict:
    """Return {field: (patchset, file:line)} for the copy the facts were read from (shipped: {})."""
    from patchops.patching.applied_settings import applied_keywords

    site = Path(facts.origin)
    if not site.is_absolute() or not (site / "vllm").is_dir():
        return {}
    return {found.field: (found.patchset, found.where) for found in applied_keywords(site)}


def plan_launch(path: Optional[Path] = None, *, command: Optional[str] = None,
                python: Optional[str] = None, extra: Sequence[str] = (),
                select: Sequence[str] = (), ignore: Sequence[str] = (),
                hardware: Optional["Hardware"] = None, launch: Optional[str] = None):
    """Lint a config against the copy that will run it; return (LintResult, Launch).

    The interpreter is `python`, else the spec's `vllm.python`, else this one. `extra`
    arguments are linted after the file's own, as vLLM reads them (they override it), each
    finding where its value is written: the file, or `<launch -- arguments>`.
    A launch that runs in a container (a manifest, compose file, `docker run`, Dockerfile) is
    refused: its vLLM is the image's, not one on this machine. `launch` names one launch of a
    file that holds several.
    """
    from patchops.lint.input.launch_command import with_arguments

    cfg, copy, launch = _launch_of(path, command, python, extra, launch=launch)
    result = lint(loaded=with_arguments(cfg, list(extra)) if extra else cfg, vllm_path=copy.site_dir,
                  select=select, ignore=ignore, hardware=hardware)
    return result, launch


def _launch_of(path, command, python, extra: Sequence[str] = (), config_dir: Optional[Path] = None,
               launch: Optional[str] = None):
    """Read one input and build its launch under the interpreter that will run it.

    The interpreter is `python`, else the spec's `vllm.python`, else this one; returns
    (cfg, the copy it imports, the Launch). A spec's `args:` go to a `--config` file in
    `config_dir` (default: launching.launch_config_dir()).
    """
    from patchops.run import launch as launching

    from patchops.core.errors import UsageError

    cfg, _ = load_input(path, command, None, launch=launch)
    if cfg.container is not None:
        raise UsageError(f"{cfg.path}: {cfg.launch_name} runs in a container ({cfg.container}), "
                         "whose vLLM is the image's: patchops runs vLLM on this machine only. "
                         "Start it with docker or kubectl; `patchops lint` and `patchops explain` "
                         "read it as it is")
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
    from patchops.run import engine_check as check
    from patchops.core.errors import UsageError
    from patchops.host.hardware import Hardware

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
    from patchops.core import records
    from patchops.lint.input.serve_config import parse_compute_capability

    number = parse_compute_capability(given.compute_capability)
    return records.replace(given, compute_capability=None if number is None else f"{number:.1f}")


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
