"""Find the vLLM launches in what a deploy repository holds, by content, each one input.

A Kubernetes manifest, a compose file, a script or README with `docker run`, a Dockerfile:
each launch of vLLM's server becomes its own ServeConfig, named for where it is
(`Deployment/qwen-chat container vllm`), positioned in the file that holds it. A YAML that is
about something else (a GitHub workflow, a Helm chart or values file, a manifest with no vLLM
container) is no vLLM config: it is skipped with the reason, never read as `--config` keys.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

from patchops.lint.input import yaml_nodes as yamlread, yaml_paths
from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.input import compose, container_run, dockerfile, kubernetes, markdown
from patchops.lint.input.compose_env import Variables
from patchops.lint.input.container import ContainerLaunch, to_config
from patchops.lint.input.scalar_words import word_commands
from patchops.lint.input.launch_command import read_launch, script_launches
from patchops.lint.input.shell_lexer import Lines
from patchops.lint.input.yaml_nodes import YMap, YNode

Include = Callable[[str], ServeConfig]
_HELM = re.compile(r"\{\{-?\s*(?:[.$]|include\b|if\b|range\b|with\b|define\b|template\b|toYaml\b|/\*)")
_HELM_VALUES_KEYS = ("replicaCount", "nameOverride", "fullnameOverride", "podAnnotations",
                     "serviceAccount", "imagePullSecrets")


@dataclass
class DeployFile:
    """The vLLM launches of one file, or why it holds none (`skipped`)."""

    configs: List[ServeConfig] = field(default_factory=list)
    skipped: Optional[str] = None


def read_deploy(text: str, path: str, base_dir: str, include: Include,
                suppressions: Dict[int, Set[str]]) -> Optional[DeployFile]:
    """Return the launches of a deploy file, or None when `text` is a serve spec, config or plain script.

    `suppressions` are the file's `# patchops: ignore` comments; every launch shares them.
    """
    name = os.path.basename(path)
    if dockerfile.is_dockerfile(name):
        return _dockerfile(text, path, base_dir, include, suppressions)
    if name.lower().endswith(markdown.SUFFIXES):
        return _script(markdown.shell_blocks(text), text, path, base_dir, include, suppressions,
                       containers_only=True)
    return None


def read_script(text: str, path: str, base_dir: str, include: Include,
                suppressions: Dict[int, Set[str]]) -> Optional[DeployFile]:
    """Return every launch of a script that runs a container (`docker run`), else None."""
    return _script(text, text, path, base_dir, include, suppressions, containers_only=False)


def read_yaml(text: str, path: str, base_dir: str, include: Include,
              suppressions: Dict[int, Set[str]]) -> Optional[DeployFile]:
    """Return the launches of a manifest or compose file, a skip for other deploy YAML, else None."""
    helm = _HELM.search(text)
    if helm is not None:
        line = text.count("\n", 0, helm.start()) + 1
        return DeployFile(skipped=f"a Helm template (`{{{{ }}}}` at line {line}): patchops does not "
                                  "render templates; lint the rendered manifests with "
                                  "`helm template CHART | patchops lint -`")
    if not text.lstrip().startswith(("{", "[")) and "\n---" not in text and not text.startswith("---"):
        documents: List[Optional[YNode]] = [yamlread.read_yaml(text, path)]
    else:
        documents = yamlread.read_yaml_documents(text, path)
    if kubernetes.is_manifest(documents):
        found = kubernetes.read_manifest(documents, text, path)
        return _launches(found.launches, text, path, base_dir, include, suppressions,
                         none=f"Kubernetes {_listed(found.objects)}: no container runs vLLM")
    root = documents[0] if len(documents) == 1 else None
    if compose.is_compose(root):
        services = [e.key.text for e in yaml_paths.child(root, "services").entries]  # type: ignore[union-attr]
        launches = compose.read_compose(root, text, path, Variables(base_dir))  # type: ignore[arg-type]
        return _launches(launches, text, path, base_dir, include, suppressions, none=f"compose services {_listed(services)}: none runs vLLM")
    reason = other_yaml(root)
    return DeployFile(skipped=reason) if reason else None


def other_yaml(root: Optional[YNode]) -> Optional[str]:
    """Return what a YAML file is when it is plainly not a vLLM config (a workflow, Helm files)."""
    if not isinstance(root, YMap):
        return None
    keys = {e.key.text for e in root.entries}
    if "jobs" in keys and ({"on", "True", "true"} & keys or any(e.key.value is True for e in root.entries)):
        return "a GitHub Actions workflow"
    if {"apiVersion", "name", "version"} <= keys:
        return "a Helm Chart.yaml"
    if any(key in keys for key in _HELM_VALUES_KEYS) or \
            yaml_paths.child(root, "image", "repository") is not None:
        return "a Helm values file"
    if "resources" in keys and ("kustomize" in str(yaml_paths.text_of(yaml_paths.child(root, "kind")) or "").lower()
                                or {"namePrefix", "patches", "images", "bases"} & keys):
        return "a kustomization"
    return None


def _launches(launches: List[ContainerLaunch], text: str, path: str, base_dir: str,
              include: Include, suppressions: Dict[int, Set[str]], none: str,
              covers: Optional[Dict[int, int]] = None) -> DeployFile:
    out = DeployFile()
    notes: List[str] = []
    for launch in launches:
        if not launch.names_vllm():
            continue
        cfg = to_config(launch, path, text, base_dir, include)
        if cfg is None:
            notes.extend(launch.notes)
            continue
        cfg.suppressions = _own(suppressions, launch.lines)
        cfg.covers = dict(covers or {})
        out.configs.append(cfg)
    if not out.configs:
        out.skipped = "; ".join([none, *notes]) if notes else none
    return out


def _dockerfile(text: str, path: str, base_dir: str, include: Include,
                suppressions: Dict[int, Set[str]]) -> DeployFile:
    launch = dockerfile.read_dockerfile(text, path)
    return _launches([launch] if launch else [], text, path, base_dir, include, suppressions,
                     none="a Dockerfile whose final stage does not run vLLM's server",
                     covers=dockerfile.covered_lines(text, suppressions))


def _script(lexed: str, text: str, path: str, base_dir: str, include: Include,
            suppressions: Dict[int, Set[str]], containers_only: bool) -> Optional[DeployFile]:
    """Return the launches of shell text (`lexed`: `text` itself, or a README's code blocks)."""
    lines = Lines(text)
    found = script_launches(lexed, path, base_dir, container=container_run.is_container_run)
    if not found and not containers_only:
        return DeployFile(skipped="a script that runs no `vllm serve`, api_server or `docker run`")
    if not any(launch.found is None for launch in found):
        if containers_only:
            return DeployFile(skipped="no `docker run` or `podman run` of vLLM in its code blocks")
        return None                 # a plain `vllm serve` script: loaders read it as before
    out = DeployFile()
    notes: List[str] = []
    for launch in found:
        line, _ = lines.position(launch.words[0].start)
        if launch.found is not None:
            if containers_only:
                continue
            last, _ = lines.position(launch.words[-1].start)
            cfg = ServeConfig(path=path, kind="command", lines=text.splitlines(), text=text,
                              suppressions=_own(suppressions, (line, last)),
                              launch_name=f"line {line} vllm serve")
            cfg.env.update(launch.env)
            read_launch(cfg, launch.words[launch.found[1]:], launch.found[2], lines, launch.cwd, include)
            out.configs.append(cfg)
            continue
        running = container_run.read_container_run(
            launch.words, lines, f"line {line} {container_run.engine_of(launch.words)} run",
            lambda word: word_commands(lexed, path, lines, word))
        if running is None or not running.names_vllm():
            continue
        cfg = to_config(running, path, text, launch.cwd, include)
        if cfg is None:
            notes.extend(running.notes)
            continue
        cfg.suppressions = _own(suppressions, running.lines)
        out.configs.append(cfg)
    if not out.configs:
        out.skipped = "; ".join(["no container it runs is vLLM's server", *notes])
    return out


def _own(suppressions: Dict[int, Set[str]], lines: Optional[Tuple[int, int]]) -> Dict[int, Set[str]]:
    """Return the ignore comments on a launch's own lines: another launch's are not its to use."""
    if lines is None:
        return dict(suppressions)
    return {line: codes for line, codes in suppressions.items() if lines[0] <= line <= lines[1]}


def _listed(names: List[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
