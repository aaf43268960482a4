"""`docker run` / `podman run` lines (scripts, Markdown code blocks) -> a ContainerLaunch.

docker's own options come before the image and are skipped, the ones that take a value with
it (`-p 8000:8000`, `--name x`, `--shm-size=16g`, a cluster such as `-itp 8000:8000`); `-e K=V`
/ `--env K=V` set the environment (`-e K` and `--env-file` take values from where docker runs,
so they are named as unknown); `--gpus N` counts GPUs (`all` and `device=...` lists: see
_gpu_count); `--entrypoint X` replaces the image's entrypoint with the one program X. The first
word that is not an option is the image; every word after it goes to the container.
"""

from __future__ import annotations

import os
import re
from typing import Callable, List, Optional, Tuple

from patchops.lint.input.serve_config import Setting
from patchops.lint.input.container import ContainerLaunch
from patchops.lint.input.shell_lexer import Lines, Word

ENGINES = ("docker", "podman", "nerdctl")
_PREFIXES = ("sudo", "exec", "nohup", "time", "command")
# `docker run --help` (24.x) and `podman run --help` (4.x/5.x): the options that take a value.
VALUE_OPTIONS = frozenset("""
-a --attach --add-host --annotation --blkio-weight --blkio-weight-device --cap-add --cap-drop
--cgroup-parent --cgroupns --cidfile --cpu-count --cpu-percent --cpu-period --cpu-quota
--cpu-rt-period --cpu-rt-runtime -c --cpu-shares --cpus --cpuset-cpus --cpuset-mems --detach-keys
--device --device-cgroup-rule --device-read-bps --device-read-iops --device-write-bps
--device-write-iops --dns --dns-option --dns-opt --dns-search --domainname --entrypoint -e --env
--env-file --expose --gpus --group-add --health-cmd --health-interval --health-retries
--health-start-interval --health-start-period --health-timeout -h --hostname --ip --ip6 --ipc
--isolation --kernel-memory -l --label --label-file --link --link-local-ip --log-driver
--log-opt --mac-address -m --memory --memory-reservation --memory-swap --memory-swappiness
--mount --name --network --net --network-alias --net-alias --oom-score-adj --pid --pids-limit
--platform -p --publish --pull --restart --runtime --security-opt --shm-size --stop-signal
--stop-timeout --storage-opt --sysctl --tmpfs --ulimit -u --user --userns --uts -v --volume
--volume-driver --volumes-from -w --workdir --arch --authfile --cgroup-conf --cgroups
--chrootdirs --conmon-pidfile --decryption-key --env-merge --gidmap --hooks-dir --image-volume
--init-path --log-level --os --passwd-entry --personality --pidfile --pod --pod-id-file
--preserve-fds --rdt-class --requires --sdnotify --seccomp-policy --secret --subgidname
--subuidname --timeout --tz --uidmap --umask --unsetenv --variant
""".split())
_SHORT_VALUE = {option[1] for option in VALUE_OPTIONS if len(option) == 2}


def run_start(words: List[Word]) -> Optional[int]:
    """Return the index of the first word after `docker run` (`podman run`, `docker container run`)."""
    index = 0
    while index < len(words) and (words[index].assignment() or words[index].text in _PREFIXES):
        index += 1
    if index >= len(words) or os.path.basename(words[index].text) not in ENGINES:
        return None
    index += 1
    if index < len(words) and words[index].text == "container":
        index += 1
    if index < len(words) and words[index].text == "run":
        return index + 1
    return None


def is_container_run(words: List[Word]) -> bool:
    return run_start(words) is not None


def engine_of(words: List[Word]) -> str:
    """Return the engine a `... run` command calls (`docker`, `podman`, `nerdctl`)."""
    return next((os.path.basename(w.text) for w in words if os.path.basename(w.text) in ENGINES),
                "docker")


