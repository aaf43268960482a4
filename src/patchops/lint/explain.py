"""What vLLM will really run a config with: each effective engine setting and where it came from.

The rules already predict these values to find problems; `patchops explain` shows them, so a
user sees a dropped `false`, an engine that forces chunked prefill on, or a fork's hardcoded
`enforce_eager` before a launch rather than in a benchmark. Rows are keyed by vLLM's own field
names so they can be compared with what real vLLM resolves (tests/conformance).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from patchops.lint.input.serve_config import ServeConfig, Setting
from patchops.lint.facts.model import Facts
from patchops.lint.input.model_source import ModelSource
from patchops.lint.reading import read_as_vllm
from patchops.lint.reading.read_config import Outcome, ReadConfig
from patchops.lint.vllm import architectures, attention, cuda_graphs, inputs, model_len, routing, scheduler
from patchops.lint.vllm.prediction import Prediction
from patchops.lint.vllm.releases import PREFIX_CACHING_BY_ATTN_TYPE, release

# Where a value comes from, in the words the table prints (a default reads "vLLM 0.8.5 default",
# a patchset's "applied by patchset NAME").
SET, DROPPED, FORCED, HARDCODED = "set by you", "your value dropped", "forced by vLLM", "hardcoded by the fork"
APPLIED = "applied by patchset"
MODEL_CONFIG = "derived from the model's config.json"

HARDWARE_SOURCE = "hardware"
# Rows where the GPU does not pick a default but makes vLLM override the usual choice.
HARDWARE_DECIDES = (None, "attention_backend")


@dataclass(frozen=True)
class Row:
    """One effective setting: vLLM's field name, its value, and where that value came from."""

    field: str
    value: Any
    origin: str                 # SET, DROPPED, FORCED, HARDCODED, "APPLIED NAME" or "vLLM X default"
    reason: str                 # why, in a sentence
    where: str = ""             # file:line:col of the user's setting (or the copy) behind it
    certain: bool = True
    alternatives: Tuple[Any, ...] = ()

    def to_dict(self) -> dict:
        return {"value": self.value, "origin": self.origin, "where": self.where or None,
                "reason": self.reason, "certain": self.certain,
                "alternatives": list(self.alternatives)}


def explain(cfg: ServeConfig, facts: Facts, applied: Optional[Dict[str, Tuple[str, str]]] = None,
            model: Optional[ModelSource] = None) -> List[Row]:
    """Return the effective settings of `cfg` under `facts`, in the table's order.

    `applied` maps a field a patchset decides in the copy (the keyword it set) to (patchset
    name, file:line in the copy); a value left to that field's default names the patchset.
    `model` is the model config chosen for it (model_source.choose), None for none.
    """
    seen = read_as_vllm(cfg, facts)
    if model is not None:
        seen = seen.with_model(model)
    eng = routing.engine(seen, facts)
    rows = [_row(seen, facts, "engine", eng, user_field=None)]
    for name, predict in _PREDICTORS:
        row = _row(seen, facts, name, predict(seen, facts, eng), user_field=name)
        rows.append(_from_model(_patched(row, facts, applied or {}), seen, facts))
    return rows + _fork_rows(seen, facts, applied or {}, {row.field for row in rows})


def _fork_rows(cfg: ReadConfig, facts: Facts, applied: Dict[str, Tuple[str, str]], shown) -> List[Row]:
    """Return a row for each other setting the fork hardcodes or a patchset makes count again
    (`disable_custom_all_reduce` on CoreX), so none is left out of the table."""
    import ast

    rows = []
    for name, source in sorted(facts.hardcoded.items()):
        if name in shown or source is None:
            continue
        try:
            value = ast.literal_eval(source)
        except (ValueError, SyntaxError):
            value = source          # an expression the fork computes: shown as written
        rows.append(Row(field=name, value=value, origin=HARDCODED, where=f"vllm/engine/arg_utils.py of {facts.origin}",
                        reason=f"this copy passes {name}={source} to vLLM, whatever the flag says"))
    for name, (patchset, where) in sorted(applied.items()):
        if name in shown or name in facts.hardcoded:
            continue
        stated = inputs.setting(cfg, name)
        value = stated.value if stated is not None else inputs.literal_default(facts, name)
        rows.append(Row(field=name, value=value, origin=f"{APPLIED} {patchset}", where=where,
                        reason=f"patchset {patchset} makes vLLM read {name} again"))
    return rows


def _from_model(row: Row, cfg: ReadConfig, facts: Facts) -> Row:
    """Name the model's config.json behind a max_model_len left to vLLM, which derives it there."""
    if row.field != "max_model_len" or cfg.model_facts is None or row.value is None \
            or row.origin != f"vLLM {facts.version} default":
        return row
    return dataclasses.replace(row, origin=MODEL_CONFIG, where=str(cfg.model_facts.path))


