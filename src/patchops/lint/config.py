"""Serve specs, plain vLLM `--config` YAML and launch commands -> one positioned ServeConfig.

INTERFACE SKELETON (to be filled in): the dataclasses below are the contract between the
input readers, the rules and the runner. Keep their fields; add helpers freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple


@dataclass(frozen=True)
class Setting:
    """One value the user wrote, with where they wrote it.

    `key` is the spelling as written (`tp`, `max-model-len`, `--max_model_len`);
    `name` the normalised key (leading dashes stripped, `-` -> `_`; after
    `reading.read_as_vllm` the canonical EngineArgs/argparse dest); `value` what vLLM's
    reader gets (YAML: `yaml.safe_load` typing; command line: the token string, or True
    for a bare flag, or a list of tokens for nargs); `raw` the scalar text exactly as
    written (`yes`, `'8192'`), None for collections.
    """

    key: str
    name: str
    value: Any
    line: int
    column: int
    raw: Optional[str] = None
    source: str = "yaml"  # "yaml" | "cli" | "env"


@dataclass
class ServeConfig:
    path: str                                   # shown in diagnostics: "serve.yaml", "launch.sh", "<command>"
    kind: str                                   # "spec" | "config" | "command"
    entrypoint: str = "serve"                   # "serve" (vllm serve) | "api_server" (python -m vllm.entrypoints.openai.api_server)
    args: Dict[str, Setting] = field(default_factory=dict)      # by name; last occurrence wins
    env: Dict[str, Setting] = field(default_factory=dict)       # by variable name
    model: Optional[Setting] = None
    context: Dict[str, Setting] = field(default_factory=dict)   # dotted spec paths: "vllm.version", "hardware.gpus", "workload.concurrency"
    duplicates: List[Tuple[Setting, Setting]] = field(default_factory=list)  # (earlier, later) same key twice
    ignored: Dict[str, Tuple[Setting, str]] = field(default_factory=dict)    # name -> (setting, why vLLM will not see it), filled by reading
    unknown: List[Setting] = field(default_factory=list)        # keys vLLM's parser will reject, filled by reading
    suppressions: Dict[int, Set[str]] = field(default_factory=dict)  # line -> codes in `# patchops: ignore[CODE]`
    lines: List[str] = field(default_factory=list)

    def position_of(self, at) -> Tuple[int, int]:
        """Return (line, column) of a Setting, a (line, column) tuple, or (1, 1) for None."""
        if at is None:
            return (1, 1)
        if isinstance(at, Setting):
            return (at.line, at.column)
        return (int(at[0]), int(at[1]))
