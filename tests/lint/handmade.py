"""Read configs and Facts built by hand, for predictor tests that state each value directly.

A test through here skips the loaders: every setting is already canonical and typed, one line
each, so it pins what a predictor does with a value, not how the value was read.
"""

from __future__ import annotations

from typing import Optional

from patchops.lint.facts.model import Facts
from patchops.lint.input.model_source import ModelSource
from patchops.lint.input.serve_config import ServeConfig, Setting
from patchops.lint.reading import read_as_vllm
from patchops.lint.reading.read_config import Fate, Outcome, ReadConfig, read_config

H100_CTX = {"hardware.memory_gib": 80, "hardware.compute_capability": 9.0}
L40S_CTX = {"hardware.memory_gib": 48, "hardware.compute_capability": 8.9}
NO_FLAGS = "0.0"   # the version of a flag table never extracted: as_read() keeps keys as written


def hand_config(args=None, env=None, ctx=None, ignored=None, unknown=None) -> ReadConfig:
    """Build a read config by hand: canonical names, typed values, one line each."""
    cfg = ServeConfig(path="serve.yaml", kind="spec")
    read, judged = {}, []
    line = 1
    for name, value in (args or {}).items():
        read[name] = Setting(key=name.replace("_", "-"), name=name, value=value, line=line,
                             column=3, raw=None if isinstance(value, (list, dict)) else str(value))
        line += 1
    for name, value in (env or {}).items():
        cfg.env[name] = Setting(key=name, name=name, value=str(value), line=line, column=3, source="env")
        line += 1
    for path, value in (ctx or {}).items():
        cfg.context[path] = Setting(key=path.split(".")[-1], name=path, value=value, line=line, column=3)
        line += 1
    for name, value in (ignored or {}).items():
        judged.append(Outcome(Fate.IGNORED, Setting(key=name, name=name, value=value, line=line, column=3),
                              name, "dropped"))
        line += 1
    for name, value in (unknown or {}).items():
        judged.append(Outcome(Fate.UNKNOWN, Setting(key=name, name=name, value=value, line=line, column=3)))
        line += 1
    return read_config(cfg, None, read, None, judged)


def as_read(cfg: ServeConfig, model_facts=None) -> ReadConfig:
    """Return a written config read with no flag table (its keys as written, normalised, every
    setting accepted), judged with `model_facts` (its model's config.json): a predictor's input."""
    read = read_as_vllm(cfg, Facts(version=NO_FLAGS, origin="test"))
    return read if model_facts is None else read.with_model(model_of(read, model_facts))


def model_of(cfg, model_facts) -> Optional[ModelSource]:
    """Return the ModelSource of a model config a test read itself, for lint_config(model=...)."""
    if model_facts is None:
        return None
    model = cfg.model.value if cfg.model is not None and isinstance(cfg.model.value, str) else None
    return ModelSource(model, model_facts, "given", path=model_facts.path)


def hand_facts(version, **kw) -> Facts:
    """Return Facts of `version` with only the given fields set (flash-attn installed unless said)."""
    kw.setdefault("has_flash_attn", True)
    return Facts(version=version, origin="test", **kw)