def _patched(row: Row, facts: Facts, applied: Dict[str, Tuple[str, str]]) -> Row:
    """Name the patchset behind a default that a patchset made count (the fork had hardcoded it)."""
    if row.field not in applied or not row.origin.startswith(f"vLLM {facts.version} default"):
        return row
    name, where = applied[row.field]
    return dataclasses.replace(row, origin=f"{APPLIED} {name}", where=where,
                               reason=f"patchset {name} makes vLLM read {row.field} again; {row.reason}")


def _chunked(cfg, facts, eng):
    return scheduler.chunked_prefill(cfg, facts, eng)


def _batched(cfg, facts, eng):
    return scheduler.max_num_batched_tokens(cfg, facts, eng)


def _seqs(cfg, facts, eng):
    return scheduler.max_num_seqs(cfg, facts, eng)


def _model_len(cfg, facts, eng):
    return model_len.max_model_len(cfg, facts)


def _capture(cfg, facts, eng):
    found = cuda_graphs.capture_sizes(cfg, facts)
    return Prediction(list(found.value) if found.value is not None else None, found.reason,
                      found.certain, tuple(found.alternatives), found.fields)


def _eager(cfg, facts, eng):
    return cuda_graphs.effective_eager(cfg, facts)


def _prefix_caching(cfg, facts, eng):
    stated = inputs.bool_value(cfg, "enable_prefix_caching")
    model = cfg.model_facts
    if stated and eng.value == routing.V0 and model is not None and model.multimodal:
        # _set_default_args_v0 (0.8.5-0.10): "--enable-prefix-caching is not supported for
        # multimodal models in V0 and has been disabled."
        return Prediction(False, "the V0 engine turns prefix caching off for multimodal models",
                          certain=eng.certain, fields=("enable_prefix_caching",))
    if stated is None and eng.value == routing.V1 and model is not None \
            and release(facts) >= PREFIX_CACHING_BY_ATTN_TYPE:
        # ModelConfig.is_prefix_caching_supported, by attn_type (hybrid is checked first)
        if model.is_encoder_decoder:
            return Prediction(False, "encoder-decoder models do not support prefix caching", fields=("model",))
        if architectures.has(cfg, facts, "attention_free") and not architectures.has(cfg, facts, "hybrid"):
            return Prediction(False, "attention-free models (Mamba) do not support prefix caching yet",
                              fields=("model",))
    if stated is not None:
        return Prediction(stated, f"enable_prefix_caching {str(stated).lower()} is set",
                          fields=("enable_prefix_caching",))
    if eng.value == routing.V1 and inputs.is_pooling(cfg):
        # _set_default_args_v1 (0.10.1.1) / is_prefix_caching_supported (0.33.0): on for
        # causal models with last-token pooling, which config.json alone does not tell.
        return Prediction(False, "pooling models choose prefix caching by their pooling type",
                          certain=False, alternatives=(True,))
    if eng.value == routing.V1:
        return Prediction(True, "the V1 engine turns prefix caching on for generative models",
                          certain=eng.certain)
    return Prediction(False, "the V0 engine leaves prefix caching off", certain=eng.certain)


def _block_size(cfg, facts, eng):
    stated = inputs.int_value(cfg, "block_size")
    if stated is not None:
        return Prediction(stated, f"block_size {stated} is set", fields=("block_size",))
    literal = inputs.to_int(inputs.literal_default(facts, "block_size"))
    if literal is not None:
        return Prediction(literal, f"EngineArgs of vLLM {facts.version} defaults block_size to {literal}")
    return Prediction(16, "the CUDA platform picks block size 16 when none is set",
                      certain=inputs.is_cuda_like(cfg) is not False)


def _attention(cfg, facts, eng):
    if eng.value == routing.V0:
        return attention.v0_attention_backend(cfg, facts)
    env = inputs.attention_backend_env(cfg)
    if env:
        return Prediction(env, f"VLLM_ATTENTION_BACKEND={env} is set", fields=("VLLM_ATTENTION_BACKEND",))
    return Prediction(None, "the V1 engine picks the backend at start-up from the GPU and model",
                      certain=False)


def _field(name: str, fallback: Any) -> Callable[[ReadConfig, Facts, Prediction], Prediction]:
    """A setting vLLM takes as given: the user's value, else EngineArgs' default."""

    def predict(cfg, facts, eng):
        found = inputs.setting(cfg, name)
        if found is not None:
            return Prediction(found.value, f"{name} {found.value} is set", fields=(name,))
        default = facts.field_defaults.get(name, fallback) if facts.field_defaults else fallback
        return Prediction(default, f"EngineArgs of vLLM {facts.version} defaults {name} to {default}")

    return predict


