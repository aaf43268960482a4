"""Where a `--tool-parser-plugin` / `--reasoning-parser-plugin` comes from, and whether vLLM can load it.

vLLM loads a plugin only when its value is longer than 3 characters (`len(plugin) > 3`,
entrypoints/openai/api_server.py and config/structured_outputs.py), by file path
(`import_from_path`), and from 0.30 first as a module name (`import_plugin`). The path is
relative to the server's working folder, which lint does not know: like the model folder
(model_facts.py), it is tried from here and from the input's folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import inputs
from patchops.lint.vllm.releases import PLUGIN_LOAD_FAILURE_LOGGED, PLUGIN_AS_MODULE, release

# registry -> (flag dest, wording in vLLM's KeyError)
PARSERS = {
    "tool_call_parser": ("tool_call_parser", "tool call parser"),
    "reasoning_parser": ("reasoning_parser", "reasoning parser"),
}

# registry -> the plugin flag that can add names to it
PLUGIN_FLAGS = {"tool_call_parser": "tool_parser_plugin", "reasoning_parser": "reasoning_parser_plugin"}


@dataclass(frozen=True)
class Plugin:
    """A parser plugin as given, and what lint can tell about it."""

    setting: Setting
    value: str
    path: Optional[Path]   # the file found (None: not found, or a module name)
    module_name: bool      # may be an importable module (0.30+), so its absence proves nothing

    @property
    def missing(self) -> bool:
        return self.path is None and not self.module_name

    @property
    def shown(self) -> str:
        """Name it for a message: the file found, else the value as given."""
        return str(self.path) if self.path is not None else self.value


def parser_plugin(cfg: ReadConfig, facts: Facts, registry: str) -> Optional[Plugin]:
    """Return the plugin that may add names to `registry`, None when there is none vLLM would load."""
    found = inputs.setting(cfg, PLUGIN_FLAGS[registry])
    if found is None or not isinstance(found.value, str) or len(found.value) <= 3:
        return None
    raw = found.value
    module_name = release(facts) >= PLUGIN_AS_MODULE and not raw.endswith(".py") and os.sep not in raw
    given = Path(raw).expanduser()
    candidates = [given]
    if not given.is_absolute() and Path(cfg.path).is_file():
        candidates.append(Path(cfg.path).parent / given)
    path = next((c for c in candidates if c.is_file()), None)
    return Plugin(setting=found, value=raw, path=path, module_name=module_name)


def load_failure(facts: Facts, plugin: Plugin) -> str:
    """Return what vLLM prints when `plugin` is not there."""
    if release(facts) < PLUGIN_LOAD_FAILURE_LOGGED:
        return f"FileNotFoundError: [Errno 2] No such file or directory: '{plugin.value}'"
    module = os.path.splitext(os.path.basename(plugin.value))[0]
    return f"Failed to load module '{module}' from {plugin.value}."
