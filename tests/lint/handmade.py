"""Read configs and Facts built by hand, for predictor tests that state each value directly.

A test through here skips the loaders: every setting is already canonical and typed, one line
each, so it pins what a predictor does with a value, not how the value was read.
"""

from __future__ import annotations

from patchops.lint.facts.model import Facts
from patchops.lint.input.serve_config import ServeConfig, Setting

H100_CTX = {"hardware.memory_gib": 80, "hardware.compute_capability": 9.0}
L40S_CTX = {"hardware.memory_gib": 48, "hardware.compute_capability": 8.9}


def hand_config(args=None, env=None, ctx=None, ignored=None, unknown=None) -> ServeConfig:
    """Build a read config by hand: canonical names, typed values, one line each."""
    cfg = ServeConfig(path="serve.yaml", kind="spec")
    line = 1
    for name, value in (args or {}).items():
        cfg.args[name] = Setting(key=name.replace("_", "-"), name=name, value=value, line=line,
                                 column=3, raw=None if isinstance(value, (list, dict)) else str(value))
        line += 1
    for name, value in (env or {}).items():
        cfg.env[name] = Setting(key=name, name=name, value=str(value), line=line, column=3, source="env")
        line += 1
    for path, value in (ctx or {}).items():
        cfg.context[path] = Setting(key=path.split(".")[-1], name=path, value=value, line=line, column=3)
        line += 1
    for name, value in (ignored or {}).items():
        cfg.ignored[name] = (Setting(key=name, name=name, value=value, line=line, column=3), "dropped")
        line += 1
    for name, value in (unknown or {}).items():
        cfg.unknown.append(Setting(key=name, name=name, value=value, line=line, column=3))
        line += 1
    return cfg


def hand_facts(version, **kw) -> Facts:
    """Return Facts of `version` with only the given fields set (flash-attn installed unless said)."""
    kw.setdefault("has_flash_attn", True)
    return Facts(version=version, origin="test", **kw)
