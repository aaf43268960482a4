"""Cases borrowed from the repository: every lint rule's examples and the seed situations.

Read from the rule registry and from `examples/`, so a new rule's examples join the corpus
(and need a verdict) by themselves. An example becomes the same launch on a local model folder: a spec's `args:`
block is the `--config` file (sliced from the text, so duplicates and YAML spellings stay),
its `env:` the environment, its `hardware:` the nearest GPU profile; a JSON flag naming the
served model again (a speculative draft) names the same folder. Examples that real vLLM
cannot reproduce are left out and listed by `skipped()`: facts overridden in the example
(a build without flash-attn), a non-CUDA platform, the api_server entry point.
"""

from __future__ import annotations

import json
import os
import shlex
from typing import List, Optional, Tuple

import yaml

from conformance.cases import DEFAULT_GPU, DEFAULT_GPUS, DEFAULT_MODEL, HERE, Case, MODELS

SEEDS = HERE.parent.parent / "examples"
CORPUS_MODELS = "tests/conformance/corpus/models/"


def local_model(name: Optional[str]) -> str:
    """Return the corpus model with the same folder name as `name`, else the default one."""
    base = os.path.basename(str(name or "").rstrip("/"))
    return base if base and (MODELS / base).is_dir() else DEFAULT_MODEL


def gpu_for(hardware: dict) -> Tuple[str, int]:
    """Return the (profile, count) nearest to a spec's `hardware:` section."""
    cc = hardware.get("compute_capability")
    memory = hardware.get("memory_gib")
    count = int(hardware.get("gpus") or DEFAULT_GPUS)
    if cc is None:
        profile = DEFAULT_GPU if memory is None or memory >= 70 else "l40s"
        return profile, count
    cc = float(str(cc).replace("sm_", "").replace("sm", "")) if not isinstance(cc, (int, float)) else cc
    if cc >= 10:
        profile = "b200"
    elif cc >= 9:
        profile = "h200" if memory and memory > 100 else "h100-80g"
    elif cc >= 8.9:
        profile = "l40s"
    elif cc >= 8.6:
        profile = "a10"
    elif cc >= 8:
        profile = "a100-40g" if memory and memory <= 40 else "a100-80g"
    elif cc >= 7.5:
        profile = "t4"
    else:
        profile = "v100"
    return profile, count


class Skip(Exception):
    """This example cannot be replayed on real vLLM."""


def _from_spec(text: str) -> dict:
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        raise Skip("not valid YAML: no args block to replay") from None
    if not isinstance(root, yaml.MappingNode):
        raise Skip("not a mapping")
    data = yaml.safe_load(text)
    fields: dict = {}
    hardware = data.get("hardware") or {}
    if hardware.get("platform") not in (None, "cuda"):
        raise Skip(f"platform {hardware.get('platform')}")
    if data.get("entrypoint") not in (None, "serve"):
        raise Skip("api_server entry point")
    fields["gpu"], fields["gpus"] = gpu_for(hardware)
    fields["model"] = local_model(data.get("model"))
    fields["env"] = {str(k): "" if v is None else str(v) for k, v in (data.get("env") or {}).items()}
    for key, value in root.value:
        if key.value == "args":
            if isinstance(value, yaml.ScalarNode) and value.value in ("", "~", "null"):
                break
            lines = text.splitlines(keepends=True)
            start, end = value.start_mark, value.end_mark
            if isinstance(value, yaml.MappingNode) and value.flow_style is False:
                block = "".join(lines[start.line:end.line + (1 if end.column else 0)])
                fields["config"] = _dedent(block)
            else:
                fields["config"] = text[start.index:end.index] + "\n"
    return fields


def _dedent(block: str) -> str:
    rows = block.splitlines()
    indent = min(len(r) - len(r.lstrip()) for r in rows if r.strip())
    return "".join(r[indent:] + "\n" for r in rows)


