"""Predict the CUDA graph batch sizes a version captures, and how to change them.

Sources: `worker/model_runner.py` (0.6.3 `_BATCH_SIZES_TO_CAPTURE`), `config.py` /
`config/vllm.py` (`_set_cudagraph_sizes`).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm.inputs import (compilation_value, compute_capability, enforce_eager, int_list,
                                       int_value, literal_default, num_speculative_tokens, to_bool, to_int,
                                       to_int_list, value)
from patchops.lint.vllm.prediction import Prediction
from patchops.lint.vllm.releases import (CAPTURE_BLACKWELL_1024, CAPTURE_BUDGET_APPENDED, CAPTURE_LIST_FLAG,
                                         CAPTURE_PATTERN_012, CAPTURE_SPEC_TOKENS, CAPTURE_UNIFORM_DECODE,
                                         CUDA_GRAPH_SIZES_FLAG,
                                         CUDA_GRAPH_SIZES_FROM_SEQS, DP_EAGER_ONLY_DEEPEP, DP_FORCES_EAGER,
                                         O_IS_OPT_LEVEL, V1_CAPTURE_BY_BUDGET, V1_LEVEL_HONOURED, release)
from patchops.lint.vllm.routing import V1, engine
from patchops.lint.vllm.scheduler import max_num_batched_tokens, max_num_seqs

CAPTURE_FLAGS = ("cuda_graph_sizes", "cudagraph_capture_sizes", "max_cudagraph_capture_size",
                 "max_seq_len_to_capture")
CAPTURE_COMPILATION_KEYS = ("cudagraph_capture_sizes", "max_cudagraph_capture_size")

V0_CAPTURE_CANDIDATES = tuple([1, 2, 4] + [8 * i for i in range(1, 1025)])


# No batch reaches this many sequences; capping keeps a typo like 400000000 from building a
# list of 50 million sizes.
CAPTURE_CEILING = 1 << 16


def _pattern(upto: int) -> List[int]:
    """[1, 2, 4] + range(8, upto + 1, 8): the `--cuda-graph-sizes N` pattern (0.9.2-0.11).

    1, 2 and 4 are there whatever N is (`max_num_seqs 1` gives [1, 2, 4]); the budget
    filter comes after.
    """
    upto = min(upto, CAPTURE_CEILING)
    return [1, 2, 4] + list(range(8, upto + 1, 8))


def _pattern_012(top: int) -> List[int]:
    top = min(top, CAPTURE_CEILING)
    sizes = [i for i in (1, 2, 4) if i <= top]
    if top >= 8:
        sizes += list(range(8, min(top + 1, 256), 8))
    if top >= 256:
        sizes += list(range(256, top + 1, 16))
    return sizes


def _request_counts(max_reqs: int, ceiling: int) -> List[int]:
    """The request counts whose uniform decode batches 0.30+ captures under speculative decoding.

    `request_counts` in VllmConfig._set_cudagraph_sizes (config/vllm.py, 0.30.0-0.33.0).
    """
    max_reqs = min(max_reqs, ceiling)
    counts = [n for n in (1, 2, 4) if n <= max_reqs]
    counts += list(range(8, min(max_reqs + 1, 256), 8)) + list(range(256, max_reqs + 1, 16))
    return sorted(set(counts + [max_reqs]))


def _no_graphs(reason: str, fields: Sequence[str]) -> Prediction:
    return Prediction((), reason, fields=tuple(fields))


def effective_eager(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return whether the copy runs eagerly: enforce_eager (set or hardcoded), or forced by vLLM.

    0.8.x's CUDA platform turns enforce_eager on for data parallelism on V1 (DP with CUDA
    graphs was unsupported); from 0.9 only with DeepEP high-throughput kernels (not modelled).
    """
    eager = enforce_eager(cfg, facts)
    if eager.value:
        return eager
    dp = int_value(cfg, "data_parallel_size")
    if dp is not None and dp > 1 and DP_FORCES_EAGER <= release(facts) < DP_EAGER_ONLY_DEEPEP \
            and engine(cfg, facts).value == V1:
        return Prediction(True, f"data_parallel_size {dp} makes vLLM {facts.version} force enforce_eager "
                          "(DP with CUDA graphs is unsupported)", fields=("data_parallel_size",))
    return eager


