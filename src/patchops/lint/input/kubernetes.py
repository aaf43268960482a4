"""Kubernetes manifests -> the containers that run vLLM, each a ContainerLaunch.

Every object with a pod template counts (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job,
CronJob, Pod, PodTemplate, a `List` of them) and KServe's InferenceService (its predictor's
containers) and ServingRuntime; a file holds any number of `---` documents. Kubernetes runs
`command` + `args` without a shell (each list item is one word) after expanding `$(VAR)` from
the container's own `env` (`$$` writes a `$`); a `valueFrom` or `envFrom` value lives in the
cluster, so it is named as unknown, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Set, Tuple

from patchops.lint.input.serve_config import Setting
from patchops.lint.input.container import ContainerLaunch
from patchops.lint.input.scalar_words import scalar_commands, scalar_word, word_commands
from patchops.lint.input.shell_lexer import Lines, Word
from patchops.lint.input.yaml_nodes import YEntry, YMap, YNode, YScalar, YSeq
from patchops.lint.input.yaml_paths import child as _get, entry as _entry, items as _items, text_of as _text

# kind -> the keys from the object down to its pod spec
POD_SPECS: Dict[str, Tuple[str, ...]] = {
    "Deployment": ("spec", "template", "spec"), "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",), "PodTemplate": ("template", "spec"),
    "InferenceService": ("spec", "predictor"), "ServingRuntime": ("spec",),
}
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


@dataclass
class Manifest:
    """What a manifest file holds: its objects (`Kind/name`) and the containers in their pods."""

    objects: List[str] = field(default_factory=list)
    launches: List[ContainerLaunch] = field(default_factory=list)


def is_manifest(documents: List[Optional[YNode]]) -> bool:
    """Return whether any document is a Kubernetes object (`apiVersion` and `kind` at its top)."""
    return any(isinstance(doc, YMap) and {"apiVersion", "kind"} <= set(_keys(doc)) for doc in documents)


def read_manifest(documents: List[Optional[YNode]], text: str, path: str) -> Manifest:
    """Return every object of the documents and a ContainerLaunch for each of their containers."""
    found = Manifest()
    lines = Lines(text)
    for doc in documents:
        for obj in _objects(doc):
            kind = _text(_get(obj, "kind")) or "?"
            name = _text(_get(obj, "metadata", "name")) or "?"
            found.objects.append(f"{kind}/{name}")
            spec = _get(obj, *POD_SPECS[kind]) if kind in POD_SPECS else None
            if not isinstance(spec, YMap):
                continue
            for container in _items(_get(spec, "containers")):
                if isinstance(container, YMap):
                    found.launches.append(_container(container, f"{kind}/{name}", text, path, lines))
            model = _get(spec, "model") if kind == "InferenceService" else None
            if isinstance(model, YMap) and _get(model, "image") is not None:
                found.launches.append(_container(model, f"{kind}/{name}", text, path, lines))
    return found


def _objects(doc: Optional[YNode]) -> Iterator[YMap]:
    if not isinstance(doc, YMap):
        return
    if _text(_get(doc, "kind")) == "List":
        for item in _items(_get(doc, "items")):
            yield from _objects(item)
    elif "kind" in _keys(doc):
        yield doc


def _container(node: YMap, owner: str, text: str, path: str, lines: Lines) -> ContainerLaunch:
    name = _text(_get(node, "name")) or "?"
    launch = ContainerLaunch(name=f"{owner} container {name}")
    image = _entry(node, "image")
    if image is not None and isinstance(image.value, YScalar) and image.value.value is not None:
        launch.image = _setting(image, "image", str(image.value.value))
    cluster: Set[str] = set()
    launch.env = _env(node, launch, cluster)
    values = {key: str(setting.value) for key, setting in launch.env.items()}
    if _get(node, "envFrom") is not None:
        cluster.add("*")

    def expand(word: Word) -> Word:
        return _expanded(word, values, cluster)

    command = _get(node, "command")
    if isinstance(command, YSeq):
        launch.command = [expand(scalar_word(item)) for item in command.items
                          if isinstance(item, YScalar)]
    args = _get(node, "args")
    if isinstance(args, YSeq):
        launch.args = [expand(scalar_word(item)) for item in args.items
                       if isinstance(item, YScalar)]
    by_start = {item.start: item for seq in (command, args) if isinstance(seq, YSeq)
                for item in seq.items if isinstance(item, YScalar)}

    def script(word: Word) -> List[List[Word]]:
        item = by_start.get(word.start) or by_start.get(word.start - 1)
        if item is None:
            return word_commands(text, path, lines, word, values)
        return scalar_commands(text, path, lines, item, values)

    launch.script = script
    launch.gpus = _gpus(node)
    if node.start >= 0:
        launch.lines = (lines.position(node.start)[0], lines.position(max(node.end - 1, node.start))[0])
    return launch


def _expanded(word: Word, values: Dict[str, str], cluster: Set[str]) -> Word:
    """Expand `$(VAR)` from the container's env as the kubelet does.

    A reference to no variable stays as written (the kubelet leaves it so); one to a variable
    whose value lives in the cluster (`valueFrom`, or any name once `envFrom` is there) makes
    the word's value unknown.
    """
    if "$" not in word.text:
        return word
    unknown = False

    def one(match: "re.Match[str]") -> str:
        nonlocal unknown
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        if name not in values and (name in cluster or "*" in cluster):
            unknown = True
        return values.get(name, match.group(0))

    text = _REFERENCE.sub(one, word.text)
    return Word(text, word.start, word.end, word.raw, word.quoted, word.unknown or unknown)


def _env(node: YMap, launch: ContainerLaunch, cluster: Set[str]) -> Dict[str, Setting]:
    """Return the container's `env` values; name in `cluster` those whose value lives there."""
    env: Dict[str, Setting] = {}
    for item in _items(_get(node, "env")):
        if not isinstance(item, YMap):
            continue
        name_entry = _entry(item, "name")
        name = _text(name_entry.value) if name_entry is not None else None
        if not name or name_entry is None:
            continue
        value = _entry(item, "value")
        if value is None:
            if _get(item, "valueFrom") is not None:
                cluster.add(name)
                launch.notes.append(f"{launch.name}: `{name}` comes from `valueFrom` "
                                    "(a Secret, ConfigMap or field): its value is not known")
            continue
        node_value = value.value
        written = "" if not isinstance(node_value, YScalar) or node_value.value is None else node_value.text
        env[name] = Setting(key=name, name=name, value=written, line=name_entry.value.line,
                            column=name_entry.value.column,
                            raw=node_value.raw if isinstance(node_value, YScalar) else None,
                            source="env",
                            key_span=(name_entry.value.start, name_entry.value.end)
                            if name_entry.value.start >= 0 else None,
                            value_span=(node_value.start, node_value.end)
                            if isinstance(node_value, YScalar) and node_value.start >= 0 else None)
    for source in _items(_get(node, "envFrom")):
        if isinstance(source, YMap):
            ref = next((e.key.text for e in source.entries if e.key.text.endswith("Ref")), "envFrom")
            launch.notes.append(f"{launch.name}: `envFrom` ({ref}) adds variables whose values "
                                "are not known")
    return env


def _gpus(node: YMap) -> Optional[Setting]:
    """Return the container's GPU count: its `limits` (what it gets), else its `requests`."""
    for section in ("limits", "requests"):
        table = _get(node, "resources", section)
        if not isinstance(table, YMap):
            continue
        for entry in table.entries:
            if entry.key.text in GPU_RESOURCES and isinstance(entry.value, YScalar):
                try:
                    count = int(str(entry.value.value).strip())
                except ValueError:
                    continue
                if count > 0:
                    return _setting(entry, "hardware.gpus", count)
    return None


def _setting(entry: YEntry, name: str, value) -> Setting:
    node = entry.value
    raw = node.raw if isinstance(node, YScalar) else None
    span = (node.start, node.end) if node.start >= 0 else None
    return Setting(key=entry.key.text, name=name, value=value, line=node.line, column=node.column,
                   raw=raw, source="yaml", key_span=(entry.key.start, entry.key.end)
                   if entry.key.start >= 0 else None, value_span=span)


def _keys(node: YMap) -> List[str]:
    return [e.key.text for e in node.entries]
