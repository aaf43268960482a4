"""Files a launch names on this machine: local paths beside the input, the Hugging Face cache offline.

vLLM resolves a model or tokenizer as a path first (relative to where it runs), then as a hub
repo id; offline (`HF_HUB_OFFLINE`), only through the cache.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.model_config import hub_snapshots, launch_environment

CHAT_TEMPLATE = "chat_template"
JINJA_CHARS = "{}\n"
CONFIG_FORMAT = "config_format"
MISTRAL_FORMAT = "mistral"
# transformers_utils/config.py: MISTRAL_CONFIG_NAME and load_params_config /
# _download_mistral_config_file (0.8.5-0.33)
MISTRAL_PARAMS_FILE = "params.json"
TOKENIZER = "tokenizer"
# huggingface_hub.utils._validators.validate_repo_id: what the hub accepts as a repo id
REPO_ID = re.compile(r"^(\b[\w\-.]+\b/)?\b[\w\-.]+\b$")
REPO_ID_MAX = 96

# huggingface_hub/constants.py: HF_HUB_OFFLINE = _is_true(HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)
HUB_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
HUB_TRUE_VALUES = ("1", "ON", "YES", "TRUE")


def offline_snapshots(cfg: ReadConfig, repo_id: str) -> Optional[Path]:
    """Return the Hugging Face cache folder an offline launch must find `repo_id` in, or None
    when the launch may ask the hub (offline: the launch's env over this process's)."""
    env = launch_environment(cfg)
    flag = env.get(HUB_OFFLINE_VARS[0]) or env.get(HUB_OFFLINE_VARS[1]) or ""
    return hub_snapshots(repo_id, env) if flag.upper() in HUB_TRUE_VALUES else None


def local_path(cfg: ReadConfig, value: str, wanted=Path.exists) -> Optional[Path]:
    """Return `value` as a path on this machine that is `wanted` (as written, else beside the
    input), None when neither is; a name no file can have (too long) is not there."""
    for path in (Path(value).expanduser(), Path(cfg.path).parent / value):
        try:
            if wanted(path):
                return path
        except OSError:
            continue
    return None


def local_model_folder(cfg: ReadConfig) -> Optional[Path]:
    """Return the model folder vLLM reads (the path as written, else beside the input), None for a hub name."""
    if cfg.model is None or not isinstance(cfg.model.value, str):
        return None
    return local_path(cfg, cfg.model.value, Path.is_dir)
