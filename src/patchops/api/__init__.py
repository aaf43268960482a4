"""The library API the CLI calls: plain functions returning plain records and dataclasses.

Other programs (CI gates, launch scripts) call these directly (`from patchops import api`,
`api.status_report()`, `api.lint_inputs([...])`); nothing here prints. Each name loads its
module on first use: `status` and `apply` run without defining lint's result classes, and
`lint` without the patch engine's, so each command starts near the typer+rich import floor. The work lives in the modules below.
"""

from importlib import import_module

_HOMES = {
    "patchops.api.linting": ("STDIN", "LINTABLE_SUFFIXES", "LintResult", "lint", "lint_inputs",
                             "FixResult", "fix_inputs", "expand_inputs", "settings_hardware",
                             "load_input", "lint_file", "rules", "LintRun", "lint_run",
                             "engine_checks", "lint_exit_code", "renamed_codes"),
    "patchops.api.explaining": ("ExplainResult", "explain", "plan_launch", "EngineCheck",
                                "engine_check"),
    "patchops.api.copies": ("locate", "patchsets", "patchset", "Targets", "find_targets",
                            "target_copies", "plan_apply", "diff", "mismatches", "commit_apply",
                            "StatusReport", "status_report", "status", "any_drift", "rollback",
                            "verify", "any_difference", "capture", "file_diffs", "export",
                            "write_text"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}
__all__ = sorted(_HOME_OF)


def __getattr__(name: str):
    """Load the module holding `name` and return it (PEP 562)."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'patchops.api' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value   # later lookups skip this function
    return value


def __dir__():
    return __all__