def _from_config(text: str) -> dict:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {"config": text}      # vLLM's loader meets the same broken file
    if not isinstance(data, dict):
        raise Skip("not a mapping")
    if "model" not in data:
        return {"config": text}
    model = local_model(data["model"])
    lines = [("model: {model}" if line.startswith("model:") else line)
             for line in text.splitlines()]
    return {"config": "\n".join(lines) + "\n", "model": model, "model_arg": False}


def _from_command(text: str) -> dict:
    tokens = shlex.split(text.replace("\\\n", " "), comments=True)
    env = {}
    while tokens and "=" in tokens[0] and not tokens[0].startswith("-"):
        name, value = tokens.pop(0).split("=", 1)
        env[name] = value
    if tokens[:2] != ["vllm", "serve"] or len(tokens) < 3 or tokens[2].startswith("-"):
        raise Skip("not `vllm serve MODEL ...`")
    if "--config" in tokens:
        raise Skip("refers to a config file")
    return {"env": env, "model": local_model(tokens[2]), "args": [_same_model(a, tokens[2]) for a in tokens[3:]]}


def _same_model(token: str, served: str) -> str:
    """A JSON flag naming the served model again (a draft that is the model itself) names its folder."""
    if not token.startswith("{"):
        return token
    try:
        data = json.loads(token)
    except ValueError:
        return token
    if not isinstance(data, dict) or data.get("model") != served:
        return token
    return json.dumps(dict(data, model="{model}"))


def _corpus_paths(value):
    """Name the corpus's model folders absolutely (`{models}/...`): an example writes them from
    the repository root, where the tests run, but vLLM runs in the case's own folder."""
    if isinstance(value, list):
        return [_corpus_paths(v) for v in value]
    return value.replace(CORPUS_MODELS, "{models}/") if isinstance(value, str) else value


def convert(rule, kind: str, index: int, example) -> Case:
    """Return the case replaying `example` (raises Skip when real vLLM cannot)."""
    if example.facts:
        raise Skip(f"overrides facts {sorted(example.facts)}")
    if example.kind == "spec":
        fields = _from_spec(example.text)
    elif example.kind == "config":
        fields = _from_config(example.text)
    else:
        fields = _from_command(example.text)
    env = fields.pop("env", {})
    for name in ("config", "args"):
        if name in fields:
            fields[name] = _corpus_paths(fields[name])
    return Case(id=f"rule/{rule.code}-{rule.name}/{kind}-{index}",
                about=f"{rule.code} {kind.upper()} example {index} (written for vLLM {example.vllm})",
                env=tuple(sorted(env.items())), origin=f"{rule.__module__}",
                args=tuple(fields.pop("args", ())), **fields)


def _examples():
    from patchops.lint.rules import ALL_RULES

    for rule in ALL_RULES:
        for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID)):
            for index, example in enumerate(examples, 1):
                yield rule, kind, index, example


def rule_cases() -> List[Case]:
    found = []
    for rule, kind, index, example in _examples():
        try:
            found.append(convert(rule, kind, index, example))
        except Skip:
            continue
    return found


def seed_cases() -> List[Case]:
    """Return the seed situations of `examples/` (serve specs and launch scripts)."""
    found = []
    for path in sorted(SEEDS.iterdir()):
        text = path.read_text()
        try:
            fields = _from_command(text) if path.suffix == ".sh" else _from_spec(text)
        except Skip:
            continue
        env = fields.pop("env", {})
        found.append(Case(id=f"seed/{path.stem}", about=f"examples/{path.name}",
                          env=tuple(sorted(env.items())), args=tuple(fields.pop("args", ())),
                          origin=f"examples/{path.name}", **fields))
    return found


def skipped() -> List[Tuple[str, str]]:
    """Return (example id, why) for each example that has no case."""
    found = []
    for rule, kind, index, example in _examples():
        try:
            convert(rule, kind, index, example)
        except Skip as why:
            found.append((f"rule/{rule.code}-{rule.name}/{kind}-{index}", str(why)))
    return found
