"""`patchops launch`: lint the config against the copy that will run it, then run exactly that.

Users put one line in their start scripts. A launch that lint refuses never starts (the minutes
spent loading a model before vLLM rejects a flag are the cost we exist to save); one it passes
runs under the interpreter whose copy was linted, with the config's environment, so what was
checked is what runs.
"""

from __future__ import annotations

import hashlib
import os
import sys
from configparser import ConfigParser
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import yaml

from patchops.core.cache import cache_root
from patchops.core.errors import FileIOError, LocateError

# vLLM's console script before the dist-info says otherwise (editable and source installs).
DEFAULT_ENTRY = ("vllm.entrypoints.cli.main", "main")
API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"


@dataclass(frozen=True)
class Launch:
    """The process `launch` will exec: the interpreter, its argv and the environment it adds."""

    python: str
    head: Tuple[str, ...]        # the interpreter and what makes it run vLLM's server
    args: Tuple[str, ...]        # the server's arguments (after `serve` for the CLI)
    env: Dict[str, str]          # added to the current environment
    site_dir: Path               # the copy the command imports (and lint judged)
    entrypoint: str = "serve"

    @property
    def argv(self) -> Tuple[str, ...]:
        return self.head + self.args

    def shell(self) -> str:
        """Return the command as one line a shell runs the same way (for `--print`)."""
        return _shell_line(self.env, self.argv)

    def as_written(self) -> str:
        """Return the launch as users write it (`vllm serve ...`), the form lint reads."""
        program = ("vllm", "serve") if self.entrypoint == "serve" else ("python", "-m", API_SERVER_MODULE)
        return _shell_line(self.env, program + self.args)


def _shell_line(env: Dict[str, str], argv: Sequence[str]) -> str:
    import shlex

    return " ".join([f"{name}={shlex.quote(value)}" for name, value in env.items()]
                    + [shlex.quote(a) for a in argv])


def winning_copy(python: Optional[str]):
    """Return the copy `python` imports; launch needs an installed vLLM, not shipped facts."""
    from patchops.host.locate import locate

    location = locate(python=python)
    if location.winner is None:
        raise LocateError(f"{location.python} imports no vLLM copy, so there is nothing to "
                          "launch; pass --python with the interpreter that runs vLLM")
    return location.python, location.winner


def console_entry(site_dir: Path) -> Tuple[str, str]:
    """Return (module, function) of the `vllm` console script the copy's dist-info declares.

    0.6.x declares `vllm.scripts:main`, later releases `vllm.entrypoints.cli.main:main`.
    """
    for entry_points in sorted(site_dir.glob("vllm-*.dist-info/entry_points.txt")):
        parser = ConfigParser(interpolation=None)
        parser.read(entry_points)
        target = parser.get("console_scripts", "vllm", fallback=None)
        if target and ":" in target:
            module, function = target.strip().split(":", 1)
            return module.strip(), function.strip()
    return DEFAULT_ENTRY


def build_launch(cfg, python: str, site_dir: Path, extra: Sequence[str] = (),
                 config_dir: Optional[Path] = None) -> Launch:
    """Return the vLLM command `cfg` describes, run by `python`, with `extra` arguments last.

    A spec's `args:` reach vLLM as a `--config` file written to `config_dir` (default:
    `launch_config_dir()`).
    """
    env = {name: str(setting.value) for name, setting in cfg.env.items()}
    if cfg.entrypoint == "api_server":
        head = [python, "-m", API_SERVER_MODULE]
    else:
        module, function = console_entry(site_dir)
        # What the console script does, run by this interpreter rather than whichever `vllm`
        # is first on PATH (on vendor images that is often another copy).
        head = [python, "-c", f"import sys; from {module} import {function}; "
                              f"sys.argv[0] = 'vllm'; sys.exit({function}())", "serve"]
    return Launch(python=python, head=tuple(head), args=tuple(_arguments(cfg, config_dir) + list(extra)),
                  env=env, site_dir=site_dir, entrypoint=cfg.entrypoint)


def _arguments(cfg, config_dir: Optional[Path]) -> List[str]:
    """Return the arguments after `serve`: as written for commands, via `--config` for YAML."""
    if cfg.kind == "command":
        tokens = [str(token.value) for token in cfg.argv]
        if cfg.config_file is not None:
            tokens += ["--config", str(cfg.config_file.value)]
        return tokens
    model = [] if cfg.model is None else [str(cfg.model.value)]
    if model and cfg.entrypoint == "api_server":   # the api_server has no positional model
        model = ["--model"] + model
    if cfg.kind == "config":
        return model + ["--config", os.path.abspath(cfg.path)]
    if not cfg.config_settings:
        return model
    return model + ["--config", _write_args(cfg, config_dir or launch_config_dir())]


def launch_config_dir() -> Path:
    """Return where `launch` keeps the `--config` files of specs: `<cache>/launch/`.

    vLLM reads the file after patchops has exec'd into it, so nothing is left to delete it;
    a file is named by its content, so launching the same spec again reuses it.
    """
    return cache_root() / "launch"


def _write_args(cfg, folder: Path) -> str:
    """Write a spec's `args:` as the `--config` YAML vLLM will read, keys in the spec's order.

    The values are the ones YAML gave the linter, so vLLM reads what was linted (a YAML
    `false` that vLLM drops is dropped here too).
    """
    text = yaml.safe_dump({s.key: s.value for s in cfg.config_settings}, sort_keys=False)
    path = folder / f"args-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    try:
        if not path.is_file() or path.read_text() != text:
            folder.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            partial.write_text(text)
            os.replace(partial, path)
    except OSError as exc:
        raise FileIOError(f"{path}: cannot write the --config file for {cfg.path}'s args: "
                          f"{exc.strerror or exc}; set PATCHOPS_CACHE to a writable folder",
                          exc.errno) from None
    return str(path)


def exec_launch(launch: Launch) -> None:
    """Replace this process with the launch (never returns)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(launch.python, list(launch.argv), {**os.environ, **launch.env})
