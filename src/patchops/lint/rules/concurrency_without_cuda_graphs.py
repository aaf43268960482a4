"""PO401 concurrency-without-cuda-graphs."""

from __future__ import annotations

import json
from typing import Iterator, List, Optional, Sequence

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting, parse_literal
from patchops.lint.edits import add_line_after, insert_after, replace_value, shell_quoted, yaml_quoted
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Edit, Example, Needs, Rule
from patchops.lint.vllm import cuda_graphs, inputs, routing, scheduler, wording


class ConcurrencyWithoutCudaGraphs(Rule):
    """
    ## What it does
    Works out the CUDA graph capture list this vLLM version will use (its default derivation,
    a fork's default `cudagraph_capture_sizes`, `compilation_config.cudagraph_capture_sizes`,
    `cuda_graph_sizes`, `cudagraph_capture_sizes` / `max_cudagraph_capture_size` on 0.12+)
    and flags the `workload.concurrency` levels, and an explicit `max_num_seqs`, whose decode
    batches are larger than the largest captured size.

    ## Why is this bad?
    A decode batch up to the largest captured size is padded to the next captured size and
    replayed as a CUDA graph; a larger batch runs without graphs (eagerly on V0, the compiled
    model without graph replay on V1). Nothing is logged. On a benchmark whose fork defaulted
    the capture list to [1, 2], concurrency 4 and 8 ran eagerly and throughput fell from 40.9
    to 5.2 tok/s.

    ## Fix
    Capture sizes up to the largest concurrency you serve: `compilation_config:
    '{"cudagraph_capture_sizes": [1, 2, 4, 8]}'` (0.7.3-0.11), `cudagraph_capture_sizes` or
    `max_cudagraph_capture_size` (0.12+). `lint --fix --unsafe-fixes` writes that list (powers
    of two up to the largest batch) into the setting that decided it, or adds the setting;
    unsafe because more graphs take more GPU memory and start-up time.
    """

    code = "PO401"
    name = "concurrency-without-cuda-graphs"
    severity = "warning"
    versions = ">=0.6.3"
    needs = Needs(optional=("hardware.compute_capability", "hardware.memory_gib", "hardware.name",
                            "hardware.platform", "model", "workload.concurrency"))
    fixable = "unsafe"
    vllm_message = None
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "hardware: {platform: cuda, gpus: 1, memory_gib: 80, compute_capability: 8.0}\n"
                "args:\n"
                "  max-model-len: 8192\n"
                "workload:\n"
                "  concurrency: [1, 2, 4, 8]\n", vllm="0.8.5"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "args:\n"
                "  max-model-len: 8192\n"
                "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'\n"
                "workload:\n"
                "  concurrency: [1, 2, 4, 8]\n", vllm="0.8.5",
                facts={"capture_sizes_default": [1, 2]}),
        # Eager on purpose: PO402's business, not this rule's.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.11.0}\n"
                "args:\n"
                "  enforce-eager: true\n"
                "workload:\n"
                "  concurrency: [1, 64]\n", vllm="0.11.0"),
    ]
    INVALID = [
        # Seed incident 4: the fork's default capture list stopped at 2.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "hardware: {platform: cuda, gpus: 1, memory_gib: 80, compute_capability: 8.0}\n"
                "args:\n"
                "  max-model-len: 8192\n"
                "workload:\n"
                "  concurrency: [1, 2, 4, 8]\n"
                "  max_tokens: 512\n", vllm="0.8.5", at=(7, 3),
                facts={"capture_sizes_default": [1, 2]},
                fixed="model: /models/Qwen2.5-7B-Instruct\n"
                      "vllm: {version: 0.8.5}\n"
                      "hardware: {platform: cuda, gpus: 1, memory_gib: 80, compute_capability: 8.0}\n"
                      "args:\n"
                      "  max-model-len: 8192\n"
                      "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'\n"
                      "workload:\n"
                      "  concurrency: [1, 2, 4, 8]\n"
                      "  max_tokens: 512\n"),
        # The same arm with the list written out.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "args:\n"
                "  max-model-len: 8192\n"
                "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2]}'\n"
                "workload:\n"
                "  concurrency: [1, 2, 4, 8]\n", vllm="0.8.5", at=(7, 3),
                fixed="model: /models/Qwen2.5-7B-Instruct\n"
                      "vllm: {version: 0.8.5}\n"
                      "args:\n"
                      "  max-model-len: 8192\n"
                      "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'\n"
                      "workload:\n"
                      "  concurrency: [1, 2, 4, 8]\n"),
        # 0.12 copies --cuda-graph-sizes verbatim: only 8 is captured, batches of 9-32 get no graphs.
        Example("vllm serve /models/Qwen2.5-7B-Instruct --cuda-graph-sizes 8 --max-num-seqs 32\n",
                vllm="0.12.0", kind="command", at=(1, 61),
                fixed="vllm serve /models/Qwen2.5-7B-Instruct --cuda-graph-sizes 1 2 4 8 16 32 "
                      "--max-num-seqs 32\n"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        eng = routing.engine(cfg, facts)
        if eng.error:
            return
        sizes = cuda_graphs.capture_sizes(cfg, facts)
        if not sizes.value:
            return  # no graphs at all: enforce_eager and friends, reported elsewhere
        largest = max(sizes.value)
        seqs = scheduler.max_num_seqs(cfg, facts, eng)
        cap = seqs.value if isinstance(seqs.value, int) else None
        levels = inputs.concurrency_levels(cfg)
        over = [n for n in levels if (min(n, cap) if cap else n) > largest]
        seqs_at = inputs.setting(cfg, "max_num_seqs")
        seqs_over = seqs_at is not None and cap is not None and cap > largest
        if not over and not seqs_over:
            return
        ver = facts.version
        v1 = eng.value == routing.V1
        mode = "without CUDA graph replay" if v1 else "eagerly"
        shown = wording.sizes_text(sizes.value)
        where: List[str] = []
        if over:
            where.append(f"workload concurrency {wording.and_list(over)}")
        if seqs_over:
            where.append(f"batches up to max_num_seqs ({cap})")
        subject = " and ".join(where)
        source = sizes.reason
        if facts.capture_sizes_default is not None and not sizes.fields:
            source = (f"this vLLM build defaults compilation_config.cudagraph_capture_sizes to "
                      f"{list(facts.capture_sizes_default)}")
        verb = "runs" if len(over) == 1 and not seqs_over else "run"
        message = f"{subject} {verb} without CUDA graphs: the capture sizes stop at {largest}"
        possibly = "" if sizes.certain else "possibly "
        explanation = (f"vLLM {ver} ({eng.value}) {possibly}captures graphs only for batch sizes {shown} "
                       f"({source}), and decode batches above {largest} run {mode}")
        top = max([min(n, cap) if cap else n for n in over] + ([cap] if seqs_over else []))
        at = inputs.ctx_setting(cfg, "workload.concurrency") if over else seqs_at
        fields = (("workload.concurrency",) if over else ()) + (("max_num_seqs",) if seqs_over else ()) \
            + sizes.fields
        wanted = cuda_graphs.suggested_sizes(top)
        yield self.diagnostic(cfg, at, message, explanation=explanation, fields=tuple(dict.fromkeys(fields)),
                              fix=cuda_graphs.capture_fix(facts, top, command=cfg.kind == "command"),
                              edits=capture_list_edits(cfg, facts, sizes.fields, wanted),
                              edit_title=f"capture batch sizes {wanted}")


def capture_list_edits(cfg: ReadConfig, facts: Facts, decided_by: Sequence[str],
                       wanted: List[int]) -> List[Optional[Edit]]:
    """Return the edits that make the capture list `wanted`, in the setting that decided it.

    A list of its own (`cudagraph_capture_sizes`, `cuda_graph_sizes`) is rewritten, a
    `compilation_config` string gets the key, and with neither (a default, a fork's default)
    the version's setting is added after the last flag. A YAML mapping is left alone.
    """
    flag = cuda_graphs.capture_list_setting(facts)
    if flag is None:
        return [None]
    listed = [name for name in decided_by if name in ("cudagraph_capture_sizes", "cuda_graph_sizes")]
    if listed:
        found = inputs.setting(cfg, listed[0])
        if found is None:
            return [None]
        text = " ".join(map(str, wanted)) if found.source == "cli" else json.dumps(wanted)
        return [replace_value(cfg, found, text)]
    whole = inputs.setting(cfg, "compilation_config")
    if whole is not None:
        return [_into_compilation_config(cfg, whole, wanted)]
    if any(name.startswith("compilation_config.") for name in cfg.args):
        return [None]                       # dotted keys: the user's own layout
    if flag == "compilation_config":
        value = json.dumps({"cudagraph_capture_sizes": wanted})
        return [_add_setting(cfg, "compilation-config", yaml_quoted(value), shell_quoted(value))]
    return [_add_setting(cfg, "cudagraph-capture-sizes", json.dumps(wanted), " ".join(map(str, wanted)))]


def _into_compilation_config(cfg: ReadConfig, whole: Setting, wanted: List[int]) -> Optional[Edit]:
    """Set `cudagraph_capture_sizes` in a compilation_config written as a JSON/literal string."""
    if whole.source != "cli" and whole.raw is None:
        return None                         # a YAML mapping: the user's own layout
    parsed = parse_literal(whole.value) if isinstance(whole.value, str) else whole.value
    if not isinstance(parsed, dict):
        return None                         # `-O 3`: a level, not a mapping
    parsed = {**parsed, "cudagraph_capture_sizes": wanted}
    text = json.dumps(parsed)
    return replace_value(cfg, whole, shell_quoted(text) if whole.source == "cli" else yaml_quoted(text))


def _add_setting(cfg: ReadConfig, key: str, yaml_value: str, cli_value: str) -> Optional[Edit]:
    """Add a flag: a line after the file's last flag, or after the command's last argument."""
    if cfg.kind == "command":
        last = max((t for t in cfg.argv if t.key_span is not None), key=lambda t: t.key_span[1],
                   default=None)
        return None if last is None else insert_after(cfg, last, f" --{key} {cli_value}")
    written = [s for s in cfg.config_settings if s.key_span is not None]
    if not written:
        return None
    last = max(written, key=lambda s: s.key_span[0])  # type: ignore[index]
    spelled = key if "-" in last.key or "_" not in last.key else key.replace("-", "_")
    return add_line_after(cfg, last, f"{spelled}: {yaml_value}")
