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


def console_script(site_dir: Path, python: str) -> Optional[Path]:
    """Return the copy's own `vllm` script when pip installed one that runs under `python`.

    pip lists the scripts it writes in the dist-info's RECORD (`../../../bin/vllm`); one whose
    shebang names another interpreter would run a copy lint did not judge, so it is not used.
    """
    for record in sorted(site_dir.glob("vllm-*.dist-info/RECORD")):
        try:
            rows = record.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for row in rows:
            name = row.split(",", 1)[0]
            if name.replace("\\", "/").split("/")[-2:] == ["bin", "vllm"]:
                script = (site_dir / name).resolve()
                if script.is_file() and _runs_under(script, python):
                    return script
    return None


def _runs_under(script: Path, python: str) -> bool:
    """Return whether `script`'s shebang (or pip's /bin/sh stub for long paths) is `python`."""
    try:
        with script.open("rb") as handle:
            head = handle.read(1024).decode(errors="replace").splitlines()[:2]
    except OSError:
        return False
    if not head or not head[0].startswith("#!"):
        return False
    interpreter = head[0][2:].strip().split(" ")[0]
    if interpreter == "/bin/sh" and len(head) > 1 and head[1].count('"') >= 2:
        interpreter = head[1].split('"')[1]  # '''exec' "/a/long/path/python" "$0" "$@"
    return bool(interpreter) and os.path.realpath(interpreter) == os.path.realpath(python)


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
        script = console_script(site_dir, python)
        module, function = console_entry(site_dir)
        # The copy's own script, else what it does, run by this interpreter: never whichever
        # `vllm` is first on PATH (on vendor images that is often another copy).
        head = [str(script), "serve"] if script else [
            python, "-c", f"import sys; from {module} import {function}; "
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
    os.execve(launch.argv[0], list(launch.argv), {**os.environ, **launch.env})
