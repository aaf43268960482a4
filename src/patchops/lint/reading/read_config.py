"""What one vLLM release read of a written ServeConfig: each setting's outcome, the values it sees.

`read_as_vllm` returns a ReadConfig and leaves the ServeConfig as written. Every written
setting reading judged has one Outcome, so a rule asks the read config what became of a
setting (`outcome_of`, `dropped`, `refusal`) instead of matching positions across lists. The
input's own fields (env, context, text, suppressions, ...) are read through to the written one.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.input.serve_config import ServeConfig, Setting


class Fate(enum.Enum):
    """What vLLM's reading does with one written setting, in the order a lookup prefers them."""

    REJECTED = "rejected"   # the key is known, the value refused: vLLM exits at launch
    IGNORED = "ignored"     # dropped or mangled without a word (a YAML `false`, a list before 0.10.2)
    UNKNOWN = "unknown"     # no flag matches the key: `unrecognized arguments`
    ACCEPTED = "accepted"   # read, its value in ReadConfig.args


@dataclass(frozen=True)
class Outcome:
    """One written setting's fate: `setting` named by its dest where one matched (`dest`), and
    `detail`, vLLM's own message for a rejection or why vLLM never sees an ignored value."""

    fate: Fate
    setting: Setting
    dest: Optional[str] = None
    detail: Optional[str] = None


def _as_written(name: str) -> property:
    return property(lambda self: getattr(self.written, name), doc=f"The written config's `{name}`.")


@dataclass(frozen=True)
class ReadConfig:
    """A ServeConfig (`written`) as vLLM `version` reads it (None: a read config built by hand).

    `args` holds what argparse stores per dest (only what the user set; defaults stay in the
    facts), `model` the model vLLM loads, `outcomes` every judged setting's Outcome (rejected,
    ignored, unknown, then accepted), `duplicates` the (earlier, later) pairs of one key.
    `model_source` and `model_facts` are the model's config.json, chosen after reading.
    """

    written: ServeConfig
    version: Optional[str]
    args: Dict[str, Setting]
    model: Optional[Setting]
    outcomes: Tuple[Outcome, ...] = ()
    duplicates: Tuple[Tuple[Setting, Setting], ...] = ()
    model_source: Optional[Any] = None     # lint/input/model_source.py ModelSource
    model_facts: Optional[Any] = None      # lint/input/model_config.py ModelFacts

    path = _as_written("path")
    kind = _as_written("kind")
    entrypoint = _as_written("entrypoint")
    env = _as_written("env")
    context = _as_written("context")
    lines = _as_written("lines")
    text = _as_written("text")
    suppressions = _as_written("suppressions")
    covers = _as_written("covers")
    config_settings = _as_written("config_settings")
    argv = _as_written("argv")
    config_file = _as_written("config_file")
    config_loaded = _as_written("config_loaded")
    launch_name = _as_written("launch_name")
    notes = _as_written("notes")
    container = _as_written("container")
    sources = _as_written("sources")

    def __post_init__(self) -> None:
        by_place: Dict[Tuple[int, int, str], Outcome] = {}
        for outcome in self.outcomes:
            seen = outcome.setting
            by_place.setdefault((seen.line, seen.column, _key(seen.key)), outcome)
        object.__setattr__(self, "_by_place", by_place)

    def source_of(self, at) -> ServeConfig:
        return self.written.source_of(at)

    def position_of(self, at) -> Tuple[int, int]:
        return self.written.position_of(at)

    def outcome_of(self, setting: Setting) -> Optional[Outcome]:
        """Return the Outcome of the setting written at `setting`'s place, None if reading never saw it.

        The key tells apart what shares a place: every key of a command's `--config FILE`
        sits at its `--config` token.
        """
        return self._by_place.get((setting.line, setting.column, _key(setting.key)))  # type: ignore[attr-defined]

    def outcomes_of(self, fate: Fate) -> List[Outcome]:
        """Return the outcomes of one fate, in reading's order."""
        return [o for o in self.outcomes if o.fate is fate]

    def dropped(self, dest: str) -> Optional[Outcome]:
        """Return the IGNORED outcome of `dest` (the value vLLM never sees), if any."""
        return next((o for o in self.outcomes if o.fate is Fate.IGNORED and o.dest == dest), None)

    def refusal(self, dest: str) -> Optional[Outcome]:
        """Return the REJECTED outcome of `dest` (vLLM's parser exits on it), if any."""
        return next((o for o in self.outcomes if o.fate is Fate.REJECTED and o.dest == dest), None)

    def with_model(self, source) -> "ReadConfig":
        """Return this read config with the model config `source` chose (model_source.choose)."""
        return dataclasses.replace(self, model_source=source, model_facts=source.facts)


def read_config(written: ServeConfig, version: Optional[str], args: Dict[str, Setting],
                model: Optional[Setting], judged: List[Outcome] = (),
                duplicates=()) -> ReadConfig:
    """Return a ReadConfig whose outcomes are `judged`'s, by fate, then each of `args` accepted."""
    accepted = [Outcome(Fate.ACCEPTED, setting, dest) for dest, setting in args.items()]
    order = list(Fate)
    outcomes = sorted(judged, key=lambda o: order.index(o.fate)) + accepted
    return ReadConfig(written, version, dict(args), model, tuple(outcomes), tuple(duplicates))


def _key(key: str) -> str:
    return key.split("=", 1)[0].lstrip("-").replace("-", "_")
