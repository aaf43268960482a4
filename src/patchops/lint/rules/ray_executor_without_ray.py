"""PO704 ray-executor-without-ray."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, messages


class RayExecutorWithoutRay(Rule):
    """
    ## What it does
    Flags `--distributed-executor-backend ray` where Ray is not installed: known exactly when
    linting an installed copy (`--vllm`), else taken from the release's wheel, which depends
    on Ray up to 0.15 and not from 0.20.

    ## Why is this bad?
    `ParallelConfig._verify_args` asserts Ray at config time: "Failed to import Ray, please
    install Ray with `pip install ray`."

    ## Fix
    `pip install ray` into the environment that runs vLLM, or use the `mp` executor on one node.
    """

    code = "PO704"
    name = "ray-executor-without-ray"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.RAY_NOT_INSTALLED
    explains = (messages.RAY_NEEDED_CHECK,)
    VALID = [
        Example("model: m\nargs:\n  distributed-executor-backend: ray\n", vllm="0.8.5"),
        Example("model: m\nargs:\n  distributed-executor-backend: ray\n", vllm="0.33.0", facts={"has_ray": True}),
        Example("model: m\nargs:\n  distributed-executor-backend: mp\n", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  distributed-executor-backend: ray\n", vllm="0.33.0", at=(3, 3)),
        Example("model: m\nargs:\n  distributed-executor-backend: ray\n", vllm="0.8.5",
                facts={"has_ray": False}, at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, "distributed_executor_backend")
        if found is None or found.value != "ray":
            return
        present = facts.has_ray if facts.has_ray is not None else facts.parallel.ray_required
        if present is not False:
            return   # installed, a dependency of the wheel, or unknown
        how = "is not installed beside this copy" if facts.has_ray is False else \
            f"is not a dependency of the vLLM {facts.version} wheel"
        yield self.diagnostic(cfg, found, f"the ray executor needs Ray: vLLM {facts.version} refuses to start",
                              explanation=f"Ray {how}", fields=("distributed_executor_backend",),
                              fix="pip install ray, or use the mp executor")