def read_container_run(words: List[Word], lines: Lines, name: str,
                       script: Callable[[Word], List[List[Word]]]) -> Optional[ContainerLaunch]:
    """Return the ContainerLaunch of a `docker run ...` command's words, None if it names no image."""
    index = run_start(words)
    if index is None:
        return None
    launch = ContainerLaunch(name=name, script=script,
                             lines=(lines.position(words[0].start)[0], lines.position(words[-1].start)[0]))
    while index < len(words):
        word = words[index]
        text = word.text
        if text == "--":
            index += 1
            break
        if not text.startswith("-") or text == "-":
            break
        option, value, taken = _option(words, index)
        if option in ("-e", "--env"):
            _env(launch, value, lines)
        elif option == "--env-file" and value is not None:
            launch.notes.append(f"{name}: `--env-file {value.text}` adds variables whose values "
                                "are not known")
        elif option == "--gpus" and value is not None:
            launch.gpus = _gpu_count(value, lines, launch)
        elif option == "--entrypoint" and value is not None:
            launch.command = [value]
        index += taken
    if index >= len(words):
        return None
    image = words[index]
    line, column = lines.position(image.start)
    launch.image = Setting(key="image", name="image", value=image.text, line=line, column=column,
                           raw=image.raw, source="cli")
    launch.args = list(words[index + 1:])
    return launch


def _option(words: List[Word], index: int) -> Tuple[str, Optional[Word], int]:
    """Return (the option, its value as a positioned word, how many words it took)."""
    word = words[index]
    text = word.text
    if text.startswith("--"):
        option, eq, rest = text.partition("=")
        if eq:
            return option, _tail(word, len(option) + 1), 1
        if option in VALUE_OPTIONS and index + 1 < len(words):
            return option, words[index + 1], 2
        return option, None, 1
    for position, letter in enumerate(text[1:], start=1):   # `-it`, `-itp 8000:8000`, `-eK=V`
        if letter in _SHORT_VALUE:
            option = "-" + letter
            if position + 1 < len(text):
                return option, _tail(word, position + 1), 1
            if index + 1 < len(words):
                return option, words[index + 1], 2
            return option, None, 1
    return text, None, 1


def _tail(word: Word, skip: int) -> Word:
    """Return the part of an option word after `skip` characters (`--env=A=1` -> `A=1`)."""
    exact = word.end >= word.start and word.raw == word.text
    return Word(word.text[skip:], word.start + skip if exact else word.start,
                word.end if exact else -1, word.raw[skip:] if exact else word.raw, word.quoted, word.unknown)


def _env(launch: ContainerLaunch, value: Optional[Word], lines: Lines) -> None:
    if value is None:
        return
    key, sep, text = value.text.partition("=")
    if not sep:
        launch.notes.append(f"{launch.name}: `-e {key}` is taken from the environment docker "
                            "runs in: its value is not known")
        return
    exact = value.end >= value.start and value.raw == value.text
    line, column = lines.position(value.start)
    launch.env[key] = Setting(key=key, name=key, value=text, line=line, column=column,
                              raw=value.raw, source="env",
                              key_span=(value.start, value.start + len(key)) if exact else None,
                              value_span=(value.start + len(key) + 1, value.end) if exact else None)


_DEVICES = re.compile(r"""^["']?device=([^"']*)["']?$""")


def _gpu_count(value: Word, lines: Lines, launch: ContainerLaunch) -> Optional[Setting]:
    """Return `--gpus 2` / `--gpus count=2` / `--gpus '"device=0,1"'` as a count; `all` gives none.

    `all` is every GPU of the host the container runs on, which need not be this machine.
    """
    text = value.text.strip()
    count: Optional[int] = None
    if text.isdigit():
        count = int(text)
    elif text.startswith("count="):
        count = int(text[6:]) if text[6:].isdigit() else None
    else:
        found = _DEVICES.match(text)
        if found:
            count = len([d for d in found.group(1).split(",") if d.strip()])
    if text == "all" or text == "count=all":
        launch.notes.append(f"{launch.name}: `--gpus all` is every GPU of the host it runs on: "
                            "the count is not known")
    if not count:
        return None
    line, column = lines.position(value.start)
    return Setting(key="--gpus", name="hardware.gpus", value=count, line=line, column=column,
                   raw=value.raw, source="cli")
