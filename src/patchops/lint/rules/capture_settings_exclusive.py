"""PO404 capture-settings-exclusive."""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, scheduler


class CaptureSettingsExclusive(Rule):
    """
    ## What it does
    Checks the vLLM 0.12+ capture settings the way `create_engine_config` and
    `_set_cudagraph_sizes` do: `cuda_graph_sizes` / `cudagraph_capture_sizes` together with
    `compilation_config.cudagraph_capture_sizes` (a fork's non-empty default counts),
    `max_cudagraph_capture_size` in both places, a `max_cudagraph_capture_size` that is not the
    largest capture size (after sizes above max_num_batched_tokens are dropped), and an empty
    capture list.

    ## Why is this bad?
    vLLM refuses to start: "cudagraph_capture_sizes and compilation_config.
    cudagraph_capture_sizes are mutually exclusive", or "customized
    max_cudagraph_capture_size(=512) should be consistent with the max value of
    cudagraph_capture_sizes(=256)".

    ## Fix
    Give the capture list in one place only, and either leave max_cudagraph_capture_size out or
    make it the largest size in the list.
    """

    code = "PO404"
    name = "capture-settings-exclusive"
    severity = "error"
    versions = ">=0.12"
    needs = Needs(optional=("hardware.compute_capability", "hardware.memory_gib", "hardware.name",
                            "hardware.platform", "model"))
    vllm_message = messages.CAPTURE_SIZES_EXCLUSIVE.replace("{flag}", "cudagraph_capture_sizes")
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.12.0}\n"
                "args:\n"
                "  cudagraph-capture-sizes: [1, 2, 4, 8, 16]\n"
                "  max-cudagraph-capture-size: 16\n", vllm="0.12.0"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'\n", vllm="0.12.0",
                kind="config"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.12.0}\n"
                "args:\n"
                "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'\n"
                "  cudagraph-capture-sizes: [1, 2, 4, 8, 16]\n", vllm="0.12.0", at=(5, 3)),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --cudagraph-capture-sizes 1 2 4 8 "
                "--max-cudagraph-capture-size 16\n", vllm="0.12.0", kind="command", at=(1, 74)),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --cuda-graph-sizes 512 "
                "--cudagraph-capture-sizes 1 2 4\n", vllm="0.12.0", kind="command", at=(1, 63)),
        # A fork whose CompilationConfig defaults the list counts as "set".
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "cudagraph-capture-sizes: [1, 2, 4, 8]\n", vllm="0.12.0", kind="config", at=(2, 1),
                facts={"capture_sizes_default": [1, 2]}),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        ver = facts.version
        comp_sizes, comp_at = inputs.compilation_value(cfg, "cudagraph_capture_sizes")
        from_fork = False
        if comp_at is None and facts.capture_sizes_default is not None:
            comp_sizes, from_fork = list(facts.capture_sizes_default), True
        present = comp_at is not None or from_fork
        origin = ("this vLLM build's default compilation_config.cudagraph_capture_sizes "
                  f"({list(comp_sizes) if from_fork else ''})" if from_fork
                  else "compilation_config.cudagraph_capture_sizes")
        sizes: Optional[List[int]] = inputs.to_int_list(comp_sizes) if present else None
        sizes_at: Optional[Setting] = comp_at
        sizes_name = "compilation_config.cudagraph_capture_sizes"
        for flag in ("cuda_graph_sizes", "cudagraph_capture_sizes"):
            found = inputs.setting(cfg, flag)
            if found is None:
                continue
            if present:
                yield self._exclusive(cfg, found, flag, origin, sizes_name if not from_fork else None, ver)
                return
            # 0.12 copies cuda_graph_sizes into compilation_config first, so a later
            # cudagraph_capture_sizes collides with it.
            present = True
            origin = "cuda_graph_sizes (copied into compilation_config.cudagraph_capture_sizes)"
            sizes, sizes_at, sizes_name = inputs.to_int_list(found.value), found, flag
        top_flag = inputs.setting(cfg, "max_cudagraph_capture_size")
        top_comp, top_comp_at = inputs.compilation_value(cfg, "max_cudagraph_capture_size")
        if top_flag is not None and top_comp_at is not None:
            yield self.diagnostic(
                cfg, top_flag,
                f"max_cudagraph_capture_size is set both as a flag and in compilation_config; vLLM "
                f"{ver} will refuse to start",
                fields=("max_cudagraph_capture_size", "compilation_config.max_cudagraph_capture_size"),
                fix="keep one of the two", vllm_message=messages.CAPTURE_MAX_EXCLUSIVE)
            return
        top_at = top_flag or top_comp_at
        top = inputs.to_int(top_flag.value) if top_flag is not None else inputs.to_int(top_comp)
        if inputs.enforce_eager(cfg, facts).value or sizes is None:
            return
        mode, mode_at = inputs.compilation_value(cfg, "cudagraph_mode")
        if mode_at is not None and str(mode).upper() in ("NONE", "0"):
            return
        if not sizes:
            yield self.diagnostic(
                cfg, sizes_at, f"{sizes_name} is empty; vLLM {ver} asserts a non-empty capture list "
                "when CUDA graphs are on and will refuse to start",
                fields=(sizes_name,), fix="list at least one size, or set enforce-eager to run without "
                "CUDA graphs", vllm_message=messages.CAPTURE_SIZES_EMPTY)
            return
        if top is None or top_at is None:
            return
        budget = scheduler.max_num_batched_tokens(cfg, facts)
        outcomes: List[Tuple[Any, int]] = []
        for tokens in budget.candidates:
            kept = [s for s in set(sizes) if not isinstance(tokens, int) or s <= tokens]
            outcomes.append((tokens, max(kept) if kept else 0))
        failing = [(t, m) for t, m in outcomes if m != top]
        if not failing:
            return
        tokens, largest = failing[0]
        certain = len(failing) == len(outcomes)
        dropped = (f" after sizes above max_num_batched_tokens ({tokens}) are dropped"
                   if largest != max(sizes) else "")
        what = "will refuse to start" if certain else f"possibly refuses to start ({budget.reason})"
        yield self.diagnostic(
            cfg, top_at,
            f"max_cudagraph_capture_size {top} != largest capture size {largest}: vLLM {ver} "
            f"{'refuses' if certain else 'possibly refuses'} to start",
            explanation=f"the largest capture size of {sizes_name} is {largest}{dropped}; vLLM {what}",
            severity=None if certain else "warning",
            fields=("max_cudagraph_capture_size", sizes_name) + (budget.fields if dropped else ()),
            fix=f"remove max-cudagraph-capture-size (it follows the list), or set it to {largest}",
            vllm_message=messages.CAPTURE_MAX_INCONSISTENT.replace("{max_cudagraph_capture_size}", str(top))
                                     .replace("{max_size}", str(largest)))

    def _exclusive(self, cfg: ReadConfig, found: Setting, flag: str, origin: str,
                   other: Optional[str], ver: str) -> Diagnostic:
        fields = (flag,) + ((other,) if other else ())
        fix = (f"give the capture list once: keep {flag.replace('_', '-')} and drop the other, or "
               "the reverse")
        if other is None:
            fix = (f"set compilation-config cudagraph_capture_sizes instead of {flag.replace('_', '-')} "
                   "(it replaces the build's default)")
        return self.diagnostic(
            cfg, found,
            f"{flag} collides with another capture list: vLLM {ver} refuses to start",
            explanation=f"it collides with {origin}",
            fields=fields, fix=fix,
            vllm_message=messages.CAPTURE_SIZES_EXCLUSIVE.replace("{flag}", flag))
