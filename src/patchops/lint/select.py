"""Choose the facts to lint against: a named copy, a stated version, or the copy that wins."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from patchops.errors import LintInputError
from patchops.lint.config import ServeConfig
from patchops.lint.facts import Facts, facts_for_copy, facts_for_version


def facts_for_config(cfg: ServeConfig, *, vllm_path: Optional[Path] = None,
                     vllm_version: Optional[str] = None) -> Facts:
    """Return the facts of the vLLM that will run `cfg`.

    Order: `--vllm PATH`, `--vllm-version`, the spec's `vllm.python`, the copy that wins the
    import on this machine, the spec's `vllm.version`. A stated version is linted from the
    facts shipped for that release; an installed copy is read (and cached) from its files.
    """
    from patchops.locate import locate, locate_site

    if vllm_path is not None:
        return facts_for_copy(locate_site(vllm_path).site_dir)
    if vllm_version:
        return facts_for_version(vllm_version)
    python = cfg.context.get("vllm.python")
    if python is not None:
        winner = locate(python=str(python.value)).winner
        if winner is None:
            raise LintInputError(f"{cfg.path}:{python.line}:{python.column}: the interpreter "
                                 f"{python.value!r} imports no vLLM copy; fix vllm.python or pass --vllm PATH")
        return facts_for_copy(winner.site_dir)
    winner = locate().winner
    if winner is not None:
        return facts_for_copy(winner.site_dir)
    stated = cfg.context.get("vllm.version")
    if stated is not None:
        try:
            return facts_for_version(str(stated.value))
        except LintInputError as exc:  # name the spec's line: the version came from there
            raise LintInputError(f"{cfg.path}:{stated.line}:{stated.column}: {exc}") from None
    raise LintInputError(f"{cfg.path}: no vLLM copy is importable here and the config does not say "
                         "which vLLM will run it; set `vllm: {version: X}` in the spec, pass "
                         "--vllm-version X, or point --vllm at the site-packages holding vLLM")
