"""PO703 world-size-exceeds-gpus."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages


def ray_available(facts: Facts) -> bool:
    """Ray beside the copy when known, else whether the release's wheel depends on it."""
    if facts.has_ray is not None:
        return facts.has_ray
    return bool(facts.parallel.ray_required)


class WorldSizeExceedsGpus(Rule):
    """
    ## What it does
    Flags a world size (`tensor_parallel_size` x `pipeline_parallel_size`) above the GPUs of
    the node (`hardware.gpus` in the serve spec) when no executor is chosen. What vLLM does
    then is read from the copy's `ParallelConfig.__post_init__`: up to 0.11 it switches to the
    Ray executor (and fails at once without Ray, or later without a Ray cluster holding the
    GPUs); from 0.12 it refuses unless `--nnodes` says the job spans nodes.

    ## Why is this bad?
    0.15+: "World size (8) is larger than the number of available GPUs (4) in this node."
    0.8.5 without Ray: "Unable to load Ray which is required for multi-node inference". With
    Ray installed, 0.8.5 starts a Ray executor that waits for GPUs that never come.

    ## Fix
    Lower tensor/pipeline parallelism to fit the node's GPUs, or run a Ray cluster and set
    `--distributed-executor-backend ray` (0.12+: `--nnodes` for multi-node multiprocessing).
    """

    code = "PO703"
    name = "world-size-exceeds-gpus"
    severity = "error"
    versions = ">=0"
    needs = Needs(hardware=("gpus",))
    VALID = [
        Example("model: m\nargs:\n  tensor-parallel-size: 4\nhardware: {gpus: 4}\n", vllm="0.33.0"),
        Example("model: m\nargs:\n  tensor-parallel-size: 8\n"),   # GPUs unknown: nothing to compare
        Example("model: m\nargs:\n  tensor-parallel-size: 8\n  nnodes: 2\nhardware: {gpus: 4}\n", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  tensor-parallel-size: 4\n  pipeline-parallel-size: 2\n"
                "hardware: {gpus: 4}\n", vllm="0.33.0", at=(3, 3)),
        # 0.20 no longer depends on Ray, and its branch refuses anyway.
        Example("model: m\nargs:\n  tensor-parallel-size: 8\nhardware: {gpus: 4}\n", vllm="0.20.0", at=(3, 3)),
        # 0.8.5 with Ray (a dependency of the wheel): a warning, the failure comes later.
        Example("model: m\nargs:\n  tensor-parallel-size: 8\nhardware: {gpus: 4}\n", vllm="0.8.5", at=(3, 3),
                severity="warning"),
        Example("model: m\nargs:\n  tensor-parallel-size: 8\nhardware: {gpus: 4}\n", vllm="0.8.5",
                facts={"has_ray": False}, at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        gpus = inputs.ctx_value(cfg, "hardware.gpus")
        tp_at, pp_at = inputs.setting(cfg, "tensor_parallel_size"), inputs.setting(cfg, "pipeline_parallel_size")
        tp = (inputs.to_int(tp_at.value) if tp_at else None) or 1
        pp = (inputs.to_int(pp_at.value) if pp_at else None) or 1
        world = tp * pp
        if not isinstance(gpus, int) or world <= gpus or inputs.value(cfg, "distributed_executor_backend"):
            return
        at = tp_at if tp > 1 or pp_at is None else pp_at
        fields = ("tensor_parallel_size", "pipeline_parallel_size", "hardware.gpus")
        ver = facts.version
        action = facts.parallel.over_gpus
        fix = f"lower tensor/pipeline parallelism to fit {gpus} GPUs, or run a Ray cluster"
        if action == "refuse":
            if (inputs.to_int(inputs.value(cfg, "nnodes")) or 1) > 1:
                return
            template = facts.parallel.over_gpus_message or "World size ({}) is larger than ({})"
            yield self.diagnostic(
                cfg, at, f"world size {world} (tp {tp} x pp {pp}) is above the node's {gpus} GPUs; "
                f"vLLM {ver} refuses to start", fields=fields, fix=fix,
                vllm_message=template.format(world, gpus).split("\n")[0])
        elif action == "ray":
            if not ray_available(facts):
                yield self.diagnostic(
                    cfg, at, f"world size {world} (tp {tp} x pp {pp}) is above the node's {gpus} GPUs",
                    explanation=f"vLLM {ver} wants the Ray executor, and Ray is not installed; it refuses to start",
                    fields=fields, fix=fix, vllm_message=messages.RAY_NEEDED_FOR_MULTI_NODE)
            else:
                yield self.diagnostic(
                    cfg, at, f"world size {world} (tp {tp} x pp {pp}) is above the node's {gpus} GPUs",
                    explanation=f"vLLM {ver} switches to the Ray executor, which waits for a Ray cluster "
                    f"with {world} GPUs and fails when the workers start", severity="warning",
                    fields=fields, fix=fix)
