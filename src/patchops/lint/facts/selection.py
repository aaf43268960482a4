"""Choose the facts to lint against: a named copy, the copy that wins, or a stated version."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from patchops.core.errors import LintInputError, UsageError
from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.facts.model import Facts, facts_for_version
from patchops.lint.facts.cache import facts_for_copy


def facts_for_config(cfg: ServeConfig, *, vllm_path: Optional[Path] = None,
                     vllm_version: Optional[str] = None, python: Optional[str] = None) -> Facts:
    """Return the facts of the vLLM that will run `cfg`.

    Order: `--vllm PATH`, the copy `--python` imports, the spec's `vllm.python`, the release a
    container's image tag names (`vllm/vllm-openai:v0.8.5`: the container brings its own vLLM,
    whatever this machine has), the copy that
    wins the import here, the spec's `vllm.version`, and last `--vllm-version`, a fallback
    for inputs that state no version (so a pre-commit hook can pass one without overriding
    the specs that state theirs). A stated version is linted from the facts shipped for
    that release; an installed copy is read (and cached) from its files.
    """
    from patchops.host.locate import locate_site

    if vllm_path is not None and (vllm_version or python):
        raise UsageError("--vllm names the copy to lint against; drop --vllm-version and --python")
    if vllm_path is not None:
        return facts_for_copy(locate_site(vllm_path).site_dir)
    if python is not None:
        winner = _winner(python)
        if winner is None:
            raise LintInputError(f"{cfg.path}: the interpreter {python!r} (--python) imports no "
                                 "vLLM copy; pass the Python that runs vLLM, or --vllm PATH")
        return facts_for_copy(winner.site_dir)
    spec_python = cfg.context.get("vllm.python")
    if spec_python is not None:
        winner = _winner(str(spec_python.value))
        if winner is None:
            raise LintInputError(f"{cfg.path}:{spec_python.line}:{spec_python.column}: the "
                                 f"interpreter {spec_python.value!r} imports no vLLM copy; fix "
                                 "vllm.python or pass --vllm PATH")
        return facts_for_copy(winner.site_dir)
    image = cfg.context.get("vllm.image")
    if image is not None:
        try:
            return facts_for_version(str(image.value))
        except LintInputError as exc:  # name the image's line: the release came from its tag
            raise LintInputError(f"{cfg.path}:{image.line}:{image.column}: {exc}") from None
    winner = _winner(None)
    if winner is not None:
        return facts_for_copy(winner.site_dir)
    stated = cfg.context.get("vllm.version")
    if stated is not None:
        try:
            return facts_for_version(str(stated.value))
        except LintInputError as exc:  # name the spec's line: the version came from there
            raise LintInputError(f"{cfg.path}:{stated.line}:{stated.column}: {exc}") from None
    if vllm_version:
        return facts_for_version(vllm_version)
    raise LintInputError(f"{cfg.path}: no vLLM copy is importable here and the config does not say "
                         "which vLLM will run it; set `vllm: {version: X}` in the spec, pass "
                         "--vllm-version X, or point --python at the interpreter that runs vLLM "
                         "(patchops installed with pipx or in its own venv sees only its own)")


def _winner(python: Optional[str]):
    """Return the copy `python` (None: this interpreter) imports, telling a cached result what decided it.

    Another interpreter's sys.path is its own answer, printed by a subprocess no read log can
    see: a cached result asks it again (result_cache._holds).
    """
    from patchops.lint import result_cache
    from patchops.host.locate import locate

    location = locate(python=python)
    if python is not None:
        result_cache.vouch("interpreter", python, [list(e) for e in location.search_path])
    return location.winner