_PREDICTORS: Tuple[Tuple[str, Callable], ...] = (
    ("enable_chunked_prefill", _chunked),
    ("max_num_batched_tokens", _batched),
    ("max_num_seqs", _seqs),
    ("max_model_len", _model_len),
    ("cudagraph_capture_sizes", _capture),
    ("enforce_eager", _eager),
    ("enable_prefix_caching", _prefix_caching),
    ("block_size", _block_size),
    ("attention_backend", _attention),
    ("tensor_parallel_size", _field("tensor_parallel_size", 1)),
    ("pipeline_parallel_size", _field("pipeline_parallel_size", 1)),
    ("gpu_memory_utilization", _field("gpu_memory_utilization", 0.9)),
)


def _row(cfg: ReadConfig, facts: Facts, name: str, found: Prediction,
         user_field: Optional[str]) -> Row:
    """Classify where `found` came from: the user's setting, a drop, the engine, the fork, a default."""
    common = dict(field=name, value=found.value, certain=found.certain,
                  alternatives=tuple(a for a in found.alternatives if a != found.value))
    hardcoded = [f for f in (name, *found.fields) if facts.hardcoded and facts.hardcoded.get(f) is not None]
    if hardcoded:
        return Row(origin=HARDCODED, reason=found.reason, where=f"vllm/engine/arg_utils.py of {facts.origin}",
                   **common)
    dropped = _dropped(cfg, user_field) if user_field else None
    if dropped is not None:
        return Row(origin=DROPPED, reason=f"{dropped.detail}; {found.reason}", where=_at(cfg, dropped.setting),
                   **common)
    stated = inputs.setting(cfg, user_field) if user_field else None
    if stated is not None:
        if _same(stated.value, found.value):
            return Row(origin=SET, reason=found.reason, where=_at(cfg, stated), **common)
        return Row(origin=FORCED, reason=f"you asked for {stated.value!r}; {found.reason}",
                   where=_at(cfg, stated), **common)
    decided_by = [s for s in map(lambda f: _stated(cfg, f), found.fields) if s is not None]
    where = ", ".join(_at(cfg, s) for s in decided_by)
    if decided_by and (any(s.source != HARDWARE_SOURCE for s in decided_by) or user_field in HARDWARE_DECIDES):
        kind = SET if user_field and any(f.endswith(user_field) for f in found.fields) else FORCED
        return Row(origin=kind, reason=found.reason, where=where, **common)
    if decided_by:   # a default of the hardware tier the config states
        return Row(origin=f"vLLM {facts.version} default for this hardware", reason=found.reason,
                   where=where, **common)
    if name == "cudagraph_capture_sizes" and facts.capture_sizes_default is not None \
            and found.value == list(facts.capture_sizes_default):
        return Row(origin=HARDCODED, reason=found.reason, where=f"CompilationConfig of {facts.origin}",
                   **common)
    return Row(origin=f"vLLM {facts.version} default", reason=found.reason, **common)


def _stated(cfg: ReadConfig, field_path: str) -> Optional[Setting]:
    """Return the user's setting behind a prediction field (`compilation_config.x`, an env var)."""
    head = field_path.split(".")[0]
    found = inputs.setting(cfg, head) or inputs.env_setting(cfg, head)
    if found is not None:
        return found
    stated = inputs.ctx_setting(cfg, field_path)
    return None if stated is None else dataclasses.replace(stated, source=HARDWARE_SOURCE)


def _dropped(cfg: ReadConfig, name: str) -> Optional[Outcome]:
    for key in (name, name.replace("_", "-")):
        found = cfg.dropped(key)
        if found is not None:
            return found
    return None


def _same(written: Any, effective: Any) -> bool:
    """Compare what the user wrote (YAML typed or a CLI string) with the effective value."""
    if isinstance(effective, bool):
        return inputs.to_bool(written) is effective
    if isinstance(effective, int):
        return inputs.to_int(written) == effective
    if isinstance(effective, float):
        try:
            return float(written) == effective
        except (TypeError, ValueError):
            return False
    return written == effective


def _at(cfg: ReadConfig, setting: Setting) -> str:
    """Return where `setting` was written, or `from --hardware` (the detector, the settings file)
    for a hardware field the input leaves unstated, which has no line of its own."""
    if setting.line == 0:
        assumed = cfg.context.get(setting.key)
        return f"from {assumed.source if assumed is not None else 'the assumed hardware'}"
    return f"{cfg.source_of(setting).path}:{setting.line}:{setting.column}"


def engine_label(facts: Facts) -> str:
    """Return `vLLM 0.8.5 (origin)` for the table's heading."""
    return f"vLLM {release(facts.version)} ({facts.origin})"
