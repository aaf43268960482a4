"""PO710 unknown-executor-backend."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, messages
from patchops.lint.vllm.routing import EXECUTOR_BACKEND


class UnknownExecutorBackend(Rule):
    """
    ## What it does
    Flags a `--distributed-executor-backend` that is neither a built-in executor (`mp`, `ray`,
    `uni`, `external_launcher`, read from the copy) nor the import path of an Executor class
    (`my_pkg.executors.MyExecutor`, imported while the config is built: a path that does not
    import fails there too, which patchops cannot see). From 0.10.2 argparse no longer lists the choices: any other
    string is taken for an import path (`Executor.get_class` calls `resolve_obj_by_qualname`),
    which a name without a dot cannot be. Before that argparse refuses such a name itself
    (`invalid-flag-value`).

    ## Why is this bad?
    vLLM refuses to build its config with a bare pydantic error that names neither the flag
    nor the value: "not enough values to unpack (expected 2, got 1)".

    ## Fix
    Use one of the built-in backends, or the full `module.Class` path of your Executor.
    """

    code = "PO710"
    name = "unknown-executor-backend"
    severity = "error"
    versions = ">=0.10.2"
    vllm_message = messages.EXECUTOR_BACKEND_UNPACK
    explains = (messages.EXECUTOR_BACKEND_CHECK,)
    VALID = [
        Example("model: m\nargs:\n  distributed-executor-backend: mp\n", vllm="0.33.0"),
        Example("model: m\nargs:\n  distributed-executor-backend: "
                "vllm.v1.executor.multiproc_executor.MultiprocExecutor\n", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  distributed-executor-backend: multiproc\n", vllm="0.33.0", at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, EXECUTOR_BACKEND)
        flag = facts.flags.get(EXECUTOR_BACKEND)
        if found is None or flag is None or flag.choices or not facts.parallel.executor_by_qualname:
            return
        value = found.value
        known = tuple(flag.known_values or ())
        if not isinstance(value, str) or not known or value in known or "." in value:
            return
        yield self.diagnostic(
            cfg, found, f"{EXECUTOR_BACKEND} {value!r} is no executor vLLM {facts.version} knows",
            explanation=f"it is no built-in executor ({', '.join(known)}) and no `module.Class` import "
            "path; vLLM refuses it while building ParallelConfig", fields=(EXECUTOR_BACKEND,),
            fix=f"use one of {', '.join(known)}, or the import path of an Executor subclass")
