"""A conformance case: one `vllm serve` launch (model, --config YAML, flags, env, GPUs).

The corpus is every case `all_cases()` returns: the hand-written files in `corpus/cases/`,
the seed situations of `examples/` and every lint rule's VALID/INVALID examples
(`borrowed.py`) and the seeded combinations
(`generate.py`, `generate_more.py`). A case runs the same way on every vLLM version; its `key()` hashes what vLLM
sees, so a recorded verdict goes stale when the case changes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import yaml

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
MODELS = CORPUS / "models"
DEFAULT_MODEL = "Qwen2.5-7B-Instruct"
DEFAULT_GPU = "a100-80g"
DEFAULT_GPUS = 8
DEFAULT_HOST_RAM_GIB = 512
CASE_FIELDS = ("id", "about", "model", "model_arg", "config", "args", "env", "gpu", "gpus",
               "host_ram_gib", "cause")


@functools.lru_cache(maxsize=None)
def gpu_profiles() -> Dict[str, dict]:
    return yaml.safe_load((CORPUS / "gpus.yaml").read_text())


@functools.lru_cache(maxsize=None)
def model_files(name: str) -> Tuple[Tuple[str, str], ...]:
    """Return (file name, text) of a corpus model's JSON files: what vLLM reads of it."""
    folder = model_dir(name)
    return tuple((p.name, p.read_text()) for p in sorted(folder.glob("*.json")))


def model_dir(name: str) -> Path:
    return MODELS / name


@dataclass(frozen=True)
class Case:
    """One launch. `config` is the `--config` file's text and `args` the flags after the model;
    both may hold `{model}`, the model folder's path, and `{models}`, the corpus's model folders. With `model_arg` false the model is not
    passed positionally (the config names it). `cause` lists the patchops rule codes that
    name the reason vLLM refuses this case, when the message patterns in causes.yaml do not.
    """

    id: str
    model: str = DEFAULT_MODEL
    config: Optional[str] = None
    args: Tuple[str, ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()
    gpu: str = DEFAULT_GPU
    gpus: int = DEFAULT_GPUS
    host_ram_gib: int = DEFAULT_HOST_RAM_GIB
    model_arg: bool = True
    cause: Tuple[str, ...] = ()
    about: str = ""
    origin: str = field(default="", compare=False)

    # ---------------------------------------------------------------- what vLLM sees

    def profile(self) -> dict:
        """Return the GPU profile the harness declares for this case."""
        found = gpu_profiles().get(self.gpu)
        if found is None:
            raise ValueError(f"case {self.id}: unknown gpu {self.gpu!r} (corpus/gpus.yaml)")
        return dict(found, count=self.gpus, host_ram_gib=self.host_ram_gib)

    def model_path(self) -> str:
        return str(model_dir(self.model))

    def _fill(self, text: str) -> str:
        return text.replace("{model}", self.model_path()).replace("{models}", str(MODELS))

    def argv(self) -> List[str]:
        """Return the tokens after `vllm`: `serve [MODEL] [--config case.yaml] ARGS`."""
        tokens = ["serve"]
        if self.model_arg:
            tokens.append(self.model_path())
        if self.config is not None:
            tokens += ["--config", "case.yaml"]
        return tokens + [self._fill(token) for token in self.args]

    def config_text(self) -> Optional[str]:
        return None if self.config is None else self._fill(self.config)

    def command(self) -> str:
        """Return the launch as one shell command line (what `patchops lint --cmd` reads)."""
        env = [f"{name}={shlex.quote(value)}" for name, value in self.env]
        return " ".join(env + ["vllm"] + [shlex.quote(token) for token in self.argv()])

    def materialize(self, root: Path) -> Path:
        """Write the case's files under `root` and return its working folder."""
        folder = root / re.sub(r"[^\w.-]+", "_", self.id)
        folder.mkdir(parents=True, exist_ok=True)
        text = self.config_text()
        if text is not None:
            (folder / "case.yaml").write_text(text)
        return folder

    def key(self) -> str:
        """Return a hash of everything the verdict depends on (not `about` or `cause`)."""
        files = dict(model_files(self.model))
        payload = {"config": self.config, "args": list(self.args), "env": list(self.env),
                   "profile": self.profile(), "model_arg": self.model_arg,
                   "model": self.model, "model_files": files}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def describe(self) -> str:
        lines = [f"case {self.id}" + (f": {self.about}" if self.about else ""),
                 f"  gpus: {self.gpus} x {self.gpu}; model {self.model}"
                 + ("" if self.model_arg else " (named in the config)"),
                 f"  command: {self.command()}"]
        if self.config is not None:
            lines.append("  case.yaml:")
            lines += [f"    {line}" for line in self.config.splitlines()]
        return "\n".join(lines)


def case_from_mapping(data: dict, origin: str) -> Case:
    """Build a Case from a corpus file entry, refusing unknown keys (a typo is not a default)."""
    unknown = set(data) - set(CASE_FIELDS)
    if unknown:
        raise ValueError(f"{origin}: case {data.get('id')!r}: unknown keys {sorted(unknown)}")
    if "id" not in data:
        raise ValueError(f"{origin}: a case without an id")
    env = data.get("env") or {}
    cause = data.get("cause") or ()
    return Case(
        id=str(data["id"]), model=data.get("model", DEFAULT_MODEL), config=data.get("config"),
        args=tuple(str(a) for a in data.get("args") or ()),
        env=tuple((str(k), str(v)) for k, v in env.items()),
        gpu=data.get("gpu", DEFAULT_GPU), gpus=int(data.get("gpus", DEFAULT_GPUS)),
        host_ram_gib=int(data.get("host_ram_gib", DEFAULT_HOST_RAM_GIB)),
        model_arg=bool(data.get("model_arg", True)),
        cause=(cause,) if isinstance(cause, str) else tuple(cause),
        about=data.get("about", ""), origin=origin)


def written_cases() -> List[Case]:
    """Return the hand-written cases of corpus/cases/*.yaml, in file order."""
    found = []
    for path in sorted((CORPUS / "cases").glob("*.yaml")):
        entries = yaml.safe_load(path.read_text()) or []
        found += [case_from_mapping(entry, path.name) for entry in entries]
    return found


def all_cases() -> List[Case]:
    """Return the whole corpus, refusing duplicate ids."""
    from conformance import borrowed, generate, generate_more

    cases = (written_cases() + borrowed.seed_cases() + borrowed.rule_cases()
             + generate.cases() + generate_more.cases())
    seen: Dict[str, Case] = {}
    for case in cases:
        if case.id in seen:
            raise ValueError(f"duplicate case id {case.id!r} ({seen[case.id].origin}, {case.origin})")
        if not model_dir(case.model).is_dir():
            raise ValueError(f"case {case.id}: no model folder corpus/models/{case.model}")
        seen[case.id] = case
    return cases
