"""Run the checks a copy's config classes make (facts `config_checks`) on one config.

The programs come from `lint/extract/guard_programs.py`: assignments and guards with the
conditions they run under (`lint/checks/ir.py`), each expression evaluated by
`lint/checks/interpreter.py`. Values are
three-valued: a Python value, or UNKNOWN when the config does not decide it (a value
EngineArgs rewrites, a platform query, an environment read). A guard counts only when its
condition and its test are certainly true, and only when the user stated at least one of the
settings it reads: a check that would fail on vLLM's own defaults is a misreading here, not a
refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from patchops.lint.checks import ir
from patchops.lint.checks.interpreter import UNKNOWN, Scope, key_of, render, truth_of, value
from patchops.lint.input.serve_config import ServeConfig, Setting, parse_literal
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import inputs

PLATFORMS = ("cuda", "rocm") + inputs.NON_CUDA_PLATFORMS     # those whose `is_x()` lint answers
MODEL_CLASS = "ModelConfig"     # guard_programs.MODEL_CLASS: its ["model", path] reads config.json


@dataclass(frozen=True)
class Refusal:
    """A guard that fires: the class, vLLM's message and exception, the settings it read
    (the guard's subject first)."""

    config_class: str
    message: str
    exception: str
    settings: Tuple[Setting, ...]


def refusals(cfg: ServeConfig, facts: Facts, explained: Callable[[str], bool] = lambda text: False) -> List[Refusal]:
    """Return the first guard that fires in each config class this config builds.

    `explained` says which guards to pass over, by their message's text without its values:
    those another rule words better (Rule.explains), run as if the class had no such check.
    """
    found = facts.config_checks or {}
    classes = found.get("classes") or {}
    rewritten = set(found.get("rewritten") or ())
    programs = _programs(classes)
    # The programs over the flags run first: where EngineArgs' own builds a class, the
    # keywords it passes (locals, rewritten flags) are what that class starts from.
    flags_first = sorted(classes, key=lambda name: (not (classes[name].get("built") or {}).get("flags"),
                                                    _reads_others(programs[name])))
    states: Dict[str, Optional[_State]] = {}
    host = host_answers(cfg)
    hits: Dict[str, Any] = {}
    builds: Dict[str, Dict[str, Any]] = {}
    for name in flags_first:
        spec = classes[name]
        state = states[name] = _initial_state(cfg, facts, spec, rewritten, builds.get(name))
        if state is not None:
            state.model, state.host = cfg.model_facts, host
        if state is not None and (spec.get("built") or {}).get("flags"):
            state.others = states
            hits[name] = _run(programs[name], state, explained)
            builds.update(state.builds)
    refused = any(hit is not None for hit in hits.values())
    for name in flags_first:
        state = states[name]
        if refused and name not in builds and "args" in (classes[name].get("built") or {}):
            continue        # EngineArgs refused before it built this class
        if state is not None and name not in hits:
            state.others = states
            hits[name] = _run(programs[name], state, explained)
    return [Refusal(name, *hits[name]) for name in classes if hits.get(name) is not None]


# facts' classes (by id, the dict kept so the id stays its) -> their programs as records
_PARSED: Dict[int, Tuple[dict, Dict[str, Tuple[ir.Statement, ...]]]] = {}


def _programs(classes: dict) -> Dict[str, Tuple[ir.Statement, ...]]:
    """Return each class's program as records, parsed once for the facts every lint of a release shares."""
    cached = _PARSED.get(id(classes))
    if cached is None or cached[0] is not classes:
        cached = _PARSED[id(classes)] = (classes, {name: ir.parse_program(spec["program"])
                                                   for name, spec in classes.items()})
    return cached[1]


def host_answers(cfg: ServeConfig) -> Dict[str, Any]:
    """Return what `current_platform` answers on the stated hardware, and that Ray is not running.

    A platform lint does not know (a vendor's CUDA-like) answers nothing: its `is_cuda()` is
    the vendor's to decide.
    """
    out: Dict[str, Any] = {"ray_initialized": False}    # `vllm serve` starts no Ray before its config
    name = inputs.platform(cfg)
    if name not in PLATFORMS:
        return out
    for other in PLATFORMS:
        out["is_" + other] = name == other
    out["is_cuda_alike"] = name in ("cuda", "rocm")
    gpus = inputs.ctx_value(cfg, "hardware.gpus")
    if isinstance(gpus, int) and not isinstance(gpus, bool) and name in ("cuda", "rocm"):
        out["device_count"] = gpus
    return out


class _State(Scope):
    """The values one program runs on; a program over the flags falls back to them (`engine`)."""

    def __init__(self, values: Dict[str, Any], sources: Dict[str, Setting], engine=None, envs=None):
        super().__init__(values)    # "field:x" / "param:x" / "local:x" -> value
        self.sources = sources      # same keys -> the user's Setting behind the value
        self.engine = engine
        self.envs = envs
        self.others: Dict[str, Optional["_State"]] = {}   # the other classes' states (verify_with_*)
        self.all_unknown = False
        self.builds: Dict[str, Dict[str, Tuple[Any, List[Setting]]]] = {}   # class -> keyword -> value
        self.model = None       # the model's config.json facts (ModelFacts), for ["model", path]
        self.host: Dict[str, Any] = {}   # ["host", q]: the platform's answers (host_answers)

    def get(self, key: str) -> Any:
        kind, _, name = key.partition(":")
        if kind == "other":
            cls, _, field = name.partition(":")
            other = self.others.get(cls)
            return other.get("field:" + field) if other is not None else UNKNOWN
        if kind == "model":
            return self.model_value(name)
        if kind == "host":
            return self.host.get(name, UNKNOWN)
        if kind == "env":
            return self.envs.get(key) if self.envs is not None else UNKNOWN
        if self.all_unknown and not key.startswith("local:"):
            return UNKNOWN
        if key not in self.values and self.engine is not None and key.startswith("field:"):
            return self.engine.get("dest:" + key[6:], own=True)
        return self.values.get(key, UNKNOWN)

    def model_value(self, path: str) -> Any:
        """Return what ModelConfig's `path` is for this model's config.json, or a ModelConfig field."""
        model = self.model
        if model is not None and path == "is_moe":      # `get_num_experts() > 0`, over the same keys
            return model.num_experts > 0
        if model is not None and path in ("get_total_num_kv_heads()", "model_arch_config.total_num_kv_heads"):
            kv = model.text_config.get("num_key_value_heads")     # families with their own key: unknown
            return kv if isinstance(kv, int) and not isinstance(kv, bool) else UNKNOWN
        if model is not None and path == "use_mla":     # MLA needs `kv_lora_rank`; with it, envs and types decide
            return False if not model.uses_mla else UNKNOWN
        if "." not in path and "(" not in path and self.others.get(MODEL_CLASS) is not None:
            return self.others[MODEL_CLASS].get("field:" + path)      # a field: the flag EngineArgs passed
        return UNKNOWN

    def source(self, key: str) -> Optional[Setting]:
        if key in self.sources:
            return self.sources[key]
        if key not in self.values and self.engine is not None and key.startswith("field:"):
            return self.engine.source(key[6:])
        return None


def _initial_state(cfg: ServeConfig, facts: Facts, spec: dict, rewritten: set,
                   built_with: Optional[Dict[str, Tuple[Any, List[Setting]]]] = None) -> Optional[_State]:
    """Return the values a class starts from, or None when this config does not build it.

    `built_with`: the keywords EngineArgs' own program passed where it certainly built the
    class; a keyword it knows wins over the one read from the flags alone.
    """
    built = spec.get("built") or {}
    values: Dict[str, Any] = {}
    sources: Dict[str, Setting] = {}
    envs = _Envs(cfg, (facts.config_checks or {}).get("envs") or {})
    if built.get("flags"):
        fixed = {"field:" + name: value(ir.parse(const), Scope())
                 for name, const in (spec.get("defaults") or {}).items()}
        return _State(fixed, sources, _EngineValues(cfg, facts, rewritten), envs)
    for name, const in (spec.get("defaults") or {}).items():
        values["field:" + name] = value(ir.parse(const), Scope())
    if "flag" in built:
        found = inputs.setting(cfg, built["flag"])
        raw = found.value if found is not None else None
        if isinstance(raw, str):
            raw = parse_literal(raw)
        if not isinstance(raw, dict):
            return None
        for key, stated in raw.items():
            name = str(key).replace("-", "_")
            values["field:" + name] = stated
            sources["field:" + name] = found
        return _State(values, sources, envs=envs)
    engine = _EngineValues(cfg, facts, rewritten)
    if built_with is None and "when" in built and truth_of(ir.parse(built["when"]), engine) is not True:
        return None
    for name, data in (built.get("args") or {}).items():
        expr = ir.parse(data)
        got = value(expr, engine)
        stated = [engine.source(dest) for dest in _dests_in(expr) if engine.source(dest) is not None]
        if built_with is not None and name in built_with and built_with[name][0] is not UNKNOWN:
            got, stated = built_with[name][0], built_with[name][1] or stated
        for key in ("field:" + name, "param:" + name):
            values[key] = got
            if stated:
                sources[key] = stated[0]
    return _State(values, sources, envs=envs)


class _Envs:
    """Environment variables the config states, read as envs.py reads them; unset, envs.py's
    default, or unknown when vLLM may set it itself (VLLM_USE_V1 on a V0 fallback)."""

    def __init__(self, cfg: ServeConfig, kinds: Dict[str, str]):
        self.cfg, self.kinds = cfg, kinds

    def get(self, key: str) -> Any:
        name = key[4:]
        raw, kind = inputs.env_value(self.cfg, name), self.kinds.get(name)
        if isinstance(kind, list):        # ["default", kind, text]: unset, it is envs.py's default
            raw, kind = (kind[2] if raw is None else raw), kind[1]
        if raw is None or kind is None:
            return UNKNOWN
        try:
            return bool(int(raw)) if kind == "bool_int" else int(raw) if kind == "int" else raw
        except ValueError:
            return UNKNOWN


class _EngineValues(Scope):
    """EngineArgs fields as lint knows them: stated, else a literal default, unless rewritten."""

    def __init__(self, cfg: ServeConfig, facts: Facts, rewritten: set):
        super().__init__()
        self.cfg, self.facts, self.rewritten = cfg, facts, rewritten

    def source(self, dest: str) -> Optional[Setting]:
        return inputs.setting(self.cfg, dest) or inputs.bool_setting(self.cfg, dest)

    def get(self, key: str, own: bool = False) -> Any:
        """Return a flag's value; `own`: for EngineArgs' own program, which follows its rewrites."""
        kind, _, dest = key.partition(":")
        if kind != "dest" or (dest in self.rewritten and not own):
            return UNKNOWN
        flag = self.facts.flags.get(dest)
        if flag is not None and inputs.is_boolean(flag):
            stated = inputs.bool_value(self.cfg, dest)
            if stated is not None:
                return stated
        found = inputs.setting(self.cfg, dest)
        if found is not None and flag is not None and flag.type == "json" and isinstance(found.value, str):
            return parse_literal(found.value)     # argparse's json type has read it
        if found is not None:
            return found.value
        if dest in (self.facts.field_defaults or {}):
            return self.facts.field_defaults[dest]
        return UNKNOWN


def _run(program: Tuple[ir.Statement, ...], state: _State, explained: Callable[[str], bool]):
    for item in program:
        if isinstance(item, ir.Assign):
            holds = truth_of(item.cond, state)
            if item.target is ir.ALL:
                if holds is not False:
                    state.all_unknown = True
                continue
            key = key_of(item.target)
            if holds is True:
                state.values[key] = value(item.value, state)
                state.sources.pop(key, None)
                state.sources.update({key: s for s in _sources_of(item.value, state)[:1]})
            elif holds is UNKNOWN:
                state.values[key] = UNKNOWN
        elif isinstance(item, ir.Build):
            if truth_of(item.cond, state) is True:
                state.builds[item.config_class] = {kw: (value(e, state), _sources_of(e, state)[:1])
                                                   for kw, e in item.args}
        elif not explained(ir.message_text(item.message)) and truth_of(item.cond, state) is True \
                and truth_of(item.test, state) is True:
            # The guard's own `if` (the last condition) names its subject first.
            cond = item.cond
            own = cond.parts[-1:] if isinstance(cond, ir.Logic) and cond.op == "and" else (cond,)
            read = [s for e in own for s in _sources_of(e, state)] + _sources_of(item.test, state) \
                + _sources_of(cond, state)
            settings = tuple({id(s): s for s in reversed(read)}.values())[::-1]
            if settings:
                return render(item.message, state), item.exception, settings
    return None


def _reads_others(program: Tuple[ir.Statement, ...]) -> bool:
    """Return whether a program reads another class (`verify_with_*`): it runs after that one."""
    return any(isinstance(e, ir.Other) or (isinstance(e, ir.Name) and e.kind == "model")
               for item in program for top in ir.statement_exprs(item) for e in ir.walk(top))


def _dests_in(expr: ir.Expr) -> List[str]:
    """Return the EngineArgs fields an expression of EngineArgs reads, in order."""
    return [e.name for e in ir.walk(expr) if isinstance(e, ir.Name) and e.kind == "dest"]


def _sources_of(expr: ir.Expr, state: _State) -> List[Setting]:
    """Return the user's settings an expression reads (fields, params, locals they fed)."""
    if isinstance(expr, ir.Other):
        other = state.others.get(expr.config_class) if state.others else None
        found = other.source("field:" + expr.name) if other is not None else None
        return [found] if found is not None else []
    if isinstance(expr, ir.Name) and expr.kind in ("field", "param", "local"):
        found = state.source(key_of(expr))
        return [found] if found is not None else []
    return [s for child in expr.children() for s in _sources_of(child, state)]
