"""Compose files -> the services that run vLLM, each a ContainerLaunch.

Read as compose reads them (the compose specification): `entrypoint` replaces the image's
entrypoint and drops its default command; `command` replaces that command. A string `command`
or `entrypoint` is split into words shell-style (no shell runs it), a list is kept item by
item. Values are interpolated first, as compose_env.py does it (the process environment, the
`.env` beside the file); a variable set in neither is named as unknown and its word is not
judged. `environment` is a list of `KEY=value` or a mapping; a key without a value is taken
from the environment compose runs in. GPUs are the `deploy.resources.reservations.devices` count (or `gpus:`).
"""

from __future__ import annotations

from typing import Dict, List, Optional

from patchops.lint.input.compose_env import Variables, interpolate
from patchops.lint.input.serve_config import Setting
from patchops.lint.input.container import ContainerLaunch
from patchops.lint.input.scalar_words import scalar_commands, scalar_word, word_commands
from patchops.lint.input.shell_lexer import Lines, Word
from patchops.lint.input.yaml_nodes import YEntry, YMap, YNode, YScalar, YSeq
from patchops.lint.input.yaml_paths import child, entry, items, text_of

_SERVICE_KEYS = ("image", "build", "command", "entrypoint", "environment", "deploy", "ports")


def is_compose(root: Optional[YNode]) -> bool:
    """Return whether `root` is a compose file: `services:` mapping services to their settings."""
    services = child(root, "services")
    return isinstance(services, YMap) and bool(services.entries) and all(
        isinstance(e.value, YMap) and any(k in _SERVICE_KEYS for k in (x.key.text for x in e.value.entries))
        for e in services.entries)


def read_compose(root: YMap, text: str, path: str, variables: Variables) -> List[ContainerLaunch]:
    """Return a ContainerLaunch for each service of the compose file, interpolated with `variables`."""
    lines = Lines(text)
    services = child(root, "services")
    found = []
    for service in services.entries if isinstance(services, YMap) else []:
        if isinstance(service.value, YMap):
            found.append(_Service(service.key.text, text, path, lines, variables).read(service.value))
    return found


class _Service:
    """One service read: the variables it interpolates with, and those neither sets."""

    def __init__(self, name: str, text: str, path: str, lines: Lines, variables: Variables):
        self.launch = ContainerLaunch(name=f"service {name}")
        self.text, self.path, self.lines, self.variables = text, path, lines, variables
        self.unknown: List[str] = []

    def value(self, written: str) -> str:
        return interpolate(written, self.variables.get, self.unknown)[0]

    def read(self, node: YMap) -> ContainerLaunch:
        launch, text, path, lines = self.launch, self.text, self.path, self.lines
        image = entry(node, "image")
        if image is not None and text_of(image.value) is not None:
            launch.image = Setting(key="image", name="image", value=self.value(text_of(image.value)),  # type: ignore[arg-type]
                                   line=image.value.line, column=image.value.column,
                                   raw=image.value.raw, source="yaml")  # type: ignore[union-attr]
        if entry(node, "entrypoint") is not None:
            launch.command = self.words(child(node, "entrypoint"))
        launch.args = self.words(child(node, "command"))
        launch.env = _environment(child(node, "environment"), launch, self.value)
        launch.gpus = _gpus(node)
        launch.script = lambda word: [[self.word(w) for w in command]
                                      for command in word_commands(text, path, lines, word)]
        if node.start >= 0:
            launch.lines = (lines.position(node.start)[0] - 1, lines.position(max(node.end - 1, node.start))[0])
        for variable in dict.fromkeys(self.unknown):
            launch.notes.append(f"{launch.name}: `${{{variable}}}` is set neither here nor in the "
                                ".env beside the file: its value is not known")
        return launch

    def words(self, node: Optional[YNode]) -> List[Word]:
        if isinstance(node, YSeq):
            return [self.word(scalar_word(item)) for item in node.items if isinstance(item, YScalar)]
        if isinstance(node, YScalar) and isinstance(node.value, str):
            return [self.word(w) for command in
                    scalar_commands(self.text, self.path, self.lines, node, newlines=False, expand=False)
                    for w in command]
        return []

    def word(self, word: Word) -> Word:
        if "$" not in word.text:
            return word
        value, unknown = interpolate(word.text, self.variables.get, self.unknown)
        return Word(value, word.start, word.end, word.raw, word.quoted, word.unknown or unknown)


def _environment(node: Optional[YNode], launch: ContainerLaunch, interpolated) -> Dict[str, Setting]:
    env: Dict[str, Setting] = {}
    if isinstance(node, YMap):
        for item in node.entries:
            value = item.value
            if not isinstance(value, YScalar) or value.value is None:
                _from_host(launch, item.key.text)
                continue
            env[item.key.text] = Setting(
                key=item.key.text, name=item.key.text, value=interpolated(value.text),
                line=item.key.line, column=item.key.column, raw=value.raw, source="env",
                key_span=(item.key.start, item.key.end) if item.key.start >= 0 else None,
                value_span=(value.start, value.end) if value.start >= 0 else None)
    for item in items(node):
        written = text_of(item)
        if written is None:
            continue
        key, sep, value_text = written.partition("=")
        if not sep:
            _from_host(launch, key)
            continue
        word = scalar_word(item)  # type: ignore[arg-type]
        exact = word.end >= word.start
        env[key] = Setting(key=key, name=key, value=interpolated(value_text),
                           line=item.line, column=item.column, raw=item.raw, source="env",  # type: ignore[union-attr]
                           key_span=(word.start, word.start + len(key)) if exact else None,
                           value_span=(word.start + len(key) + 1, word.end) if exact else None)
    return env


def _from_host(launch: ContainerLaunch, name: str) -> None:
    launch.notes.append(f"{launch.name}: `{name}` is taken from the environment compose runs in: "
                        "its value is not known")


def _gpus(node: YMap) -> Optional[Setting]:
    """Return the GPU count a service reserves (`count`, or how many `device_ids`), None for `all`."""
    requests = [d for d in items(child(node, "deploy", "resources", "reservations", "devices"))
                if isinstance(d, YMap)]
    requests += [d for d in items(child(node, "gpus")) if isinstance(d, YMap)]
    for device in requests:
        count = entry(device, "count")
        ids = child(device, "device_ids")
        if count is not None and isinstance(count.value, YScalar) and isinstance(count.value.value, int) \
                and not isinstance(count.value.value, bool) and count.value.value > 0:
            return _count(count, count.value.value)
        if isinstance(ids, YSeq) and ids.items:
            return _count(entry(device, "device_ids"), len(ids.items))  # type: ignore[arg-type]
    return None


def _count(found: YEntry, value: int) -> Setting:
    node = found.value
    return Setting(key=found.key.text, name="hardware.gpus", value=value, line=node.line,
                   column=node.column, raw=getattr(node, "raw", None), source="yaml")
