"""PO623 swap-space-exceeds-host-memory."""

from __future__ import annotations

from typing import Iterator, Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule, with_vllm_message
from patchops.lint.vllm import inputs, memory, messages


class SwapSpaceExceedsHostMemory(Rule):
    """
    ## What it does
    Weighs the CPU swap space vLLM reserves on the node, `swap_space` (GiB per GPU, default
    4) x `tensor_parallel_size`, against the node's RAM, `hardware.host_memory_gib` (the
    serve spec, `--hardware '{host_memory_gib: 512}'`, or `/proc/meminfo` of the box whose
    GPUs lint detects). The fractions are read from the copy's guard (0.7 refuses, 0.4
    warns in every release that has `--swap-space`). Without the host's RAM the check does
    not run, and lint says so.

    ## Why is this bad?
    `CacheConfig.verify_with_parallel_config` refuses to start: "Too large swap space. 512.00
    GiB out of the 512.00 GiB total CPU memory is allocated for the swap space." Above 40%
    vLLM only warns ("Possibly too large swap space. ..."), but that memory is pinned for
    preempted sequences and the host may start swapping or kill the server.

    ## Fix
    Lower `swap-space` (it is per GPU: TP 8 x 64 GiB is 512 GiB), or `swap-space: 0` when
    preemption by recompute is fine.
    """

    code = "PO623"
    name = "swap-space-exceeds-host-memory"
    severity = "error"
    versions = "<0.20"      # --swap-space is gone in 0.20.0 (0.15.0 the last release read with it)
    vllm_message = messages.SWAP_SPACE_TOO_LARGE
    needs = Needs(hardware=("host_memory_gib",))
    explains = (messages.SWAP_SPACE_CHECK,)
    VALID = [
        # 4 GiB x TP 8 = 32 GiB of 512: fine.
        Example("model: m\nhardware: {host_memory_gib: 512}\nargs:\n  tensor-parallel-size: 8\n"),
        # 40 GiB of 100 is not above 40%: no warning either.
        Example("model: m\nhardware: {host_memory_gib: 100}\nargs:\n  swap-space: 40\n"),
        # The host's RAM unknown: nothing to weigh against.
        Example("model: m\nargs:\n  swap-space: 512\n"),
        # 0.33.0 has no swap space (unknown-flag says so).
        Example("model: m\nhardware: {host_memory_gib: 64}\nargs:\n  swap-space: 4\n", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nhardware: {host_memory_gib: 512}\nargs:\n  swap-space: 512\n", at=(4, 3)),
        # Per GPU: 200 GiB x TP 2 = 400 GiB > 70% of 512 GiB (358.4).
        Example("model: m\nhardware: {host_memory_gib: 512}\nargs:\n  swap-space: 200\n"
                "  tensor-parallel-size: 2\n", vllm="0.10.1.1", at=(4, 3)),
        # The default 4 GiB x TP 8 = 32 GiB on a 32 GiB host.
        Example("model: m\nhardware: {host_memory_gib: 32}\nargs:\n  tensor-parallel-size: 8\n",
                at=(4, 3)),
        # 41 GiB of 100: vLLM warns; 70 GiB is not above 70%, so still a warning; 71 refuses.
        Example("model: m\nhardware: {host_memory_gib: 100}\nargs:\n  swap-space: 41\n", at=(4, 3),
                severity="warning"),
        Example("model: m\nhardware: {host_memory_gib: 100}\nargs:\n  swap-space: 70\n", at=(4, 3),
                severity="warning"),
        Example("model: m\nhardware: {host_memory_gib: 100}\nargs:\n  swap-space: 71\n", at=(4, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        limits = facts.swap_space
        host = _number(inputs.ctx_value(cfg, "hardware.host_memory_gib"))
        if not limits or not host or facts.flag("swap_space") is None:
            return
        at = inputs.setting(cfg, "swap_space")
        swap = _number(at.value) if at is not None else _number(facts.flags["swap_space"].default)
        tp = inputs.int_value(cfg, limits.per_node or "tensor_parallel_size") or 1
        if swap is None or tp < 1:
            return
        usage = int(swap * memory.GIB) * tp
        total = int(host * memory.GIB)
        refuse, warn = limits.refuse_above, limits.warn_above
        if usage > refuse * total:
            severity, text, outcome = None, messages.SWAP_SPACE_TOO_LARGE, "vLLM {ver} will refuse to start"
            share = refuse
        elif warn is not None and usage > warn * total:
            severity, text = "warning", messages.SWAP_SPACE_POSSIBLY_TOO_LARGE
            outcome = "vLLM {ver} warns and pins that much RAM"
            share = warn
        else:
            return
        stated = "swap_space" if at is not None else "swap_space (default)"
        message = f"{stated} {swap:g} GiB x {tp} GPUs is over {share:.0%} of the host's {host:g} GiB of RAM"
        explanation = (f"{swap:g} GiB x tensor_parallel_size {tp} = {usage / memory.GIB:.2f} GiB of swap; "
                       + outcome.format(ver=facts.version))
        shown = dict(usage=f"{usage / memory.GIB:.2f}", total=f"{total / memory.GIB:.2f}")
        found = self.diagnostic(
            cfg,
            at or inputs.setting(cfg, "tensor_parallel_size") or inputs.ctx_setting(cfg, "hardware.host_memory_gib"),
            message, explanation=explanation, severity=severity,
            fields=("swap_space", "tensor_parallel_size", "hardware.host_memory_gib"),
            fix=f"lower swap-space to {int(warn * host / tp) if warn else 0} GiB or less per GPU")
        yield with_vllm_message(found, text.format(**shown))


def _number(raw) -> Optional[float]:
    if raw is None or isinstance(raw, bool):
        return None
    try:
        return float(str(raw).strip())
    except ValueError:
        return None