def capture_sizes(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return the CUDA graph batch sizes the version captures (ascending); () when none are.

    Precedence: enforce_eager (or a fork hardcoding it) -> nothing; the user's explicit list
    (compilation_config.cudagraph_capture_sizes, and by version cudagraph_capture_sizes or
    cuda_graph_sizes); else the fork's default (facts.capture_sizes_default); else the version's
    derivation from max_num_seqs / max_num_batched_tokens (`_set_cudagraph_sizes`).
    """
    v = release(facts)
    ver = facts.version
    eager = effective_eager(cfg, facts)
    if eager.value:
        return _no_graphs(f"{eager.reason}, so vLLM captures no CUDA graphs", eager.fields)
    eng = engine(cfg, facts)
    seqs = max_num_seqs(cfg, facts, eng)
    budget = max_num_batched_tokens(cfg, facts, eng)
    v1 = eng.value == V1

    level, level_at = compilation_value(cfg, "level")
    # Until 0.10.0 V1 sets the level to PIECEWISE itself when not eager (config.py __post_init__).
    if v1 and V1_LEVEL_HONOURED <= v < CAPTURE_PATTERN_012 and level_at is not None \
            and to_int(level) not in (None, 3):
        return _no_graphs(f"compilation_config level {level} is not PIECEWISE (3), so V1 captures no "
                          "CUDA graphs", ("compilation_config.level",))
    use_graph, use_at = compilation_value(cfg, "use_cudagraph")
    if v1 and v < CAPTURE_PATTERN_012 and use_at is not None and to_bool(use_graph) is False:
        return _no_graphs("compilation_config use_cudagraph is false", ("compilation_config.use_cudagraph",))
    mode, mode_at = compilation_value(cfg, "cudagraph_mode")
    if mode_at is not None and str(mode).upper() in ("NONE", "0"):
        return _no_graphs("compilation_config cudagraph_mode is NONE", ("compilation_config.cudagraph_mode",))
    if v >= O_IS_OPT_LEVEL and mode_at is None and to_int(value(cfg, "optimization_level")) == 0:
        # OPTIMIZATION_LEVEL_00 defaults cudagraph_mode to NONE (config/vllm.py, 0.12.0-0.33.0)
        return _no_graphs("optimization level 0 defaults cudagraph_mode to NONE", ("optimization_level",))

    explicit, explicit_at = compilation_value(cfg, "cudagraph_capture_sizes")
    explicit_list = to_int_list(explicit) if explicit_at is not None else None
    fields: Tuple[str, ...] = (("compilation_config.cudagraph_capture_sizes",) if explicit_at is not None
                               else ())
    why = "compilation_config.cudagraph_capture_sizes is set"
    if explicit_list is None and v >= CAPTURE_PATTERN_012:
        for name in ("cudagraph_capture_sizes", "cuda_graph_sizes"):
            listed = int_list(cfg, name)
            if listed is not None:
                explicit_list, fields = listed, (name,)
                why = f"{name} is copied verbatim into the capture list on vLLM {ver}"
                break
    top_budget = budget.value if isinstance(budget.value, int) else None

    if v >= CAPTURE_PATTERN_012:
        if explicit_list is None and facts.capture_sizes_default is not None:
            explicit_list = list(facts.capture_sizes_default)
            why, fields = "this vLLM build sets a default capture list", ()
        if explicit_list is not None:
            def kept(tokens: Any) -> Tuple[int, ...]:
                return tuple(sorted({s for s in explicit_list if not isinstance(tokens, int) or s <= tokens}))
            first = kept(top_budget)
            alternatives = tuple(dict.fromkeys(kept(b) for b in budget.alternatives if kept(b) != first))
            dropped = (" (sizes above max_num_batched_tokens dropped)"
                       if len(first) < len(set(explicit_list)) else "")
            return Prediction(first, why + dropped, certain=not alternatives, alternatives=alternatives,
                              fields=fields)
        top_set = to_int(compilation_value(cfg, "max_cudagraph_capture_size")[0])
        if top_set is None:
            top_set = int_value(cfg, "max_cudagraph_capture_size")
        spec = (num_speculative_tokens(cfg, facts) or 0) if v >= CAPTURE_SPEC_TOKENS else 0
        default_top = 512
        cc = compute_capability(cfg)
        if v >= CAPTURE_BLACKWELL_1024 and cc is not None and cc[0] == 10:
            default_top = 1024

        def for_values(seq_count: Optional[int], tokens: Optional[int]) -> Tuple[int, ...]:
            top = top_set if top_set is not None else min((seq_count or 256) * (1 + spec) * 2, default_top)
            decode: List[int] = []
            if v >= CAPTURE_UNIFORM_DECODE and top_set is None and spec:
                decode = [n * (1 + spec) for n in _request_counts(seq_count or 256, default_top)
                          if n * (1 + spec) <= top]
            if tokens is not None:
                top = min(top, tokens)
            sizes = _pattern_012(top)
            if v >= CAPTURE_BUDGET_APPENDED and tokens is not None and tokens <= top and tokens not in sizes:
                sizes.append(tokens)
            sizes += [s for s in decode if tokens is None or s <= tokens]
            return tuple(sorted(set(sizes)))

        first = for_values(seqs.value, top_budget)
        others = tuple(dict.fromkeys(
            for_values(s, b) for s in seqs.candidates for b in budget.candidates
            if isinstance(b, int) or b is None)) if not (seqs.certain and budget.certain) else ()
        alternatives = tuple(o for o in others if o != first)
        source = (f"max_cudagraph_capture_size {top_set}" if top_set is not None
                  else f"min(2 x max_num_seqs {seqs.value}{f' x (1 + {spec} speculative tokens)' if spec else ''}, "
                       f"{default_top}, max_num_batched_tokens {top_budget})")
        return Prediction(first, f"vLLM {ver} captures sizes up to {source}", certain=not alternatives,
                          alternatives=alternatives, fields=("max_num_seqs",) if seqs.fields else ())

    if explicit_list is None and facts.capture_sizes_default is not None:
        return Prediction(tuple(sorted(set(facts.capture_sizes_default))),
                          f"this vLLM build ({ver}) sets a default capture list and the config does not "
                          "override it", fields=())
    if explicit_list is not None and v >= CAPTURE_LIST_FLAG:
        return Prediction(tuple(sorted(set(explicit_list))), why, fields=fields)

    if not v1:
        max_graph = to_int(value(cfg, "max_seq_len_to_capture"))
        note = f"; decodes longer than {max_graph} tokens run eagerly" if max_graph is not None else ""

        def v0_list(seq_count: int) -> Tuple[int, ...]:
            larger = [x for x in V0_CAPTURE_CANDIDATES if x >= seq_count]
            top = larger[0] if larger else V0_CAPTURE_CANDIDATES[-1]
            return tuple(x for x in V0_CAPTURE_CANDIDATES if x <= top)

        first = v0_list(seqs.value)
        alternatives = tuple(dict.fromkeys(v0_list(s) for s in seqs.alternatives if v0_list(s) != first))
        return Prediction(first, f"V0 captures [1, 2, 4, 8, ...] up to the first size >= max_num_seqs "
                          f"{seqs.value}{note}", certain=seqs.certain, alternatives=alternatives,
                          fields=seqs.fields)

    def filtered(sizes: List[int], tokens: Any) -> Tuple[int, ...]:
        return tuple(sorted(s for s in set(sizes) if not isinstance(tokens, int) or s <= tokens))

    if v < CUDA_GRAPH_SIZES_FLAG:
        base = [1, 2, 4] + list(range(8, 513, 8))
        first = filtered(base, top_budget) if v >= V1_CAPTURE_BY_BUDGET else tuple(base)
        alternatives = tuple(dict.fromkeys(filtered(base, b) for b in budget.alternatives
                                           if filtered(base, b) != first)) if v >= V1_CAPTURE_BY_BUDGET else ()
        return Prediction(first, f"the V1 engine of vLLM {ver} captures [1, 2, 4, 8, ..., 512]"
                          + (" up to max_num_batched_tokens" if v >= V1_CAPTURE_BY_BUDGET else ""),
                          certain=not alternatives, alternatives=alternatives)
    graph_sizes = int_list(cfg, "cuda_graph_sizes")
    if graph_sizes is None:
        graph_sizes = to_int_list(literal_default(facts, "cuda_graph_sizes"))
        if graph_sizes is None:
            graph_sizes = [512] if v < CUDA_GRAPH_SIZES_FROM_SEQS else []
        from_user = False
    else:
        from_user = True

    tp = int_value(cfg, "tensor_parallel_size") or 1
    passes, _ = compilation_value(cfg, "pass_config")
    sequence_parallel = tp > 1 and isinstance(passes, dict) and \
        to_bool(passes.get("enable_sequence_parallelism")) is True

    def v1_list(seq_count: Optional[int], tokens: Any) -> Tuple[int, ...]:
        wanted = list(graph_sizes)
        if not wanted:
            wanted = [min((seq_count if seq_count is not None else 256) * 2, 512)]
        sizes = _pattern(wanted[0]) if len(wanted) == 1 else sorted(wanted)
        if sequence_parallel:   # update_sizes_for_sequence_parallelism: multiples of tp only
            sizes = [s for s in sizes if s % tp == 0]
        return filtered(sizes, tokens)

    first = v1_list(seqs.value, top_budget)
    others = [v1_list(s, b) for s in seqs.candidates for b in budget.candidates]
    alternatives = tuple(dict.fromkeys(o for o in others if o != first))
    if from_user:
        how = (f"cuda_graph_sizes {graph_sizes} means [1, 2, 4, 8, ..., {graph_sizes[0]}]"
               if len(graph_sizes) == 1 else f"cuda_graph_sizes {graph_sizes} is used as the list")
    elif not graph_sizes:
        how = f"vLLM {ver} captures [1, 2, 4, 8, ...] up to min(2 x max_num_seqs {seqs.value}, 512)"
    else:
        how = f"vLLM {ver} captures [1, 2, 4, 8, ..., {graph_sizes[0]}]"
    return Prediction(first, how + ", filtered to max_num_batched_tokens", certain=not alternatives,
                      alternatives=alternatives, fields=("cuda_graph_sizes",) if from_user else ())


def suggested_sizes(top: int) -> List[int]:
    """Return a short capture list covering batches up to `top`: powers of two, [1, 2, 4, ..., >= top].

    Batches pad up to the next captured size, so powers of two keep the fix readable at the
    cost of some padding; a user who wants less padding can list more sizes.
    """
    sizes = [1]
    while sizes[-1] < top:
        sizes.append(sizes[-1] * 2)
    return sizes


def capture_list_setting(facts: Facts) -> Optional[str]:
    """Return the setting that takes the capture list on this version.

    "compilation_config" (its `cudagraph_capture_sizes`, 0.7-0.11), "cudagraph_capture_sizes"
    (0.12+), None on 0.6.3, which has no flag for it.
    """
    v = release(facts)
    if v < CAPTURE_LIST_FLAG:
        return None
    return "compilation_config" if v < CAPTURE_PATTERN_012 else "cudagraph_capture_sizes"


def capture_fix(facts: Facts, top: int, command: bool = False) -> str:
    """Return how to make this version capture batch sizes up to `top`, spelled as `lint --fix`
    writes it: YAML keys, or with `command` the flags of a launch command."""
    v = release(facts)
    sizes = suggested_sizes(top)
    listed = "[" + ", ".join(str(s) for s in sizes) + "]"
    if v < CAPTURE_LIST_FLAG:
        return ("vLLM 0.6.3 has no flag for the capture list (it follows max_num_seqs); restore the "
                "build's capture sizes with a patch, or upgrade")
    if v < CAPTURE_PATTERN_012:
        if command:
            return (f"pass --compilation-config '{{\"cudagraph_capture_sizes\": {listed}}}' so batches "
                    f"up to {sizes[-1]} are captured")
        return (f"set compilation-config: '{{\"cudagraph_capture_sizes\": {listed}}}' (a JSON string "
                "in YAML) so batches up to " + str(sizes[-1]) + " are captured")
    if command:
        return (f"pass --cudagraph-capture-sizes {' '.join(map(str, sizes))} (or "
                f"--max-cudagraph-capture-size {sizes[-1]})")
    return f"set cudagraph-capture-sizes: {listed} (or max-cudagraph-capture-size: {sizes[-1]})"
