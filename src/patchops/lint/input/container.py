"""A container that runs vLLM, however a deploy file spells it, -> one ServeConfig.

Kubernetes, compose, `docker run` and Dockerfiles say the same four things: the image, what
replaces its entrypoint (k8s `command`, compose `entrypoint`, `--entrypoint`, `ENTRYPOINT`),
the arguments after it (k8s `args`, compose `command`, the words after the image, `CMD`) and
the environment. Their readers fill a ContainerLaunch; this module finds vLLM's server in it
and reads the server's words as a launch command is read (launch_command.read_launch), each
word positioned in the deploy file itself.

The official image's entrypoint is `python3 -m vllm.entrypoints.openai.api_server` in older
releases and `vllm serve` in newer ones (vllm-project/vllm docker/Dockerfile, target
`vllm-openai`, at 0000977e and at dead20ba). The two read the same flags; only `vllm serve`
takes the model as its first word. So the arguments decide: a first word that is not an option
is the serve form, else the api_server form (`--model X`), and the input's notes say so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from patchops.lint.input.serve_config import ServeConfig, Setting
from patchops.lint.input.images import parse_image, release_of
from patchops.lint.input.launch_command import LAUNCH_ANYWHERE, find_launch, is_option, read_launch
from patchops.lint.input.shell_lexer import Lines, Word

SHELLS = ("sh", "bash", "dash", "ash", "zsh")


@dataclass
class ContainerLaunch:
    """What one container runs, as a deploy file states it; words positioned in that file.

    `command` is None when the image's own entrypoint runs; `script` lexes the text of a
    `sh -c SCRIPT` word into commands (its reader knows where that word is written).
    """

    name: str
    image: Optional[Setting] = None
    command: Optional[List[Word]] = None
    args: List[Word] = field(default_factory=list)
    env: Dict[str, Setting] = field(default_factory=dict)
    gpus: Optional[Setting] = None
    notes: List[str] = field(default_factory=list)
    script: Optional[Callable[[Word], List[List[Word]]]] = None
    lines: Optional[Tuple[int, int]] = None      # first and last line it is written on

    def names_vllm(self) -> bool:
        """Return whether the image is vLLM's or the command runs vLLM's server."""
        if self.image is not None and parse_image(str(self.image.value)).names_vllm:
            return True
        return any(LAUNCH_ANYWHERE.search(word.text) or os.path.basename(word.text) == "vllm"
                   for word in (self.command or []) + self.args)


def server_words(launch: ContainerLaunch) -> Optional[Tuple[List[Word], str]]:
    """Return (the words after `serve` or the api_server module, the entrypoint), or None.

    None means the container runs something else; a note on `launch` says what.
    """
    if launch.command is None:
        image = parse_image(str(launch.image.value)) if launch.image is not None else None
        if image is None or not image.official:
            shown = f"`{image.reference}`" if image else "the image"
            launch.notes.append(f"{launch.name}: sets no command and {shown} is not vLLM's own "
                                "image, so what it runs is not known; nothing was linted")
            return None
        serve = bool(launch.args) and not is_option(launch.args[0].text)
        return list(launch.args), "serve" if serve else "api_server"
    words = launch.command + launch.args
    found = _launch_in(words, launch)
    if found is None:
        shown = " ".join(word.text for word in words[:3]) or "nothing"
        launch.notes.append(f"{launch.name}: runs `{shown}`, not vLLM's server; nothing was linted")
    return found


def _launch_in(words: List[Word], launch: ContainerLaunch) -> Optional[Tuple[List[Word], str]]:
    """Find vLLM's server in `words`, or in the script of `sh -c SCRIPT`."""
    found = find_launch(words)
    if found is not None:
        return words[found[1]:], found[2]
    if words and os.path.basename(words[0].text) in SHELLS and launch.script is not None:
        for index, word in enumerate(words[1:-1], start=1):
            if word.text.startswith("-") and not word.text.startswith("--") and "c" in word.text:
                for command in launch.script(words[index + 1]):
                    inner = find_launch(command)
                    if inner is not None:
                        return command[inner[1]:], inner[2]
                break
    return None


def to_config(launch: ContainerLaunch, path: str, text: str, base_dir: str,
              include: Callable[[str], ServeConfig]) -> Optional[ServeConfig]:
    """Return the ServeConfig of the vLLM server `launch` runs, None when it runs none."""
    found = server_words(launch)
    if found is None:
        return None
    words, entrypoint = found
    cfg = ServeConfig(path=path, kind="command", lines=text.splitlines(), text=text,
                      launch_name=launch.name, notes=launch.notes)
    cfg.env.update(launch.env)
    cfg.container = str(launch.image.value) if launch.image is not None else "a container"
    if launch.gpus is not None:
        cfg.context["hardware.gpus"] = launch.gpus
    if launch.image is not None:
        version, why = release_of(parse_image(str(launch.image.value)))
        if version is not None:
            image = launch.image
            cfg.context["vllm.image"] = Setting(key="image", name="vllm.image", value=version,
                                                line=image.line, column=image.column,
                                                raw=image.raw, source="yaml")
        else:
            launch.notes.append(f"{launch.name}: {why}")
    read_launch(cfg, words, entrypoint, Lines(text), base_dir, include)
    return cfg
